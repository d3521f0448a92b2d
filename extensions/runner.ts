// Runs one sandboxed Lua call in its own worker thread (extensions/worker.ts) and answers
// its `ferrite.*` requests here, where the node is. The deadline is enforced from outside:
// past it the worker is terminated, so the timeout answer always comes. One spare worker is
// kept warm so a call does not wait for a thread and WebAssembly to start.
import { Worker } from 'node:worker_threads';
import type { SandboxLimits } from './sandbox.js';
import type { CallRequest, MainMessage, WorkerMessage } from './worker.js';

export type ApiHandlers = Record<string, (...args: any[]) => Promise<unknown>>;

export type CallOutcome = { ok: true; json: string } | { ok: false; error: string } | { ok: false; timedOut: true };

/** A worker that has not built its VM by then is considered broken. */
const STARTUP_LIMIT_MS = 30_000;
/** JS heap of one call's worker; Lua's own memory is capped separately (luaMemoryBytes). */
const WORKER_HEAP_MB = 256;

let spare: Worker | null = null;

function spawn(): Worker {
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    stdout: true,
    stderr: true,
  });
  worker.unref();
  return worker;
}

function takeWorker(): Worker {
  const worker = spare ?? spawn();
  spare = spawn();
  return worker;
}

/** Terminates the spare worker (at node shutdown). */
export async function stopSpareWorker(): Promise<void> {
  const w = spare;
  spare = null;
  await w?.terminate();
}

export function runInWorker(limits: SandboxLimits, globals: Record<string, unknown>, driver: string, api: ApiHandlers = {}): Promise<CallOutcome> {
  const worker = takeWorker();
  worker.ref();
  return new Promise<CallOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: CallOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(outcome);
    };
    let timer = setTimeout(() => finish({ ok: false, error: 'the extension sandbox did not start' }), STARTUP_LIMIT_MS);
    worker.on('message', (msg: WorkerMessage) => {
      if (msg.type === 'done') return finish(msg.ok ? { ok: true, json: msg.json } : { ok: false, error: msg.error });
      if (msg.type === 'api') return void answer(worker, api, msg);
      // A little grace beyond the Lua deadline lets the in-VM hook answer first when it can.
      clearTimeout(timer);
      timer = setTimeout(() => finish({ ok: false, timedOut: true }), limits.timeoutMs + 50);
    });
    worker.on('error', (error) => finish({ ok: false, error: error.message }));
    worker.on('exit', (code) => finish({ ok: false, error: `the extension's worker exited (${code})` }));
    const request: CallRequest = { limits, globals, driver, api: Object.keys(api) };
    worker.postMessage({ type: 'start', request } satisfies MainMessage);
  });
}

async function answer(worker: Worker, api: ApiHandlers, msg: Extract<WorkerMessage, { type: 'api' }>): Promise<void> {
  let reply: MainMessage;
  try {
    reply = { type: 'reply', id: msg.id, ok: true, value: await api[msg.op]!(...msg.args) };
  } catch (error) {
    reply = { type: 'reply', id: msg.id, ok: false, error: (error as Error).message };
  }
  try {
    worker.postMessage(reply);
  } catch {
    /* the worker is gone (terminated at its deadline) */
  }
}
