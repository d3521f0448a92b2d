// Numeric rollup math (docs/rollups.md). A period's accumulator keeps sums, not averages,
// so coarser periods are the exact sum of finer ones: every first- and second-order rate is
// booked to the period of its later sample, computed with the true previous sample even
// when that lies in an earlier period.
import type { NumericValue } from '../types.js';

/** n, Σx, Σx² of one quantity. */
export interface Moments {
  n: number;
  sum: number;
  sumsq: number;
}

export interface RollupAccumulator {
  /** The samples themselves (value, stddev). */
  value: Moments;
  /** Rates of change per second between consecutive samples. */
  derivative: Moments;
  /** Rates with negative deltas (counter resets) skipped. */
  counter: Moments;
  /** Rates of change per second of consecutive derivative rates. */
  derivative2: Moments;
  /** Rates of change per second of consecutive counter rates. */
  counter2: Moments;
}

const KEYS = ['value', 'derivative', 'counter', 'derivative2', 'counter2'] as const;
const zero = (): Moments => ({ n: 0, sum: 0, sumsq: 0 });

export function emptyAccumulator(): RollupAccumulator {
  return { value: zero(), derivative: zero(), counter: zero(), derivative2: zero(), counter2: zero() };
}

function add(m: Moments, x: number): void {
  m.n++;
  m.sum += x;
  m.sumsq += x * x;
}

function addMoments(a: Moments, b: Moments): Moments {
  return { n: a.n + b.n, sum: a.sum + b.sum, sumsq: a.sumsq + b.sumsq };
}

/** Adds `b` into `into` in place (building a coarse period without a new object per part). */
export function addInto(into: RollupAccumulator, b: RollupAccumulator): RollupAccumulator {
  // Spelled out: ageing adds every period into every level, and a loop over the keys is several times slower.
  addMomentsInto(into.value, b.value);
  addMomentsInto(into.derivative, b.derivative);
  addMomentsInto(into.counter, b.counter);
  addMomentsInto(into.derivative2, b.derivative2);
  addMomentsInto(into.counter2, b.counter2);
  return into;
}

function addMomentsInto(m: Moments, b: Moments): void {
  m.n += b.n;
  m.sum += b.sum;
  m.sumsq += b.sumsq;
}

export function mergeAccumulators(a: RollupAccumulator, b: RollupAccumulator): RollupAccumulator {
  return {
    value: addMoments(a.value, b.value),
    derivative: addMoments(a.derivative, b.derivative),
    counter: addMoments(a.counter, b.counter),
    derivative2: addMoments(a.derivative2, b.derivative2),
    counter2: addMoments(a.counter2, b.counter2),
  };
}

/** What carries across a period boundary: the last sample and the last rates. */
export interface RollupCarry {
  ts: number;
  value: number;
  /** Last derivative rate and the timestamp it was booked at. */
  rate: { ts: number; value: number } | null;
  counterRate: { ts: number; value: number } | null;
}

/**
 * Per-period accumulators of the non-null samples of `s` (ms timestamps, ascending), for
 * periods of `periodMs` starting at `origin` + k·periodMs (the epoch by default); `carry` is
 * the state after the samples before `s`.
 * Returns the accumulators by period start and the carry after the last sample.
 */
export function accumulate(s: { ts: ArrayLike<number>; values: ArrayLike<NumericValue> }, periodMs: number, carry: RollupCarry | null, origin = 0): { periods: Map<number, RollupAccumulator>; carry: RollupCarry | null } {
  const periods = new Map<number, RollupAccumulator>();
  let c = carry;
  for (let i = 0; i < s.ts.length; i++) {
    const raw = s.values[i];
    if (raw === null || raw === undefined) continue;
    const v = Number(raw);
    const ts = s.ts[i]!;
    if (!Number.isFinite(v)) continue;
    const start = periodStart(ts, periodMs, origin);
    let acc = periods.get(start);
    if (acc === undefined) periods.set(start, (acc = emptyAccumulator()));
    add(acc.value, v);
    c = step(acc, c, ts, v);
  }
  return { periods, carry: c };
}

/** Start of the period of `periodMs` (periods begin at `origin` + k·periodMs) holding `ts`. */
export function periodStart(ts: number, periodMs: number, origin = 0): number {
  return origin + Math.floor((ts - origin) / periodMs) * periodMs;
}

