// `/write/nnt` items (interface §4.6): a rollup record given by its summary fields, or by
// `parts` = [sub-period seconds, [{same fields}, ...]], one object per sub-interval.
import { emptyAccumulator, momentsOf, type RollupAccumulator } from './accumulator.js';

type Obj = Record<string, unknown>;

const FIELDS = ['value', 'derivative', 'counter', 'stddev', 'derivative_stddev', 'counter_stddev'] as const;
/** A rollup record counts its samples in 32 bits (docs/rollups.md). */
export const MAX_COUNT = 0xffff_ffff;
/**
 * The parts of one item span at most a day: IRONdb's parts make up one period of the smallest
 * rollup (its example: 5 × 60 s for 300 s), so a longer list is a mistake, not data.
 */
export const MAX_PARTS_SPAN_S = 86_400;

/** One rollup record of an item: its start relative to the item's offset, and its data. */
export type NntRecord = [offsetMs: number, acc: RollupAccumulator];

/**
 * The records an item describes, or why it cannot be stored: its summary as one record at the
 * offset, or with `parts` one record per sub-interval, the i-th at offset + i × sub-period
 * (IRONdb's data-submission docs: "one JSON object describing the data at each interval").
 * A part with count 0 is an interval without samples and stores nothing.
 */
export function nntRecords(item: Obj): NntRecord[] | string {
  const parts = item.parts;
  if (noParts(parts)) {
    const acc = summaryAccumulator(item, '');
    return typeof acc === 'string' ? acc : [[0, acc]];
  }
  if (!Array.isArray(parts) || parts.length !== 2 || !Array.isArray(parts[1])) return "'parts' must be [sub_period_seconds, [ {count, value, ...}, ... ]]";
  const [period, list] = parts as [unknown, unknown[]];
  if (typeof period !== 'number' || !Number.isInteger(period) || period <= 0) return "'parts[0]' must be the sub-period in seconds (a positive integer)";
  if (list.length === 0) return "'parts[1]' must hold one object per sub-interval";
  if (period * list.length > MAX_PARTS_SPAN_S) return `'parts' span ${period} s × ${list.length} intervals, more than ${MAX_PARTS_SPAN_S} s`;
  const records: NntRecord[] = [];
  let total = 0;
  for (const [i, part] of list.entries()) {
    if (typeof part !== 'object' || part === null || Array.isArray(part)) return `'parts[1][${i}]' must be an object`;
    const one = summaryAccumulator(part as Obj, `parts[1][${i}].`);
    if (typeof one === 'string') return one;
    total += one.value.n;
    if (total > MAX_COUNT) return `'parts' counts add up to more than ${MAX_COUNT} samples`;
    if (one.value.n > 0) records.push([i * period * 1000, one]);
  }
  return records;
}

/**
 * Absent, null, or gosnowth's zero value `[0, null]` (its Go client always sends the field):
 * the item's own summary fields describe it.
 */
function noParts(parts: unknown): boolean {
  if (parts === undefined || parts === null) return true;
  return Array.isArray(parts) && parts.length === 2 && parts[0] === 0 && (parts[1] === null || (Array.isArray(parts[1]) && parts[1].length === 0));
}

/**
 * count samples of mean `value` and population stddev `stddev`; the rates are taken as
 * `count` rates (the item does not say how many it averaged). No second-order data.
 */
function summaryAccumulator(o: Obj, at: string): RollupAccumulator | string {
  if (typeof o.count !== 'number' || !Number.isInteger(o.count) || o.count < 0 || o.count > MAX_COUNT) return `'${at}count' must be an integer from 0 to ${MAX_COUNT}`;
  for (const f of FIELDS) if (typeof o[f] !== 'number' || !Number.isFinite(o[f])) return `'${at}${f}' must be a finite number`;
  const n = o.count;
  const num = (f: (typeof FIELDS)[number]) => o[f] as number;
  const acc = emptyAccumulator();
  if (n === 0) return acc;
  acc.value = momentsOf(n, num('value'), num('stddev'));
  acc.derivative = momentsOf(n, num('derivative'), num('derivative_stddev'));
  acc.counter = momentsOf(n, num('counter'), num('counter_stddev'));
  for (const m of [acc.value, acc.derivative, acc.counter]) if (!Number.isFinite(m.sum) || !Number.isFinite(m.sumsq)) return `'${at}' count × value overflows a double`;
  return acc;
}
