// Functions over range vectors (`rate(x[5m])`, `avg_over_time(x[5m])`, …): each turns the
// samples of a window (end - range, end] into one value, as Prometheus defines them.
// ferrite's native histograms are per-period (not cumulative), so rate/increase and
// sum_over_time merge the window's histograms.
import { Histogram } from '../histogram/index.js';
import type { PromValue } from '../prometheus/types.js';
import { lookupTable } from '../lookup-table.js';
import { PromQLError } from './ast.js';

export interface Window {
  ts: readonly number[];
  values: readonly PromValue[];
  /** Samples [lo, hi) are in the window. */
  lo: number;
  hi: number;
  /** Window end (epoch ms) and length. */
  end: number;
  rangeMs: number;
  /** The step's evaluation time (the end before `offset`; predict_linear predicts from it). */
  evalTime: number;
}

/** `params`: the function's scalar arguments at this step, in order. */
export type RangeFunction = (w: Window, params: readonly number[]) => PromValue | undefined;

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

/** Least-squares fit of the window against time in seconds from `interceptMs` (Prometheus' linearRegression). */
function linearRegression(t: number[], v: number[], interceptMs: number): { slope: number; intercept: number } {
  if (v.every((x) => x === v[0])) return Number.isFinite(v[0]!) || Number.isNaN(v[0]!) ? { slope: 0, intercept: v[0]! } : { slope: NaN, intercept: NaN };
  const n = v.length;
  const x = t.map((ts) => (ts - interceptMs) / 1000);
  const sumX = kahanSum(x);
  const sumY = kahanSum(v);
  const sumXY = kahanSum(x.map((xi, i) => xi * v[i]!));
  const sumX2 = kahanSum(x.map((xi) => xi * xi));
  const slope = (sumXY - (sumX * sumY) / n) / (sumX2 - (sumX * sumX) / n);
  return { slope, intercept: sumY / n - (slope * sumX) / n };
}

/** deriv: the least-squares slope per second. */
function slope(w: Window): number | undefined {
  const { t, v } = floats(w);
  return v.length < 2 ? undefined : linearRegression(t, v, t[0]!).slope;
}

/** predict_linear(v[r], s): the fitted value s seconds after the evaluation time. */
function predictLinear(w: Window, s: number): number | undefined {
  const { t, v } = floats(w);
  if (v.length < 2) return undefined;
  const fit = linearRegression(t, v, w.evalTime);
  return fit.slope * s + fit.intercept;
}

/** Double exponential smoothing (Prometheus 2's holt_winters) with smoothing factor sf and trend factor tf. */
function smoothed(w: Window, sf: number, tf: number): number | undefined {
  if (!(sf > 0 && sf < 1)) throw new PromQLError(`invalid smoothing factor. Expected: 0 < sf < 1, got: ${sf}`);
  if (!(tf > 0 && tf < 1)) throw new PromQLError(`invalid trend factor. Expected: 0 < tf < 1, got: ${tf}`);
  const { v } = floats(w);
  if (v.length < 2) return undefined;
  let s0 = 0;
  let s1 = v[0]!;
  let b = v[1]! - v[0]!;
  for (let i = 1; i < v.length; i++) {
    if (i > 1) b = tf * (s1 - s0) + (1 - tf) * b;
    [s0, s1] = [s1, sf * v[i]! + (1 - sf) * (s1 + b)];
  }
  return s1;
}

/** Kahan–Neumaier sum (Prometheus' kahansum.Inc); an infinite running sum drops the compensation. */
export function kahanSum(values: readonly number[]): number {
  let sum = 0;
  let c = 0;
  for (const x of values) {
    const t = sum + x;
    if (!Number.isFinite(t) && !Number.isNaN(t)) c = 0;
    else if (Math.abs(sum) >= Math.abs(x)) c += sum - t + x;
    else c += x - t + sum;
    sum = t;
  }
  return Number.isFinite(sum) ? sum + c : sum;
}

const overFloats = (f: (v: number[], t: number[]) => number | undefined): RangeFunction => (w) => {
  const { t, v } = floats(w);
  return v.length === 0 ? undefined : f(v, t);
};

/** Variance with Kahan-compensated running mean (Prometheus' varianceOverTime). */
function variance(v: number[]): number {
  let mean = 0, cMean = 0, aux = 0, cAux = 0;
  v.forEach((x, i) => {
    const delta = x - (mean + cMean);
    [mean, cMean] = kahanInc(delta / (i + 1), mean, cMean);
    [aux, cAux] = kahanInc(delta * (x - (mean + cMean)), aux, cAux);
  });
  return (aux + cAux) / v.length;
}