/** Books the rates that sample (ts, v) completes into `acc`; returns the new carry. */
function step(acc: RollupAccumulator, c: RollupCarry | null, ts: number, v: number): RollupCarry {
  if (c === null || ts <= c.ts) return { ts, value: v, rate: c?.rate ?? null, counterRate: c?.counterRate ?? null };
  const dt = (ts - c.ts) / 1000;
  const rate = (v - c.value) / dt;
  add(acc.derivative, rate);
  if (c.rate !== null) add(acc.derivative2, (rate - c.rate.value) / ((ts - c.rate.ts) / 1000));
  let counterRate = c.counterRate;
  if (v >= c.value) {
    add(acc.counter, rate);
    if (c.counterRate !== null) add(acc.counter2, (rate - c.counterRate.value) / ((ts - c.counterRate.ts) / 1000));
    counterRate = { ts, value: rate };
  }
  return { ts, value: v, rate: { ts, value: rate }, counterRate };
}

/** Mean of n values summing to `sum`; null when n is 0. */
export const meanOf = (n: number, sum: number): number | null => (n === 0 ? null : sum / n);
/**
 * Population standard deviation from the sums. A variance within the rounding noise of
 * Σx²/n (relative 1e-12) reads as 0, so constant data gives 0, not 1e-9.
 */
export function stddevOf(n: number, sum: number, sumsq: number): number | null {
  if (n === 0) return null;
  const meanSq = sumsq / n;
  const variance = meanSq - (sum / n) ** 2;
  return variance <= Math.abs(meanSq) * STDDEV_ZERO ? 0 : Math.sqrt(variance);
}

/** Relative to Σx²/n, the variance that reads as 0 (rounding noise). */
export const STDDEV_ZERO = 1e-12;

const mean = (m: Moments): number | null => meanOf(m.n, m.sum);
const stddev = (m: Moments): number | null => stddevOf(m.n, m.sum, m.sumsq);

/** The 11 fields of interface §2.7 (`value` is the average). */
export interface RollupFields {
  count: number;
  value: number | null;
  stddev: number | null;
  derivative: number | null;
  derivative_stddev: number | null;
  counter: number | null;
  counter_stddev: number | null;
  derivative2: number | null;
  derivative2_stddev: number | null;
  counter2: number | null;
  counter2_stddev: number | null;
}

export function rollupFields(a: RollupAccumulator): RollupFields {
  return {
    count: a.value.n,
    value: mean(a.value),
    stddev: stddev(a.value),
    derivative: mean(a.derivative),
    derivative_stddev: stddev(a.derivative),
    counter: mean(a.counter),
    counter_stddev: stddev(a.counter),
    derivative2: mean(a.derivative2),
    derivative2_stddev: stddev(a.derivative2),
    counter2: mean(a.counter2),
    counter2_stddev: stddev(a.counter2),
  };
}

const FORMAT_VERSION = 1;

/** Version byte, then n (u32), Σ, Σ² (f64) for each of the five quantities: 101 bytes. */
export function encodeAccumulator(a: RollupAccumulator): Buffer {
  const b = Buffer.allocUnsafe(1 + KEYS.length * 20);
  b[0] = FORMAT_VERSION;
  KEYS.forEach((k, i) => {
    const at = 1 + i * 20;
    // A coarse level summing more than 2^32 - 1 samples saturates rather than failing the rollup.
    b.writeUInt32BE(Math.min(a[k].n, 0xffff_ffff), at);
    b.writeDoubleBE(a[k].sum, at + 4);
    b.writeDoubleBE(a[k].sumsq, at + 12);
  });
  return b;
}

export function decodeAccumulator(b: Uint8Array): RollupAccumulator {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (buf[0] !== FORMAT_VERSION || buf.length !== 1 + KEYS.length * 20) throw new Error(`BUG: rollup record of version ${buf[0]} and ${buf.length} bytes`);
  const a = emptyAccumulator();
  KEYS.forEach((k, i) => {
    const at = 1 + i * 20;
    a[k] = { n: buf.readUInt32BE(at), sum: buf.readDoubleBE(at + 4), sumsq: buf.readDoubleBE(at + 12) };
  });
  return a;
}

/** Moments with `n` samples of mean `avg` and population stddev `sd` (used by /write/nnt). */
export function momentsOf(n: number, avg: number, sd: number): Moments {
  return { n, sum: n * avg, sumsq: n * (sd * sd + avg * avg) };
}
