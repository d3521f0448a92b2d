// Runs one sandboxed Lua call in a worker thread (extensions/worker.ts) and answers its
// `ferrite.*` requests here, where the node is. Workers are reused: each call gets a fresh
// Lua VM inside an idle worker, and the in-VM hook ends a call at its deadline, so a timed-out
// call returns its worker to the pool like any other. Ending a worker thread while V8 compiles
// in the background for it can abort the whole process (a Node assertion in
// NodePlatform::ForIsolate), so workers are ended only when unavoidable: a call that does not
// answer within a grace past its deadline (stuck inside one C call of the VM), and idle workers
// beyond the pool's size, which run nothing.
import { Worker } from 'node:worker_threads';
import type { SandboxLimits } from './sandbox.js';
import type { CallRequest, MainMessage, WorkerMessage } from './worker.js';

export type ApiHandlers = Record<string, (...args: any[]) => Promise<unknown>>;

export type CallOutcome = { ok: true; json: string } | { ok: false; error: string } | { ok: false; timedOut: true };

/** A worker that has not built its VM by then is considered broken. */
const STARTUP_LIMIT_MS = 30_000;
/** JS heap of one call's worker; Lua's own memory is capped separately (luaMemoryBytes). */
const WORKER_HEAP_MB = 256;
/** Idle workers kept for the next calls; past it a worker is ended once it has been idle a while. */
const MAX_IDLE = 4;
/** How long a worker beyond MAX_IDLE stays idle before it is ended (its next VM long built by then). */
const SURPLUS_IDLE_MS = 30_000;
/** How long past its deadline a call may take to answer before its worker is given up. */
const RUNAWAY_GRACE_MS = 1_000;

const idle: Worker[] = [];
/** Workers that have run a call (a call in one of these ran in a reused worker). */
const used = new WeakSet<Worker>();
/** Workers ended because a call ran away (reported in the README's stress figures). */
export const runnerFigures = { spawned: 0, reused: 0, runaway: 0 };

function spawn(): Worker {
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    stdout: true,
    stderr: true,
  });
  worker.unref();
  runnerFigures.spawned++;
  return worker;
}

function takeWorker(): Worker {
  const worker = idle.pop();
  if (worker === undefined) {
    // Keep one warm for the next call: starting a thread and WebAssembly takes a while.
    if (idle.length === 0) idle.push(spawn());
    const fresh = spawn();
    used.add(fresh);
    return fresh;
  }
  if (used.has(worker)) runnerFigures.reused++;
  used.add(worker);
  if (idle.length === 0) idle.push(spawn());
  return worker;
}

function release(worker: Worker): void {
  worker.unref();
  idle.push(worker);
  if (idle.length > MAX_IDLE) setTimeout(endSurplus, SURPLUS_IDLE_MS).unref();
}

/** Ends the workers idle beyond MAX_IDLE, oldest first (they have built their next VM long ago). */
function endSurplus(): void {
  for (const worker of idle.splice(0, Math.max(0, idle.length - MAX_IDLE))) void worker.terminate();
}

/** Ends the idle workers (at node shutdown). */
export async function stopSpareWorker(): Promise<void> {
  const all = idle.splice(0);
  await Promise.all(all.map((w) => w.terminate()));
}

export function runInWorker(limits: SandboxLimits, globals: Record<string, unknown>, driver: string, api: ApiHandlers = {}): Promise<CallOutcome> {
  const worker = takeWorker();
  worker.ref();
  return new Promise<CallOutcome>((resolve) => {
    let settled = false;
    const onMessage = (msg: WorkerMessage) => {
      if (msg.type === 'done') return finish(msg.ok ? { ok: true, json: msg.json } : { ok: false, error: msg.error }, true);
      if (msg.type === 'api') return void answer(worker, api, msg);
      // Running: the in-VM hook answers at the deadline; past a grace the call is stuck in C.
      clearTimeout(timer);
      timer = setTimeout(() => {
        runnerFigures.runaway++;
        finish({ ok: false, timedOut: true }, false);
      }, limits.timeoutMs + RUNAWAY_GRACE_MS);
    };
    const onError = (error: Error) => finish({ ok: false, error: error.message }, false);
    const onExit = (code: number) => finish({ ok: false, error: `the extension's worker exited (${code})` }, false);
    const finish = (outcome: CallOutcome, reusable: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (reusable) release(worker);
      else void worker.terminate();
      resolve(outcome);
    };
    let timer = setTimeout(() => finish({ ok: false, error: 'the extension sandbox did not start' }, false), STARTUP_LIMIT_MS);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
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
    /* the worker is gone (ended after running away) */
  }
}
