// Numeric samples as rollup math reads them: two Float64Arrays instead of a Series' JS arrays.
// A day of one metric at 10 s is 8640 samples; a 100-stream read computes periods from 864 000
// of them, and as JS arrays (nulls make them arrays of boxed numbers) decoding, concatenating
// and collecting them cost more than the math. Null samples are left out: rollup math skips
// them (they carry nothing), so a dense series holds only samples with a number. Bigints
// become the nearest double, as the math has always taken them.
import { blockHeader, decodeNumericBlockInto } from './codec/numeric-block.js';
import { lowerBound, type Series } from './series.js';
import { BufferPool } from './buffer-pool.js';
import { scratchFloat64 } from './scratch.js';
import type { NumericValue } from './types.js';

/** Ascending ms timestamps, one sample per stamp, non-null values as doubles (NaN and ±∞ kept). */
export interface DenseSeries {
  ts: Float64Array;
  values: Float64Array;
}

export const emptyDense = (): DenseSeries => ({ ts: new Float64Array(0), values: new Float64Array(0) });

/** Smallest pooled buffer, in samples (a day at 60 s), and the largest (1 MiB: a week at 5 s); larger ones are not kept. */
const POOL_MIN = 1 << 11;
const POOL_MAX = 1 << 17;
/**
 * Idle buffers kept per size: at most ≈ 8 MiB in all. A value-only read holds its buffers only
 * between its decode and its booking (no await between), a read of rates across the await of
 * its carry: a few at a time, however many streams a read names.
 */
const POOL_IDLE = 4;

/**
 * Buffers for decoded samples, reused. A read decodes a metric-day (138 KB at 10 s), books its
 * periods and is done with it: allocated anew, those buffers made V8 run a full mark-compact per
 * 100-stream read to free them. `denseOfParts` takes its arrays from here, and whoever read the
 * series hands them back (`releaseDense`) once nothing looks at them any more; arrays from
 * elsewhere are ignored. One pool per thread (a module instance per worker).
 */
const buffers = new BufferPool(POOL_MIN * 8, POOL_MAX * 8, POOL_IDLE);

/**
 * Below this many samples a series' arrays are not pooled: a pooled buffer is at least POOL_MIN
 * samples (16 KiB), and a read of many short series (1000 series of 11 samples just written,
 * bench:scale) spent most of its decoding time taking two of those a series.
 */
const UNPOOLED_MAX = 256;

const pool = {
  // Short ones are views of a scratch slab (model/scratch.ts; `give` ignores them): a series
  // read dies with its read, and an array with memory of its own costs ≈ 1 µs to make.
  take: (n: number): Float64Array => (n <= UNPOOLED_MAX ? scratchFloat64(n) : new Float64Array(buffers.take(n * 8, false), 0, n)),
  give: (a: Float64Array): void => buffers.give(a.buffer as ArrayBuffer),
};

/** Hands a series' buffers back for reuse: call it once nothing reads `s` (or any view of it) any more. */
export function releaseDense(s: DenseSeries): void {
  pool.give(s.ts);
  pool.give(s.values);
}

/** The non-null samples of a normalized series. */
export function denseOf(s: Series<NumericValue>): DenseSeries {
  const n = s.ts.length;
  const ts = new Float64Array(n);
  const values = new Float64Array(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const v = s.values[i];
    if (v === null || v === undefined) continue;
    ts[at] = s.ts[i]!;
    values[at++] = typeof v === 'number' ? v : Number(v);
  }
  return at === n ? { ts, values } : { ts: ts.subarray(0, at), values: values.subarray(0, at) };
}

/** Samples [from, to) by index: views, not copies. */
export function denseSlice(s: DenseSeries, from: number, to: number): DenseSeries {
  return from === 0 && to === s.ts.length ? s : { ts: s.ts.subarray(from, to), values: s.values.subarray(from, to) };
}

/** True when every timestamp is greater than the one before (no stamp repeats). */
export function strictlyAscending(ts: Float64Array): boolean {
  for (let i = 1; i < ts.length; i++) if (!(ts[i]! > ts[i - 1]!)) return false;
  return true;
}

/** The samples with start <= ts < end: views, not copies. */
export function denseRange(s: DenseSeries, start: number, end: number): DenseSeries {
  return denseSlice(s, lowerBound(s.ts, start), lowerBound(s.ts, end));
}

/** An open buffer's numeric samples as `denseOfParts` takes them. */
export interface DenseSource {
  /** Samples it holds (at most what `into` writes). */
  readonly count: number;
  /**
   * Writes its samples into ts[at..] and values[at..] as appended; returns the new end, or -1
   * when it cannot be read densely (a null, per-sample generations): the general read then.
   */
  into(ts: Float64Array, values: Float64Array, at: number): number;
}

/** A series in arrays as a dense source: densely only when it holds neither a null nor generations. */
export function seriesSource(s: Series<NumericValue>): DenseSource {
  return {
    count: s.ts.length,
    into(ts, values, at) {
      if (s.gens !== undefined) return -1;
      for (let i = 0; i < s.ts.length; i++) {
        const v = s.values[i];
        // A null sharing a stamp with a number is a conflict the final check could not see.
        if (v === null || v === undefined) return -1;
        ts[at] = s.ts[i]!;
        values[at++] = typeof v === 'number' ? v : Number(v);
      }
      return at;
    },
  };
}

/**
 * Encoded numeric blocks (key order) and then open buffers' samples, decoded straight into one
 * dense series (pooled buffers: `releaseDense` it when done), when together they hold no stamp
 * twice and no per-sample generation (the usual case: windows in order, one sample per stamp).
 * Null otherwise: duplicates need the conflict resolver, which the general read (concatenate,
 * normalize) applies.
 */
export function denseOfParts(blocks: readonly Uint8Array[], open: readonly DenseSource[]): DenseSeries | null {
  // Stamps must ascend across the blocks, null samples' included (a null sharing a stamp with a
  // number is a conflict too); a block's own stamps ascend (it was normalized when sealed).
  let capacity = 0;
  let last = -Infinity;
  for (const b of blocks) {
    const head = blockHeader(b);
    if (head.count === 0) continue;
    if (!(head.firstTs > last)) return null;
    last = head.lastTs;
    capacity += head.count;
  }
  for (const s of open) capacity += s.count;
  const ts = pool.take(capacity);
  const values = pool.take(capacity);
  let at = 0;
  for (const b of blocks) {
    at = decodeNumericBlockInto(b, ts, values, at);
    if (at < 0) return refused({ ts, values });
  }
  // Open buffers hold no nulls when they read densely, so the check below sees all their stamps;
  // the first must follow the blocks' last, a null's included.
  const fromBlocks = at;
  for (const s of open) {
    at = s.into(ts, values, at);
    if (at < 0) return refused({ ts, values });
  }
  if (at > fromBlocks && !(ts[fromBlocks]! > last)) return refused({ ts, values });
  const out = denseSlice({ ts, values }, 0, at);
  return strictlyAscending(out.ts) ? out : refused(out);
}

function refused(s: DenseSeries): null {
  releaseDense(s);
  return null;
}
