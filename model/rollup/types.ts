// The `type` parameter of GET /rollup (interface §4.4): which rollup value a tuple carries.
import { rollupFields, type RollupAccumulator, type RollupFields } from './accumulator.js';
import { FIELD_SPECS, fieldColumn, fieldColumns } from './fields.js';
import type { RollupSlots } from './slots.js';
import { lookupTable } from '../lookup-table.js';
import { formatSecMs } from '../timestamp.js';
import { asEpochMs } from '../types.js';

/** One of interface §2.7's fields. */
export type RollupField = keyof RollupFields;
export type RollupType = RollupField | 'all';

const ALIASES: Record<string, RollupType> = lookupTable({
  count: 'count',
  average: 'value',
  derive: 'derivative',
  derivative: 'derivative',
  counter: 'counter',
  average_stddev: 'stddev',
  derive_stddev: 'derivative_stddev',
  derivative_stddev: 'derivative_stddev',
  counter_stddev: 'counter_stddev',
  derive2: 'derivative2',
  derivative2: 'derivative2',
  counter2: 'counter2',
  derive2_stddev: 'derivative2_stddev',
  derivative2_stddev: 'derivative2_stddev',
  counter2_stddev: 'counter2_stddev',
  all: 'all',
});

export const ROLLUP_TYPE_NAMES = Object.keys(ALIASES);

export function parseRollupType(text: string | undefined): RollupType | null {
  if (text === undefined || text === '') return 'value';
  return ALIASES[text] ?? null;
}

/** The tuple value of one period: a number or null, or the 11-field object for `all`. */
export function rollupValue(a: RollupAccumulator | null, type: RollupType): number | null | RollupFields {
  if (a === null) return null;
  const fields = rollupFields(a);
  return type === 'all' ? fields : fields[type];
}

/**
 * `[[ts_s, value], ...]` of a read, one tuple per slot; null where there is no data or the
 * value is not finite. Built as text from the columns (a metric-day is 1440 tuples).
 * Timestamps are whole seconds, or `<seconds>.<3 digits>` on every tuple when the span is not
 * whole seconds (interface §4.4: "when the span needs that resolution", §2.2's form).
 */
export function rollupTuplesJson(slots: RollupSlots, type: RollupType): string {
  if (type !== 'all') return rollupValuesJson(slots.first, slots.spanMs, fieldColumn(slots, FIELD_SPECS[type]));
  return tuplesJson(slots.first, slots.spanMs, slots.count, (i) => {
    const row = slots.row(i);
    return row === null ? 'null' : JSON.stringify(rollupFields(row), finiteOrNull);
  });
}

/**
 * `rollupTuplesJson` of one field's values per slot (NaN, ±∞: null), slot i starting at
 * first + i·spanMs. A shard answers a read with the values; the node writes the text, so the two
 * threads share the work of a dashboard's reads.
 */
export function rollupValuesJson(first: number, spanMs: number, values: Float64Array): string {
  if (spanMs % 1000 === 0 && first % 1000 === 0) {
    // Whole seconds: JSON.stringify writes the same text (NaN and ±∞ as null) at a third of the cost
    // of String() per number and a template per tuple.
    const tuples = new Array<[number, number | null]>(values.length);
    for (let i = 0; i < values.length; i++) tuples[i] = [(first + i * spanMs) / 1000, Number.isNaN(values[i]!) ? null : values[i]!];
    return JSON.stringify(tuples);
  }
  return tuplesJson(first, spanMs, values.length, (i) => {
    const v = values[i]!;
    return Number.isFinite(v) ? String(v) : 'null';
  });
}

function tuplesJson(first: number, spanMs: number, count: number, valueAt: (i: number) => string): string {
  const stamp = spanMs % 1000 === 0 && first % 1000 === 0 ? wholeSeconds() : (ms: number) => formatSecMs(asEpochMs(ms));
  let out = '[';
  for (let i = 0; i < count; i++) out += `${i === 0 ? '' : ','}[${stamp(first + i * spanMs)},${valueAt(i)}]`;
  return `${out}]`;
}

/**
 * Epoch ms as whole seconds in decimal, the leading digits kept from the last call: epoch
 * seconds are past V8's small integers, so each String() of one is a slow double conversion
 * (a quarter of a /rollup read's time in the shard's profile), and a read's stamps share them.
 */
function wholeSeconds(): (ms: number) => string {
  let high = NaN;
  let head = '';
  return (ms) => {
    const s = ms / 1000;
    if (s < 0 || s >= 1e15) return String(s);
    const h = Math.floor(s / 1e5);
    if (h === 0) return String(s);
    if (h !== high) {
      high = h;
      head = String(h);
    }
    return head + String(s - h * 1e5).padStart(5, '0');
  };
}

const finiteOrNull = (_k: string, v: unknown): unknown => (typeof v === 'number' && !Number.isFinite(v) ? null : v);

/** The chunk columns a read for `type` uses (undefined: all of them). */
export const rollupTypeColumns = (type: RollupType): number[] | undefined => (type === 'all' ? undefined : fieldColumns(FIELD_SPECS[type]));
