// In-memory sample series: parallel arrays of epoch-ms timestamps and values, plus the
// normalisation every read and seal needs (time order, one value per timestamp).
import type { SampleCombiner } from './conflict.js';
import type { NumericValue } from './types.js';

export interface Series<V> {
  ts: number[];
  values: V[];
  /** MetricList generation per sample; absent when every sample's is 0. */
  gens?: number[];
}

/** One sample with its generation, as conflict resolution sees it. */
export interface Sample<V> {
  value: V;
  gen: number;
}

export const emptySeries = <V>(): Series<V> => ({ ts: [], values: [] });

/**
 * Sorts by time and keeps one sample per timestamp: `combine(kept, incoming)` picks it,
 * seeing duplicates in the order they appear. Already-ordered input costs one pass.
 */
export function normalizeSeries<V>(s: Series<V>, combine: (kept: Sample<V>, incoming: Sample<V>) => Sample<V>): Series<V> {
  const n = s.ts.length;
  let ordered = true;
  for (let i = 1; i < n && ordered; i++) ordered = s.ts[i]! > s.ts[i - 1]!;
  if (ordered) return s;
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => s.ts[a]! - s.ts[b]! || a - b); // stable: equal stamps keep arrival order
  const gens = s.gens;
  const out: Series<V> = gens === undefined ? { ts: [], values: [] } : { ts: [], values: [], gens: [] };
  for (const i of order) {
    const t = s.ts[i]!;
    const last = out.ts.length - 1;
    if (last >= 0 && out.ts[last] === t) {
      const kept = combine({ value: out.values[last]!, gen: out.gens?.[last] ?? 0 }, { value: s.values[i]!, gen: gens?.[i] ?? 0 });
      out.values[last] = kept.value;
      if (out.gens !== undefined) out.gens[last] = kept.gen;
    } else {
      out.ts.push(t);
      out.values.push(s.values[i]!);
      out.gens?.push(gens![i]!);
    }
  }
  return out;
}

/** Numeric series resolve collisions with the configured conflict resolver. */
export const normalizeNumeric = (s: Series<NumericValue>, combine: SampleCombiner): Series<NumericValue> => normalizeSeries(s, combine);

/** Text (and raw histogram) series keep the value written last. */
export function normalizeLastWins<V>(s: Series<V>): Series<V> {
  return normalizeSeries(s, (_kept, incoming) => incoming);
}

/** Concatenates parts given oldest write first, so later parts come later among equal stamps. */
export function concatSeries<V>(parts: readonly Series<V>[]): Series<V> {
  if (parts.length === 1) return copySeries(parts[0]!);
  let n = 0;
  for (const p of parts) n += p.ts.length;
  // Sized once: a day of 10 s samples is 8640 of each (pushes regrow the arrays as they go).
  const ts = new Array<number>(n);
  const values = new Array<V>(n);
  const gens = parts.some((p) => p.gens !== undefined) ? new Array<number>(n) : undefined;
  let at = 0;
  for (const p of parts) {
    for (let i = 0; i < p.ts.length; i++, at++) {
      ts[at] = p.ts[i]!;
      values[at] = p.values[i]!;
      if (gens !== undefined) gens[at] = p.gens?.[i] ?? 0;
    }
  }
  return gens === undefined ? { ts, values } : { ts, values, gens };
}

function copySeries<V>(s: Series<V>): Series<V> {
  const out: Series<V> = { ts: s.ts.slice(), values: s.values.slice() };
  if (s.gens !== undefined) out.gens = s.gens.slice();
  return out;
}

/** The samples with start <= ts < end, of a time-ordered series. */
export function sliceSeries<V>(s: Series<V>, start: number, end: number): Series<V> {
  const from = lowerBound(s.ts, start);
  const to = lowerBound(s.ts, end);
  if (from === 0 && to === s.ts.length) return s; // the whole series, not a copy (every caller slices a series of its own)
  const out: Series<V> = { ts: s.ts.slice(from, to), values: s.values.slice(from, to) };
  if (s.gens !== undefined) out.gens = s.gens.slice(from, to);
  return out;
}

/** First index whose timestamp is >= t. */
export function lowerBound(ts: ArrayLike<number>, t: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