function kahanInc(x: number, sum: number, c: number): [number, number] {
  const t = sum + x;
  if (!Number.isFinite(t) && !Number.isNaN(t)) return [t, 0];
  return [t, Math.abs(sum) >= Math.abs(x) ? c + (sum - t + x) : c + (x - t + sum)];
}

/** avg_over_time: the Kahan sum over the count, or an incremental mean once the sum overflows. */
function average(v: number[]): number {
  const sum = kahanSum(v);
  if (Number.isFinite(sum) || v.some((x) => !Number.isFinite(x))) return sum / v.length;
  let m = 0;
  v.forEach((x, i) => (m += (x - m) / (i + 1)));
  return m;
}

/** The (first) timestamp, in seconds, of the value `better` prefers; NaN loses to anything. */
const timestampOf = (better: (a: number, b: number) => boolean) => (v: number[], t: number[]): number => {
  let best = 0;
  v.forEach((x, i) => {
    if (better(x, v[best]!) || Number.isNaN(v[best]!)) best = i;
  });
  return t[best]! / 1000;
};

function mad(v: number[]): number {
  if (v.some(Number.isNaN)) return NaN;
  const median = quantileOf(0.5, v);
  return quantileOf(0.5, v.map((x) => Math.abs(x - median)));
}

/** Prometheus' quantile: rank φ·(n−1) in the sorted values, linearly interpolated. */
export function quantileOf(q: number, values: number[]): number {
  if (values.length === 0 || Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const v = [...values].sort((a, b) => (Number.isNaN(a) ? (Number.isNaN(b) ? 0 : -1) : Number.isNaN(b) ? 1 : a - b)); // NaN first, as Prometheus sorts
  const rank = q * (v.length - 1);
  const lo = Math.max(0, Math.floor(rank));
  const hi = Math.min(v.length - 1, lo + 1);
  const weight = rank - Math.floor(rank);
  return v[lo]! * (1 - weight) + v[hi]! * weight;
}

const minOf = (v: number[]): number => v.reduce((a, b) => (b < a || Number.isNaN(a) ? b : a));
const maxOf = (v: number[]): number => v.reduce((a, b) => (b > a || Number.isNaN(a) ? b : a));

/** Functions of one range vector; scalar arguments (φ, s, sf, tf) come as `params`. */
export const RANGE_FUNCTIONS: Record<string, RangeFunction> = lookupTable({
  rate: (w) => (histograms(w).length > 0 ? histogramIncrease(w) : extrapolated(w, true, true)),
  increase: (w) => (histograms(w).length > 0 ? histogramIncrease(w) : extrapolated(w, true, false)),
  delta: (w) => extrapolated(w, false, false),
  irate: (w) => instant(w, true),
  idelta: (w) => instant(w, false),
  deriv: slope,
  predict_linear: (w, [s]) => predictLinear(w, s!),
  double_exponential_smoothing: (w, [sf, tf]) => smoothed(w, sf!, tf!),
  avg_over_time: overFloats(average),
  min_over_time: overFloats(minOf),
  max_over_time: overFloats(maxOf),
  sum_over_time: (w) => (histograms(w).length > 0 ? merged(histograms(w)) : overFloats(kahanSum)(w, [])),
  count_over_time: (w) => (w.hi > w.lo ? w.hi - w.lo : undefined),
  last_over_time: (w) => (w.hi > w.lo ? w.values[w.hi - 1] : undefined),
  first_over_time: (w) => (w.hi > w.lo ? w.values[w.lo] : undefined),
  ts_of_last_over_time: (w) => (w.hi > w.lo ? w.ts[w.hi - 1]! / 1000 : undefined),
  ts_of_first_over_time: (w) => (w.hi > w.lo ? w.ts[w.lo]! / 1000 : undefined),
  ts_of_max_over_time: overFloats(timestampOf((a, b) => a >= b)),
  ts_of_min_over_time: overFloats(timestampOf((a, b) => a <= b)),
  present_over_time: (w) => (w.hi > w.lo ? 1 : undefined),
  stddev_over_time: overFloats((v) => Math.sqrt(variance(v))),
  stdvar_over_time: overFloats(variance),
  mad_over_time: overFloats(mad),
  quantile_over_time: (w, [q]) => overFloats((v) => quantileOf(q!, v))(w, []),
  changes: overFloats((v) => v.slice(1).filter((x, i) => x !== v[i] && !(Number.isNaN(x) && Number.isNaN(v[i]!))).length),
  resets: overFloats((v) => v.slice(1).filter((x, i) => x < v[i]!).length),
});

/** Range functions whose result keeps the metric name. */
export const KEEPS_NAME = new Set(['last_over_time', 'first_over_time']);

/** Range functions taking scalar arguments, and where the range vector is among the arguments. */
export const RANGE_ARGUMENT_INDEX: Record<string, number> = lookupTable({ quantile_over_time: 1 });
