// A worker thread Lua extension calls run in, one at a time. Every call gets a fresh Lua VM
// (a new WebAssembly instance), built while the worker waits, so a VM left broken (a stack
// overflow inside the WebAssembly module) cannot poison later calls; the main thread ends the
// worker only when a call stays stuck past its deadline (extensions/runner.ts).
import { parentPort } from 'node:worker_threads';
import type { LuaEngine } from 'wasmoon';
import { createSandboxEngine, runInSandbox, type SandboxLimits } from './sandbox.js';

/** What the main thread sends to start the call. */
export interface CallRequest {
  limits: SandboxLimits;
  globals: Record<string, unknown>;
  driver: string;
  /** Names of `__api` functions answered by the main thread. */
  api: string[];
}

export type WorkerMessage =
  /** The VM is built and the call's Lua starts now: its deadline runs from here. */
  | { type: 'running' }
  | { type: 'api'; id: number; op: string; args: unknown[] }
  | { type: 'done'; ok: true; json: string }
  | { type: 'done'; ok: false; error: string };

export type MainMessage = { type: 'start'; request: CallRequest } | { type: 'reply'; id: number; ok: boolean; value?: unknown; error?: string };


const port = parentPort!;
const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
let nextId = 1;

function apiProxy(names: string[]): Record<string, (...args: unknown[]) => Promise<unknown>> {
  const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const op of names) {
    out[op] = (...args) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        port.postMessage({ type: 'api', id, op, args: JSON.parse(JSON.stringify(args)) as unknown[] } satisfies WorkerMessage);
      });
  }
  return out;
}

// Built while the worker waits, so a call starts without compiling WebAssembly; each call uses one.
let engine: Promise<LuaEngine> = createSandboxEngine();

async function run(request: CallRequest): Promise<WorkerMessage> {
  try {
    const globals = { ...request.globals, __api: apiProxy(request.api) };
    const lua = await engine;
    engine = createSandboxEngine();
    port.postMessage({ type: 'running' } satisfies WorkerMessage);
    const result = await runInSandbox<unknown>(lua, request.limits, globals, request.driver);
    return { type: 'done', ok: true, json: JSON.stringify(result === undefined ? null : result) };
  } catch (error) {
    return { type: 'done', ok: false, error: String((error as Error)?.message ?? error) };
  } finally {
    // Replies to a call's last requests may still arrive: they belong to no one now.
    waiting.clear();
  }
}


port.on('message', (msg: MainMessage) => {
  if (msg.type === 'start') {
    void run(msg.request).then((done) => port.postMessage(done));
    return;
  }
  const w = waiting.get(msg.id);
  waiting.delete(msg.id);
  if (msg.ok) w?.resolve(msg.value);
  else w?.reject(new Error(msg.error));
});
