// histogram_quantile(s), histogram_fraction and the histogram_count/sum/avg/stddev/stdvar
// functions, over classic histograms (float series with an `le` label, grouped by their other
// labels) and over ferrite's native histograms (circllhist). For circllhist the natural mapping
// is used: quantiles and fractions by the library's own interpolation inside a bin, count the
// sample count, sum/avg/stddev from bin midpoints.
import { Histogram } from '../histogram/index.js';
import type { Labels } from '../prometheus/types.js';
import { formatGoFloat } from './format.js';
import { labelsKey, SeriesCollector, withoutName, type VSeries } from './values.js';
import { lookupTable } from '../lookup-table.js';

export interface Bucket {
  upper: number;
  count: number;
}

/** Counts closer than this (relatively) are one count: float noise, not a decrease (Prometheus 3). */
const SMALL_DELTA = 1e-12;

function almostEqual(a: number, b: number): boolean {
  if (a === b) return true;
  const diff = Math.abs(a - b);
  const sum = Math.abs(a) + Math.abs(b);
  const minNormal = 2.2250738585072014e-308;
  if (a === 0 || b === 0 || sum < minNormal) return diff < SMALL_DELTA * minNormal;
  return diff / Math.min(sum, Number.MAX_VALUE) < SMALL_DELTA;
}

/** Sorted by bound, equal bounds added up, counts made non-decreasing; null without a +Inf bucket. */
function cumulative(input: Bucket[]): Bucket[] | null {
  const sorted = [...input].sort((a, b) => a.upper - b.upper);
  if (sorted.length === 0 || sorted[sorted.length - 1]!.upper !== Infinity) return null;
  const buckets: Bucket[] = [];
  for (const b of sorted) {
    const last = buckets[buckets.length - 1];
    if (last !== undefined && last.upper === b.upper) last.count += b.count;
    else buckets.push({ ...b });
  }
  let prev = buckets[0]!.count;
  for (let i = 1; i < buckets.length; i++) {
    const curr = buckets[i]!.count;
    if (curr === prev) continue;
    if (almostEqual(prev, curr) || curr < prev) buckets[i]!.count = prev;
    else prev = curr;
  }
  return buckets;
}

/** Prometheus' BucketQuantile over classic cumulative `le` buckets. */
export function bucketQuantile(q: number, input: Bucket[]): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const buckets = cumulative(input);
  if (buckets === null || buckets.length < 2) return NaN;
  const observations = buckets[buckets.length - 1]!.count;
  if (observations === 0 || Number.isNaN(observations)) return NaN;
  let rank = q * observations;
  let b = buckets.slice(0, -1).findIndex((x) => x.count >= rank);
  if (b < 0) b = buckets.length - 1;
  if (b === buckets.length - 1) return buckets[buckets.length - 2]!.upper;
  if (b === 0 && buckets[0]!.upper <= 0) return buckets[0]!.upper;
  let start = 0;
  let count = buckets[b]!.count;
  if (b > 0) {
    start = buckets[b - 1]!.upper;
    count -= buckets[b - 1]!.count;
    rank -= buckets[b - 1]!.count;
  }
  return start + (buckets[b]!.upper - start) * (rank / count);
}

/** Prometheus 3's BucketFraction: the share of observations in [lower, upper], linear inside a bucket. */
export function bucketFraction(lower: number, upper: number, input: Bucket[]): number {
  const buckets = cumulative(input);
  if (buckets === null) return NaN;
  const count = buckets[buckets.length - 1]!.count;
  if (count === 0 || Number.isNaN(lower) || Number.isNaN(upper)) return NaN;
  if (lower >= upper) return 0;
  const rankAt = (v: number): number => {
    let rank = 0;
    let lowerBound = buckets[0]!.upper <= 0 ? -Infinity : 0;
    for (let i = 0; i < buckets.length; i++) {
      const b = buckets[i]!;
      if (i > 0) lowerBound = buckets[i - 1]!.upper;
      if (lowerBound >= v) return rank;
      if (lowerBound < v && b.upper > v) return lowerBound === -Infinity ? b.count : rank + ((b.count - rank) * (v - lowerBound)) / (b.upper - lowerBound);
      rank = b.count;
    }
    return count;
  };
  return (Math.min(rankAt(upper), count) - Math.min(rankAt(lower), count)) / count;
}

/** The q-quantile of a circllhist (the library's type-1 quantile). */
export function histogramQuantile(q: number, h: Histogram): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  return h.quantiles([q])[0]!;
}

