// Rollup periods as columns (docs/rollups.md): for a run of consecutive periods, each of the
// 15 accumulator parts (QUANTITIES × PARTS, the order of model/rollup/chunk.ts) as one
// Float64Array, and a mask of the periods that hold data. `accumulate` builds a Map of objects
// (six per period, three per sample for the carry); reads of a metric-day from raw and ageing of
// a week go through here instead, allocating a few arrays per call. Every sum is taken in the
// same order as `accumulate` and `addInto` take it, so the bits are the same.
import type { Series } from '../series.js';
import type { NumericValue } from '../types.js';
import { emptyAccumulator, type RollupAccumulator, type RollupCarry } from './accumulator.js';
import { COLUMNS, PARTS, QUANTITIES, columnId, type Part, type Quantity } from './chunk.js';

const N = 0;
const SUM = 1;
const SUMSQ = 2;
const VALUE = columnId('value', 'n');
const DERIVATIVE = columnId('derivative', 'n');
const COUNTER = columnId('counter', 'n');
const DERIVATIVE2 = columnId('derivative2', 'n');
const COUNTER2 = columnId('counter2', 'n');

/** Periods [first + i·periodMs, first + (i + 1)·periodMs) for i < count, every part as a column. */
export class PeriodColumns {
  /** Column c is part c % 3 of quantity ⌊c / 3⌋; 0 where a period has no data. */
  readonly columns: Float64Array[];
  /** 1 where the period holds data. */
  readonly present: Uint8Array;

  constructor(
    readonly first: number,
    readonly periodMs: number,
    readonly count: number,
  ) {
    this.columns = Array.from({ length: COLUMNS }, () => new Float64Array(count));
    this.present = new Uint8Array(count);
  }

  /** Index of the period holding `ts` (may be outside [0, count)). */
  indexOf(ts: number): number {
    return Math.floor((ts - this.first) / this.periodMs);
  }

  startOf(i: number): number {
    return this.first + i * this.periodMs;
  }

  /** Periods holding data. */
  presentCount(): number {
    let n = 0;
    for (let i = 0; i < this.count; i++) n += this.present[i]!;
    return n;
  }

  /** Period i as an accumulator (a new object). */
  row(i: number): RollupAccumulator {
    const acc = emptyAccumulator();
    QUANTITIES.forEach((q, k) => {
      acc[q].n = this.columns[3 * k + N]![i]!;
      acc[q].sum = this.columns[3 * k + SUM]![i]!;
      acc[q].sumsq = this.columns[3 * k + SUMSQ]![i]!;
    });
    return acc;
  }

  /** Adds period i of `from` into period j, part by part (`addInto`'s order: this one's first). */
  addPeriod(j: number, from: PeriodColumns, i: number): void {
    const into = this.columns;
    const src = from.columns;
    for (let c = 0; c < COLUMNS; c++) into[c]![j] += src[c]![i]!;
    this.present[j] = 1;
  }

  /**
   * These periods summed per period of `periodMs` (a multiple of this one's, `first` aligned to
   * it): the coarser level, each period the sum of the finer ones it holds, in time order.
   */
  coarser(periodMs: number): PeriodColumns {
    const first = this.first - (this.first % periodMs);
    const end = this.first + this.count * this.periodMs;
    const out = new PeriodColumns(first, periodMs, Math.ceil((end - first) / periodMs));
    for (let i = 0; i < this.count; i++) if (this.present[i] === 1) out.addPeriod(out.indexOf(this.startOf(i)), this, i);
    return out;
  }

  /** The periods holding data as a compact source of columns (what a read adds to its slots). */
  compact(): CompactPeriods {
    const slots = new Int32Array(this.presentCount());
    for (let i = 0, k = 0; i < this.count; i++) if (this.present[i] === 1) slots[k++] = i;
    const columns = slots.length === this.count ? this.columns : this.columns.map((col) => gather(col, slots));
    return new CompactPeriods(this.first, this.periodMs, slots, columns);
  }
}

/** Periods holding data, columns aligned with `slots` (period indexes from `first`): the shape of a stored chunk's columns. */
export class CompactPeriods {
  constructor(
    readonly first: number,
    readonly periodMs: number,
    readonly slots: Int32Array,
    private readonly columns: readonly Float64Array[],
  ) {}

