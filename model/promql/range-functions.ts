// Functions over range vectors (`rate(x[5m])`, `avg_over_time(x[5m])`, …): each turns the
// samples of a window (end - range, end] into one value, as Prometheus defines them.
// ferrite's native histograms are per-period (not cumulative), so rate/increase and
// sum_over_time merge the window's histograms.
import { Histogram } from '../histogram/index.js';
import type { PromValue } from '../prometheus/types.js';
import { lookupTable } from '../lookup-table.js';

export interface Window {
  ts: readonly number[];
  values: readonly PromValue[];
  /** Samples [lo, hi) are in the window. */
  lo: number;
  hi: number;
  /** Window end (epoch ms) and length. */
  end: number;
  rangeMs: number;
}

export type RangeFunction = (w: Window, param: number) => PromValue | undefined;

/** The window's floats (histograms skipped). */
function floats(w: Window): { t: number[]; v: number[] } {
  const t: number[] = [];
  const v: number[] = [];
  for (let i = w.lo; i < w.hi; i++) {
    const x = w.values[i]!;
    if (typeof x === 'number') {
      t.push(w.ts[i]!);
      v.push(x);
    }
  }
  return { t, v };
}

function histograms(w: Window): Histogram[] {
  const out: Histogram[] = [];
  for (let i = w.lo; i < w.hi; i++) if (w.values[i] instanceof Histogram) out.push(w.values[i] as Histogram);
  return out;
}

function merged(hs: Histogram[]): Histogram | undefined {
  if (hs.length === 0) return undefined;
  const out = hs[0]!.clone();
  for (const h of hs.slice(1)) out.merge(h);
  return out;
}

/** Prometheus' extrapolated rate/increase/delta (promql/functions.go extrapolatedRate). */
function extrapolated(w: Window, isCounter: boolean, isRate: boolean): number | undefined {
  const { t, v } = floats(w);
  if (v.length < 2) return undefined;
  let result = v[v.length - 1]! - v[0]!;
  if (isCounter) for (let i = 1; i < v.length; i++) if (v[i]! < v[i - 1]!) result += v[i - 1]!;
  const rangeStart = w.end - w.rangeMs;
  let toStart = (t[0]! - rangeStart) / 1000;
  let toEnd = (w.end - t[t.length - 1]!) / 1000;
  const sampled = (t[t.length - 1]! - t[0]!) / 1000;
  const average = sampled / (v.length - 1);
  const threshold = average * 1.1;
  if (toStart >= threshold) toStart = average / 2;
  if (isCounter && result > 0 && v[0]! >= 0) {
    // A counter cannot go below zero: do not extrapolate further back than where it would.
    toStart = Math.min(toStart, sampled * (v[0]! / result));
  }
  if (toEnd >= threshold) toEnd = average / 2;
  let factor = (sampled + toStart + toEnd) / sampled;
  if (isRate) factor /= w.rangeMs / 1000;
  return result * factor;
}

/**
 * rate/increase over ferrite histograms: the window's histograms merged. circllhist counts are
 * integers, so rate is not divided by the range (that would round small rates to nothing);
 * quantiles, which is what rates of histograms are for, do not depend on the scale.
 */
function histogramIncrease(w: Window): Histogram | undefined {
  return merged(histograms(w));
}

function instant(w: Window, isRate: boolean): number | undefined {
  const { t, v } = floats(w);
  if (v.length < 2) return undefined;
  const last = v[v.length - 1]!;
  const prev = v[v.length - 2]!;
  const dt = (t[t.length - 1]! - t[t.length - 2]!) / 1000;
  if (!isRate) return last - prev;
  if (dt === 0) return undefined;
  return (last < prev ? last : last - prev) / dt;
}

/** Least-squares slope per second (deriv). */
function slope(w: Window): number | undefined {
  const { t, v } = floats(w);
  if (v.length < 2) return undefined;
  const t0 = t[0]!;
  let n = 0, sx = 0, sy = 0, sxy = 0, sxx = 0;
  for (let i = 0; i < v.length; i++) {
    const x = (t[i]! - t0) / 1000;
    n++;
    sx += x;
    sy += v[i]!;
    sxy += x * v[i]!;
    sxx += x * x;
  }
  const cov = sxy - (sx * sy) / n;
  const varX = sxx - (sx * sx) / n;
  return cov / varX;
}

const overFloats = (f: (v: number[]) => number | undefined): RangeFunction => (w) => {
  const { v } = floats(w);
  return v.length === 0 ? undefined : f(v);
};

function variance(v: number[]): number {
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  return v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length;
}

/** Prometheus' quantile: rank φ·(n−1) in the sorted values, linearly interpolated. */
export function quantileOf(q: number, values: number[]): number {
  if (values.length === 0 || Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const v = [...values].sort((a, b) => a - b);
  const rank = q * (v.length - 1);
  const lo = Math.max(0, Math.floor(rank));
  const hi = Math.min(v.length - 1, lo + 1);
  const weight = rank - Math.floor(rank);
  return v[lo]! * (1 - weight) + v[hi]! * weight;
}

const minOf = (v: number[]): number => v.reduce((a, b) => (b < a || Number.isNaN(a) ? b : a));
const maxOf = (v: number[]): number => v.reduce((a, b) => (b > a || Number.isNaN(a) ? b : a));

/** Functions of one range vector (quantile_over_time's φ comes as `param`). */
export const RANGE_FUNCTIONS: Record<string, RangeFunction> = lookupTable({
  rate: (w) => (histograms(w).length > 0 ? histogramIncrease(w) : extrapolated(w, true, true)),
  increase: (w) => (histograms(w).length > 0 ? histogramIncrease(w) : extrapolated(w, true, false)),
  delta: (w) => extrapolated(w, false, false),
  irate: (w) => instant(w, true),
  idelta: (w) => instant(w, false),
  deriv: slope,
  avg_over_time: overFloats((v) => v.reduce((a, b) => a + b, 0) / v.length),
  min_over_time: overFloats(minOf),
  max_over_time: overFloats(maxOf),
  sum_over_time: (w) => (histograms(w).length > 0 ? merged(histograms(w)) : overFloats((v) => v.reduce((a, b) => a + b, 0))(w, 0)),
  count_over_time: (w) => (w.hi > w.lo ? w.hi - w.lo : undefined),
  last_over_time: (w) => (w.hi > w.lo ? w.values[w.hi - 1] : undefined),
  present_over_time: (w) => (w.hi > w.lo ? 1 : undefined),
  stddev_over_time: overFloats((v) => Math.sqrt(variance(v))),
  stdvar_over_time: overFloats(variance),
  quantile_over_time: (w, q) => overFloats((v) => quantileOf(q, v))(w, q),
  changes: overFloats((v) => v.slice(1).filter((x, i) => x !== v[i] && !(Number.isNaN(x) && Number.isNaN(v[i]!))).length),
  resets: overFloats((v) => v.slice(1).filter((x, i) => x < v[i]!).length),
});

/** Range functions whose result keeps the metric name. */
export const KEEPS_NAME = new Set(['last_over_time']);