/** The share of a circllhist's samples in [lower, upper]. */
function histogramFraction(lower: number, upper: number, h: Histogram): number {
  if (Number.isNaN(lower) || Number.isNaN(upper) || h.sampleCount() === 0n) return NaN;
  if (lower >= upper) return 0;
  const [lo, hi] = h.inverseQuantiles([lower, upper]);
  return hi! - lo!;
}

/** A function of one circllhist for each histogram sample of a vector (floats drop out). */
export const HISTOGRAM_STATISTICS: Record<string, (h: Histogram) => number> = lookupTable({
  histogram_count: (h) => Number(h.sampleCount()),
  histogram_sum: (h) => h.approxSum(),
  histogram_avg: (h) => h.approxMean(),
  histogram_stddev: (h) => h.approxStddev(),
  histogram_stdvar: (h) => h.approxStddev() ** 2,
});

export function histogramStatistic(series: VSeries[], f: (h: Histogram) => number): VSeries[] {
  const out = new SeriesCollector(series[0]?.values.length ?? 0);
  for (const s of series) out.add(withoutName(s.labels), s.values.map((v) => (v instanceof Histogram ? f(v) : undefined)));
  return out.series();
}

/**
 * Applies `classic` to the `le` buckets of each group of float series (labels but `le` and the
 * name) and `native` to each circllhist, per step; `params[i]` are the scalar arguments at step i.
 */
function overHistograms(
  series: VSeries[],
  params: number[][],
  classic: (p: number[], buckets: Bucket[]) => number,
  native: (p: number[], h: Histogram) => number,
  labelsOf: (labels: Labels, p: number[]) => Labels = (l) => l,
): VSeries[] {
  const steps = series[0]?.values.length ?? 0;
  const out = new SeriesCollector(steps);
  const groups = new Map<string, { labels: Labels; members: { upper: number; s: VSeries }[] }>();
  for (const s of series) {
    if (s.values.some((v) => v instanceof Histogram)) {
      for (let i = 0; i < steps; i++) {
        const v = s.values[i];
        if (v instanceof Histogram) out.set(labelsOf(withoutName(s.labels), params[i]!), i, native(params[i]!, v));
      }
      continue;
    }
    const le = s.labels.le;
    const upper = le === undefined ? NaN : parseBound(le);
    if (Number.isNaN(upper)) continue;
    const { le: _le, ...rest } = withoutName(s.labels);
    const key = labelsKey(rest);
    const g = groups.get(key) ?? { labels: rest, members: [] };
    g.members.push({ upper, s });
    groups.set(key, g);
  }
  for (const g of groups.values()) {
    for (let i = 0; i < steps; i++) {
      const buckets = g.members.flatMap((m) => (typeof m.s.values[i] === 'number' ? [{ upper: m.upper, count: m.s.values[i] as number }] : []));
      if (buckets.length > 0) out.set(labelsOf(g.labels, params[i]!), i, classic(params[i]!, buckets));
    }
  }
  return out.series();
}

/** An `le` value as Go's ParseFloat reads it. */
function parseBound(le: string): number {
  const t = le.trim().toLowerCase();
  if (t === '+inf' || t === 'inf' || t === '+infinity' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  if (le !== le.trim() || le === '') return NaN;
  return Number(le.replace(/_/g, ''));
}

export function histogramQuantileOf(qs: number[], series: VSeries[]): VSeries[] {
  return overHistograms(series, qs.map((q) => [q]), ([q], b) => bucketQuantile(q!, b), ([q], h) => histogramQuantile(q!, h));
}

export function histogramFractionOf(lowers: number[], uppers: number[], series: VSeries[]): VSeries[] {
  const params = lowers.map((l, i) => [l, uppers[i]!]);
  return overHistograms(series, params, ([l, u], b) => bucketFraction(l!, u!, b), ([l, u], h) => histogramFraction(l!, u!, h));
}

/** histogram_quantiles(v, "label", φ...): one series per φ, labelled with it. */
export function histogramQuantilesOf(series: VSeries[], label: string, qs: number[][]): VSeries[] {
  const steps = series[0]?.values.length ?? 0;
  const out = new SeriesCollector(steps);
  for (let k = 0; k < qs.length; k++) {
    const perStep = Array.from({ length: steps }, (_, i) => qs[k]![i]!);
    for (const s of histogramQuantileOf(perStep, series)) {
      s.values.forEach((v, i) => out.set({ ...s.labels, [label]: formatGoFloat(perStep[i]!) }, i, v));
    }
  }
  return out.series();
}
