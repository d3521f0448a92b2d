// Functions of instant vectors and scalars: math applied to each float, and
// histogram_quantile over ferrite's native histograms or classic `le` buckets.
import { Histogram } from '../histogram/index.js';
import type { Labels } from '../prometheus/types.js';
import { labelsKey, withoutName, type Cell, type VSeries } from './values.js';
import { lookupTable } from '../lookup-table.js';

export const MATH_FUNCTIONS: Record<string, (x: number) => number> = lookupTable({
  abs: Math.abs,
  ceil: Math.ceil,
  floor: Math.floor,
  exp: Math.exp,
  ln: Math.log,
  log2: Math.log2,
  log10: Math.log10,
  sqrt: Math.sqrt,
  sgn: (x) => (Number.isNaN(x) ? NaN : Math.sign(x)),
});

/** Applies `f` to every float of the series (histograms drop out; so do steps where `f` gives undefined), dropping the metric name. */
export function mapFloats(series: VSeries[], f: (x: number, step: number) => number | undefined): VSeries[] {
  return series.map((s) => ({ labels: withoutName(s.labels), values: s.values.map((v, i) => (typeof v === 'number' ? f(v, i) : undefined)) }));
}

/** Go's math.Round: halves away from zero. */
export const roundHalfAway = (x: number): number => (x < 0 ? -Math.round(-x) : Math.round(x));

/** Prometheus' round(v, to_nearest): floor(v / to_nearest + 0.5) * to_nearest. */
export function roundTo(x: number, toNearest: number): number {
  return Math.floor(x * (1 / toNearest) + 0.5) / (1 / toNearest);
}

interface Bucket {
  upper: number;
  count: number;
}

/** Prometheus' bucketQuantile over classic cumulative `le` buckets. */
export function bucketQuantile(q: number, input: Bucket[]): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const sorted = [...input].sort((a, b) => a.upper - b.upper);
  if (sorted.length === 0 || sorted[sorted.length - 1]!.upper !== Infinity) return NaN;
  // Same upper bound twice (series churn): add them up; counts must never decrease.
  const buckets: Bucket[] = [];
  for (const b of sorted) {
    const last = buckets[buckets.length - 1];
    if (last !== undefined && last.upper === b.upper) last.count += b.count;
    else buckets.push({ ...b });
  }
  for (let i = 1; i < buckets.length; i++) if (buckets[i]!.count < buckets[i - 1]!.count) buckets[i]!.count = buckets[i - 1]!.count;
  if (buckets.length < 2) return NaN;
  const observations = buckets[buckets.length - 1]!.count;
  if (observations === 0) return NaN;
  let rank = q * observations;
  const b = buckets.findIndex((x) => x.count >= rank);
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

/** The q-quantile of a circllhist (the reference library's type-1 quantile). */
export function histogramQuantile(q: number, h: Histogram): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  return h.quantiles([q])[0]!;
}

/**
 * histogram_quantile(φ, v): for histogram samples the histogram's quantile; float samples
 * with an `le` label are grouped by their other labels into classic buckets.
 */
export function histogramQuantileOf(qs: number[], series: VSeries[]): VSeries[] {
  const out: VSeries[] = [];
  const groups = new Map<string, { labels: Labels; members: { upper: number; values: Cell[] }[] }>();
  for (const s of series) {
    if (s.values.some((v) => v instanceof Histogram)) {
      out.push({ labels: withoutName(s.labels), values: s.values.map((v, i) => (v instanceof Histogram ? histogramQuantile(qs[i]!, v) : undefined)) });
      continue;
    }
    const le = s.labels.le;
    if (le === undefined) continue;
    const upper = le === '+Inf' ? Infinity : Number(le);
    if (Number.isNaN(upper)) continue;
    const { le: _le, ...rest } = withoutName(s.labels);
    const key = labelsKey(rest);
    const g = groups.get(key) ?? { labels: rest, members: [] };
    g.members.push({ upper, values: s.values });
    groups.set(key, g);
  }
  for (const g of groups.values()) {
    const values = qs.map((q, i) => {
      const buckets = g.members.flatMap((m) => (typeof m.values[i] === 'number' ? [{ upper: m.upper, count: m.values[i] as number }] : []));
      return buckets.length === 0 ? undefined : bucketQuantile(q, buckets);
    });
    out.push({ labels: g.labels, values });
  }
  return out;
}