  column(q: Quantity, part: Part): Float64Array {
    return this.columns[QUANTITIES.indexOf(q) * PARTS.length + PARTS.indexOf(part)]!;
  }

  /** Heap bytes, for a cache's bound. */
  get bytes(): number {
    return 200 + this.slots.length * (4 + COLUMNS * 8);
  }
}

/** The carry as scalars while accumulating (no object per sample). */
interface Carry {
  has: boolean;
  ts: number;
  value: number;
  hasRate: boolean;
  rateTs: number;
  rate: number;
  hasCounterRate: boolean;
  counterRateTs: number;
  counterRate: number;
}

function carryOf(c: RollupCarry | null): Carry {
  return {
    has: c !== null,
    ts: c?.ts ?? 0,
    value: c?.value ?? 0,
    hasRate: c?.rate != null,
    rateTs: c?.rate?.ts ?? 0,
    rate: c?.rate?.value ?? 0,
    hasCounterRate: c?.counterRate != null,
    counterRateTs: c?.counterRate?.ts ?? 0,
    counterRate: c?.counterRate?.value ?? 0,
  };
}

function carryFrom(c: Carry): RollupCarry | null {
  if (!c.has) return null;
  return { ts: c.ts, value: c.value, rate: c.hasRate ? { ts: c.rateTs, value: c.rate } : null, counterRate: c.hasCounterRate ? { ts: c.counterRateTs, value: c.counterRate } : null };
}

/**
 * Books the non-null, finite samples of `s` (ascending ms) stamped in `into`'s periods, as
 * `accumulate` does (samples outside still carry: they are no period's but their successors'
 * predecessor); `carry` is the state after the samples before `s`. Returns the carry after the last sample.
 * `from`/`to`: the samples of `s` to take (indexes), all by default.
 */
export function accumulateColumns(s: Series<NumericValue>, into: PeriodColumns, carry: RollupCarry | null, from = 0, to = s.ts.length): RollupCarry | null {
  const c = carryOf(carry);
  const cols = into.columns;
  const present = into.present;
  for (let k = from; k < to; k++) {
    const raw = s.values[k];
    if (raw === null || raw === undefined) continue;
    const v = typeof raw === 'number' ? raw : Number(raw);
    if (!Number.isFinite(v)) continue;
    const ts = s.ts[k]!;
    const i = into.indexOf(ts);
    const inside = i >= 0 && i < into.count;
    if (inside) {
      present[i] = 1;
      add(cols, VALUE, i, v);
    }
    if (!c.has || ts <= c.ts) {
      // No predecessor (or not an earlier one): the rates carried stay as they were.
      c.has = true;
      c.ts = ts;
      c.value = v;
      continue;
    }
    const rate = (v - c.value) / ((ts - c.ts) / 1000);
    if (inside) {
      add(cols, DERIVATIVE, i, rate);
      if (c.hasRate) add(cols, DERIVATIVE2, i, (rate - c.rate) / ((ts - c.rateTs) / 1000));
    }
    if (v >= c.value) {
      if (inside) {
        add(cols, COUNTER, i, rate);
        if (c.hasCounterRate) add(cols, COUNTER2, i, (rate - c.counterRate) / ((ts - c.counterRateTs) / 1000));
      }
      c.hasCounterRate = true;
      c.counterRateTs = ts;
      c.counterRate = rate;
    }
    c.hasRate = true;
    c.rateTs = ts;
    c.rate = rate;
    c.ts = ts;
    c.value = v;
  }
  return carryFrom(c);
}

function add(cols: Float64Array[], at: number, i: number, x: number): void {
  cols[at]![i]++;
  cols[at + SUM]![i] += x;
  cols[at + SUMSQ]![i] += x * x;
}

const NO_PERIODS = new PeriodColumns(0, 1, 0);

/** The carry after the samples of `s` (as `accumulate(s, …, carry).carry`), booking nothing. */
export function carryAfter(s: Series<NumericValue>, carry: RollupCarry | null): RollupCarry | null {
  return accumulateColumns(s, NO_PERIODS, carry);
}

/** col[i] for each i of `at`, in a new array. */
function gather(col: Float64Array, at: Int32Array): Float64Array {
  const out = new Float64Array(at.length);
  for (let k = 0; k < at.length; k++) out[k] = col[at[k]!]!;
  return out;
}
