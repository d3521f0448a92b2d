// Statistics over a list of numbers, shared by stats:*, window:*, group_by:* and the models.
// Every function takes the present values only (NULLs already dropped).
import { maxOf, minOf } from '../../model/extremes.js';
import { lookupTable } from '../../model/lookup-table.js';

export const present = (values: readonly (number | null)[]): number[] => values.filter((v): v is number => v !== null);

export function sum(v: readonly number[]): number {
  let s = 0;
  for (const x of v) s += x;
  return s;
}

export const mean = (v: readonly number[]): number => sum(v) / v.length;

/** Population variance: the mean squared distance from the mean. */
export function popvar(v: readonly number[]): number {
  const m = mean(v);
  let s = 0;
  for (const x of v) s += (x - m) ** 2;
  return s / v.length;
}

/** Sample variance (n − 1 in the denominator); NaN for fewer than two values. */
export const sampleVar = (v: readonly number[]): number => (v.length < 2 ? NaN : (popvar(v) * v.length) / (v.length - 1));

/**
 * The q-quantile (0 ≤ q ≤ 1) by linear interpolation between closest ranks (rank q·(n−1),
 * as PromQL's quantile and numpy's default): the median of [1, 2, 3, 4] is 2.5.
 */
export function quantile(v: readonly number[], q: number): number {
  const sorted = [...v].sort((a, b) => a - b);
  const rank = q * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/** What an aggregate gives for no values at all: counts are 0, everything else NULL. */
export type Aggregate = (v: readonly number[]) => number | null;

/** Aggregates over a set of values, by name: shared by window:*, rolling:*, aggregate:* and group_by:*. */
export const AGGREGATES: Record<string, Aggregate> = lookupTable({
  sum: (v) => (v.length === 0 ? null : sum(v)),
  mean: (v) => (v.length === 0 ? null : mean(v)),
  max: (v) => (v.length === 0 ? null : maxOf(v)),
  min: (v) => (v.length === 0 ? null : minOf(v)),
  count: (v) => v.length,
  stddev: (v) => (v.length === 0 ? null : Math.sqrt(popvar(v))),
  popvar: (v) => (v.length === 0 ? null : popvar(v)),
});

/** A strict-comparison table for the filter and each families. */
export const COMPARE: Record<string, (a: number, x: number) => boolean> = lookupTable({
  gt: (a, x) => a > x,
  geq: (a, x) => a >= x,
  eq: (a, x) => a === x,
  neq: (a, x) => a !== x,
  leq: (a, x) => a <= x,
  lt: (a, x) => a < x,
});
