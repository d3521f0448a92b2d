// A shard worker thread: opens its shard (actors/shard/shard.ts) and answers the node's
// messages (actors/shard/messages.ts). Samples are taken in the order they arrive; questions
// run side by side, each partition's in its mailbox order.
import { parentPort, workerData } from 'node:worker_threads';
import type { ShardMethod, ShardMethods, ShardNotice, ShardReply, ShardRequest, ShardSetup } from './messages.js';
import { Shard } from './shard.js';
import { toWireError } from './wire-error.js';
import { heapShare } from '../../model/heap.js';

const port = parentPort!;
const setup = workerData as ShardSetup;
const send = (reply: ShardReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);

type Handler = (...args: never[]) => unknown;

/** How often the worker says how full its heap is; while it takes writes, as often as this. */
const HEAP_REPORT_MS = 1000;
const HEAP_REPORT_BUSY_MS = 100;

/** Closes the store before the worker ends on an error, so a restarted shard can open it again in this process. */
function exitOnFailure(shard: Shard): void {
  let closing = false;
  const fail = (error: unknown) => {
    if (closing) return;
    closing = true;
    send({ type: 'fault', partition: -1, error: toWireError(error) });
    const timeout = new Promise((r) => setTimeout(r, 5_000).unref());
    void Promise.race([shard.close(), timeout]).finally(() => process.exit(1));
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
}

async function main(): Promise<void> {
  let shard: Shard;
  try {
    shard = await Shard.open(setup, {
      applied: (records) => send({ type: 'applied', records }),
      fault: (partition, error) => send({ type: 'fault', partition, error: toWireError(error) }),
    });
  } catch (error) {
    send({ type: 'failed', error: toWireError(error) });
    return;
  }
  exitOnFailure(shard);
  // A heap filling with new series must be seen before it is full (actors/node/admission.ts sheds
  // writes past its share): a timer alone fires late on a worker busy applying writes.
  let reported = 0;
  const reportHeap = () => {
    reported = Date.now();
    send({ type: 'heap', share: heapShare(setup.config.shardHeapMb) });
  };
  setInterval(reportHeap, HEAP_REPORT_MS).unref();
  const answer = async ({ id, method, args }: ShardRequest): Promise<void> => {
    try {
      const handler = shard[method as ShardMethod] as unknown as Handler;
      const value = await handler.apply(shard, args as never[]);
      send({ type: 'answer', id, ok: true, value }, transferablesOf(value));
      if (method === 'stop') port.close();
    } catch (error) {
      send({ type: 'answer', id, ok: false, error: toWireError(error) });
    }
  };
  port.on('message', (msg: ShardNotice | ShardRequest) => {
    if ('type' in msg) {
      if (msg.type === 'declare') shard.declare(msg.lane, msg.epoch, msg.fresh);
      else shard.apply(msg.seq, msg.names, msg.parts);
      if (Date.now() - reported >= HEAP_REPORT_BUSY_MS) reportHeap();
    } else void answer(msg);
  });
  send({ type: 'ready' });
}

/** Typed arrays of an answer (itself, its elements or its top-level fields) travel without a copy. */
function transferablesOf(value: unknown): ArrayBuffer[] {
  const whole = (v: unknown): v is ArrayBufferView => ArrayBuffer.isView(v) && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength;
  if (whole(value)) return [value.buffer as ArrayBuffer];
  if (typeof value !== 'object' || value === null) return [];
  const buffers = (Array.isArray(value) ? value : Object.values(value)).filter(whole).map((v) => v.buffer as ArrayBuffer);
  // An ArrayBuffer listed twice cannot be transferred.
  return [...new Set(buffers)];
}

// Keeps the contract honest: every method the node may ask is one the shard has.
export type Answered = { [K in keyof ShardMethods]: Shard[K] extends (...args: never[]) => unknown ? true : never };

void main();
