// Numeric fetch transforms (interface §4.3): one value per slot from the slot's rollup
// accumulator, which holds every measurement of the slot (and the rates they complete).
import { rollupFields, type RollupAccumulator, type RollupFields } from '../rollup/accumulator.js';

const pick =
  (field: keyof RollupFields) =>
  (f: RollupFields): number | null =>
    f[field];

export const NUMERIC_TRANSFORMS: Record<string, (f: RollupFields, acc: RollupAccumulator) => number | null> = {
  average: pick('value'),
  /** The plain sum of the slot's measurements. */
  sum: (_f, acc) => acc.value.sum,
  count: pick('count'),
  counter: pick('counter'),
  counter_stddev: pick('counter_stddev'),
  derivative: pick('derivative'),
  derivative_stddev: pick('derivative_stddev'),
  stddev: pick('stddev'),
};

/** The transform's value of one slot; null when the slot has no measurement. */
export function numericCell(name: string, acc: RollupAccumulator | null): number | null {
  if (acc === null || acc.value.n === 0) return null;
  const v = NUMERIC_TRANSFORMS[name]!(rollupFields(acc), acc);
  return v === null || !Number.isFinite(v) ? null : v;
}
