// The 11 fields of interface §2.7 (and the fetch transforms built on them) computed per
// slot straight from a read's columns, with no object per period.
import { meanOf, stddevOf, type RollupFields } from './accumulator.js';
import { columnId, type Quantity } from './chunk.js';
import type { RollupSlots } from './slots.js';

/** Which quantity a field is taken from, and how. */
export interface FieldSpec {
  q: Quantity;
  stat: 'count' | 'sum' | 'mean' | 'stddev';
}

export const FIELD_SPECS: Record<keyof RollupFields, FieldSpec> = {
  count: { q: 'value', stat: 'count' },
  value: { q: 'value', stat: 'mean' },
  stddev: { q: 'value', stat: 'stddev' },
  derivative: { q: 'derivative', stat: 'mean' },
  derivative_stddev: { q: 'derivative', stat: 'stddev' },
  counter: { q: 'counter', stat: 'mean' },
  counter_stddev: { q: 'counter', stat: 'stddev' },
  derivative2: { q: 'derivative2', stat: 'mean' },
  derivative2_stddev: { q: 'derivative2', stat: 'stddev' },
  counter2: { q: 'counter2', stat: 'mean' },
  counter2_stddev: { q: 'counter2', stat: 'stddev' },
};

/** The chunk columns `fieldColumn` reads for a field (model/rollup/chunk.ts ids). */
export function fieldColumns(spec: FieldSpec, requireValues = false): number[] {
  const out = new Set([columnId(spec.q, 'n')]);
  if (spec.stat !== 'count') out.add(columnId(spec.q, 'sum'));
  if (spec.stat === 'stddev') out.add(columnId(spec.q, 'sumsq'));
  if (requireValues) out.add(columnId('value', 'n'));
  return [...out];
}

/**
 * The field per slot: NaN where the slot has no data, where the field has nothing to
 * average, or where the value is not finite. `requireValues` also blanks slots holding no
 * measurement (value count 0), as fetch cells do.
 */
export function fieldColumn(slots: RollupSlots, spec: FieldSpec, requireValues = false): Float64Array {
  const out = new Float64Array(slots.count).fill(NaN);
  const n = slots.column(spec.q, 'n');
  const valueN = requireValues ? slots.column('value', 'n') : null;
  const sum = spec.stat === 'count' ? null : slots.column(spec.q, 'sum');
  const sumsq = spec.stat === 'stddev' ? slots.column(spec.q, 'sumsq') : null;
  for (let i = 0; i < slots.count; i++) {
    if (slots.present[i] === 0 || (valueN !== null && valueN[i] === 0)) continue;
    let v: number | null;
    if (spec.stat === 'count') v = n[i]!;
    else if (spec.stat === 'sum') v = sum![i]!;
    else if (spec.stat === 'mean') v = meanOf(n[i]!, sum![i]!);
    else v = stddevOf(n[i]!, sum![i]!, sumsq![i]!);
    if (v !== null && Number.isFinite(v)) out[i] = v;
  }
  return out;
}
