// The 11 fields of interface §2.7 (and the fetch transforms built on them) computed per
// slot straight from a read's columns, with no object per period.
import { STDDEV_ZERO, type RollupFields } from './accumulator.js';
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
  return fieldInto(new Float64Array(slots.count), slots, spec, requireValues);
}

/** `fieldColumn` written into `out` (slots.count long), which it returns. */
export function fieldInto(out: Float64Array, slots: RollupSlots, spec: FieldSpec, requireValues = false): Float64Array {
  const n = slots.column(spec.q, 'n');
  const sum = spec.stat === 'count' ? n : slots.column(spec.q, 'sum');
  const sumsq = spec.stat === 'stddev' ? slots.column(spec.q, 'sumsq') : n;
  return statInto(out, spec.stat, { present: slots.present, n, sum, sumsq, valueN: requireValues ? slots.column('value', 'n') : null });
}

/** One quantity's columns per slot, as a field is computed from them. */
export interface StatColumns {
  /** 1 where the slot has data. */
  present: Uint8Array;
  n: Float64Array;
  /** Read only for a sum, a mean or a stddev. */
  sum: Float64Array;
  /** Read only for a stddev. */
  sumsq: Float64Array;
  /** The value quantity's counts, when a slot holding no measurement is to be blank (fetch cells). */
  valueN: Float64Array | null;
}

/** `stat` per slot into `out` (NaN: none), which it returns: what `fieldInto` computes from a quantity's columns. */
export function statInto(out: Float64Array, stat: FieldSpec['stat'], { present, n, sum, sumsq, valueN }: StatColumns): Float64Array {
  out.fill(NaN);
  if (stat === 'count') {
    for (let i = 0; i < out.length; i++) if (present[i] !== 0 && (valueN === null || valueN[i] !== 0)) out[i] = n[i]!;
    return out;
  }
  if (stat === 'sum') {
    for (let i = 0; i < out.length; i++) if (present[i] !== 0 && (valueN === null || valueN[i] !== 0) && sum[i]! - sum[i]! === 0) out[i] = sum[i]!;
    return out;
  }
  // The loops below are meanOf and stddevOf written out: each slot's value stays a double
  // (a value that may be null, or a NaN chosen in a branch, is boxed: one allocation a slot).
  if (stat === 'mean') {
    for (let i = 0; i < out.length; i++) {
      const k = n[i]!;
      if (present[i] === 0 || (valueN !== null && valueN[i] === 0) || k === 0) continue;
      const v = sum[i]! / k;
      if (v - v === 0) out[i] = v;
    }
    return out;
  }
  for (let i = 0; i < out.length; i++) {
    const k = n[i]!;
    if (present[i] === 0 || (valueN !== null && valueN[i] === 0) || k === 0) continue;
    const meanSq = sumsq[i]! / k;
    const variance = meanSq - (sum[i]! / k) ** 2;
    if (variance <= Math.abs(meanSq) * STDDEV_ZERO) out[i] = 0;
    else if (Math.sqrt(variance) - Math.sqrt(variance) === 0) out[i] = Math.sqrt(variance);
  }
  return out;
}
