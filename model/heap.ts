// How full this thread's V8 heap is: what memory pressure is judged by (actors/node/admission.ts),
// and how much of it is left (a shard's index snapshot needs room: storage/shard-storage.ts).
import { getHeapStatistics, type HeapInfo } from 'node:v8';

/**
 * The heap in use as a share of its limit. `limitMb`: the old generation limit a worker was
 * started with (its `resourceLimits`), which is what it ends out of memory at; V8's
 * `heap_size_limit` does not show it (a worker limited to 64 MiB reports 256).
 */
export function heapShare(limitMb = 0): number {
  const h = getHeapStatistics();
  return h.used_heap_size / heapLimit(h, limitMb);
}

/** Bytes of heap this thread may still use before it ends out of memory (`limitMb` as for `heapShare`). */
export function heapRoom(limitMb = 0): number {
  const h = getHeapStatistics();
  return heapLimit(h, limitMb) - h.used_heap_size;
}

function heapLimit(h: HeapInfo, limitMb: number): number {
  return limitMb > 0 ? limitMb * 2 ** 20 : h.heap_size_limit;
}
