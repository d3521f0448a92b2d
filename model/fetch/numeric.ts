// Numeric fetch transforms (interface §4.3): one value per slot from the slot's rollup
// accumulator, which holds every measurement of the slot (and the rates they complete).
import { emptyAccumulator, type RollupAccumulator } from '../rollup/accumulator.js';
import { FIELD_SPECS, fieldColumn, type FieldSpec } from '../rollup/fields.js';
import { RollupSlots } from '../rollup/slots.js';
import { lookupTable } from '../lookup-table.js';

export const NUMERIC_TRANSFORMS: Record<string, FieldSpec> = lookupTable({
  average: FIELD_SPECS.value,
  /** The plain sum of the slot's measurements. */
  sum: { q: 'value', stat: 'sum' },
  count: FIELD_SPECS.count,
  counter: FIELD_SPECS.counter,
  counter_stddev: FIELD_SPECS.counter_stddev,
  derivative: FIELD_SPECS.derivative,
  derivative_stddev: FIELD_SPECS.derivative_stddev,
  stddev: FIELD_SPECS.stddev,
});

/** The transform per slot: NaN where the slot has no measurement or no finite value. */
export function numericValues(name: string, slots: RollupSlots): Float64Array {
  return fieldColumn(slots, NUMERIC_TRANSFORMS[name]!, true);
}

/** The transform's value of one slot; null when the slot has no measurement. */
export function numericCell(name: string, acc: RollupAccumulator | null): number | null {
  const one = new RollupSlots(0, 1, 1);
  one.replace(0, acc === null ? null : { ...emptyAccumulator(), ...acc });
  const v = numericValues(name, one)[0]!;
  return Number.isNaN(v) ? null : v;
}
