// Rollup periods as columns (docs/rollups.md): for a run of consecutive periods, each of the
// 15 accumulator parts (QUANTITIES × PARTS, the order of model/rollup/chunk.ts) as one
// Float64Array, and a mask of the periods that hold data. `accumulate` builds a Map of objects
// (six per period, three per sample for the carry); reads of a metric-day from raw and ageing of
// a week go through here instead, allocating a few arrays per call. Every sum is taken in the
// same order as `accumulate` and `addInto` take it, so the bits are the same.
import { BufferPool } from '../buffer-pool.js';
import type { DenseSeries } from '../dense-series.js';
import { emptyAccumulator, type RollupAccumulator, type RollupCarry } from './accumulator.js';
import { COLUMNS, PARTS, QUANTITIES, columnId, type Part, type Quantity } from './chunk.js';
import { scratchInt32, scratchMemory } from '../scratch.js';
import { statInto, type FieldSpec } from './fields.js';

const N = 0;
const SUM = 1;
const SUMSQ = 2;
const VALUE = columnId('value', 'n');
const DERIVATIVE = columnId('derivative', 'n');
const COUNTER = columnId('counter', 'n');
const DERIVATIVE2 = columnId('derivative2', 'n');
const COUNTER2 = columnId('counter2', 'n');

/** The columns of the `value` quantity (n, Σx, Σx²): all an average, a count or a stddev reads. */
const VALUE_COLUMNS = PARTS.length;
/** Where a values-only set of columns has no column. */
const NO_COLUMN = new Float64Array(0);

/** True when every column of `columns` (chunk column ids) is one of the `value` quantity's. */
export const valuesOnly = (columns: readonly number[]): boolean => columns.every((c) => c < VALUE_COLUMNS);

/**
 * Periods [first + i·periodMs, first + (i + 1)·periodMs) for i < count, every part as a column;
 * or, `valuesOnly`, only the value quantity's (the rates need the carry and five times the work,
 * and most reads are averages).
 */
export class PeriodColumns {
  /** Column c is part c % 3 of quantity ⌊c / 3⌋; 0 where a period has no data (empty: not computed). */
  readonly columns: Float64Array[];
  /** 1 where the period holds data. */
  readonly present: Uint8Array;
  /** The memory of all the columns and the mask, when it came from the pool (`pooled`): given back by `release`. */
  private memory: ArrayBuffer | null = null;

  constructor(
    readonly first: number,
    readonly periodMs: number,
    readonly count: number,
    readonly valuesOnly = false,
    private readonly from: 'own' | 'pool' | 'scratch' = 'own',
  ) {
    // One backing store for every column and the mask: on Node 24 each typed array made with its
    // own costs ≈ 6 µs (a zeroed allocation the GC tracks), a view of a shared one ≈ 0.1 µs.
    const computed = valuesOnly ? VALUE_COLUMNS : COLUMNS;
    const bytes = computed * count * 8 + count;
    const pooled = from === 'pool' && !valuesOnly;
    const [memory, at] = from === 'scratch' ? scratchMemory(bytes) : [pooled ? takeMemory(bytes) : new ArrayBuffer(bytes), 0];
    if (pooled) this.memory = memory;
    this.columns = Array.from({ length: COLUMNS }, (_, c) => (c >= computed ? NO_COLUMN : new Float64Array(memory, at + c * count * 8, count)));
    this.present = new Uint8Array(memory, at + computed * count * 8, count);
  }

  /**
   * Values-only columns of scratch memory (model/scratch.ts), for periods that die with the read
   * that computes them: a fetch of a thousand streams at a period no level keeps made a backing
   * store per stream (≈ 2 ms of a 30 ms read).
   */
  static scratchValues(first: number, periodMs: number, count: number): PeriodColumns {
    return new PeriodColumns(first, periodMs, count, true, 'scratch');
  }

  /**
   * Complete columns whose memory comes from the pool and goes back to it with `release`, for
   * a pass that knows when it is done with them (ageing: see `takeMemory`).
   */
  static pooled(first: number, periodMs: number, count: number): PeriodColumns {
    return new PeriodColumns(first, periodMs, count, false, 'pool');
  }

  /** Gives pooled memory back: nothing may read these columns (or views of them) after. */
  release(): void {
    if (this.memory !== null) memoryPool.give(this.memory);
    this.memory = null;
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

  /**
   * These periods summed per period of `periodMs` (a multiple of this one's, `first` aligned to
   * it): the coarser level, each period the sum of the finer ones it holds, in time order.
   */
  coarser(periodMs: number): PeriodColumns {
    if (this.valuesOnly) throw new Error('BUG: coarser periods are summed from complete ones');
    const first = this.first - (this.first % periodMs);
    const end = this.first + this.count * this.periodMs;
    const out = new PeriodColumns(first, periodMs, Math.ceil((end - first) / periodMs), false, this.memory !== null ? 'pool' : 'own');
    // Column by column, each coarse period the sum of its finer ones in time order (the same
    // additions in the same order as adding period by period, so the same bits),
    // so each pass runs down two arrays instead of touching 15 per period.
    const into = coarseIndexes(this, out);
    for (let c = 0; c < COLUMNS; c++) addIndexed(out.columns[c]!, this.columns[c]!, into);
    return out;
  }

  /** The periods holding data as a compact source of columns (what a read adds to its slots); of scratch columns, one for that read alone. */
  compact(): CompactPeriods {
    const scratch = this.from === 'scratch';
    const slots = scratch ? scratchInt32(this.presentCount()) : new Int32Array(this.presentCount());
    for (let i = 0, k = 0; i < this.count; i++) if (this.present[i] === 1) slots[k++] = i;
    const columns = slots.length === this.count ? this.columns : this.columns.map((col) => (col === NO_COLUMN ? col : gather(col, slots)));
    return new CompactPeriods(this.first, this.periodMs, slots, columns, this.valuesOnly, scratch);
  }
}

/** Periods holding data, columns aligned with `slots` (period indexes from `first`): the shape of a stored chunk's columns. */
export class CompactPeriods {
  constructor(
    readonly first: number,
    readonly periodMs: number,
    readonly slots: Int32Array,
    private readonly columns: readonly Float64Array[],
    /** Only the value quantity's columns were computed. */
    readonly valuesOnly = false,
    /** Scratch memory, for one read (model/rollup/slots.ts `PeriodSource`). */
    readonly transient = false,
  ) {}

  column(q: Quantity, part: Part): Float64Array {
    const c = columnId(q, part);
    if (this.valuesOnly && c >= VALUE_COLUMNS) throw new Error(`BUG: ${q}.${part} read from periods computed for values only`);
    return this.columns[c]!;
  }

  /** Heap bytes, for a cache's bound. */
  get bytes(): number {
    return 200 + this.slots.length * (4 + (this.valuesOnly ? VALUE_COLUMNS : COLUMNS) * 8);
  }

  /** The last coarser form asked for (`per`): a dashboard asks the same span again. */
  private coarse: CompactPeriods | null = null;

  /**
   * These periods summed per period of `periodMs` (at least COARSEN_MIN of these) from `first`
   * on, each the sum of its finer ones in time order from 0: the additions a read's slot of that
   * span starting at `first` would take, done once. Kept for the next call with the same span
   * (at most a tenth of these periods' bytes, beside them in a cache that counts only theirs).
   */
  per(periodMs: number): CompactPeriods {
    if (periodMs === this.periodMs) return this;
    const ratio = periodMs / this.periodMs;
    if (!Number.isInteger(ratio) || ratio < COARSEN_MIN) throw new Error(`BUG: periods of ${this.periodMs} ms are not summed per ${periodMs} ms`);
    if (this.coarse?.periodMs === periodMs) return this.coarse;
    const into = new Int32Array(this.slots.length);
    const starts: number[] = [];
    for (let j = 0; j < this.slots.length; j++) {
      const k = Math.floor(this.slots[j]! / ratio);
      if (starts[starts.length - 1] !== k) starts.push(k);
      into[j] = starts.length - 1;
    }
    const columns = this.columns.map((col) => (col === NO_COLUMN ? col : new Float64Array(starts.length)));
    columns.forEach((col, c) => col !== NO_COLUMN && addIndexed(col, this.columns[c]!, into));
    this.coarse = new CompactPeriods(this.first, periodMs, Int32Array.from(starts), columns, this.valuesOnly);
    return this.coarse;
  }
}

/** Fewest finer periods a coarser one sums for `CompactPeriods.per` (bounds its memory to a tenth). */
export const COARSEN_MIN = 10;

/**
 * Books the finite samples of `s` (ascending ms) stamped in `into`'s periods, as `accumulate`
 * does (samples outside still carry: they are no period's but their successors' predecessor);
 * `carry` is the state after the samples before `s`. Returns the carry after the last sample.
 * `from`/`to`: the samples of `s` to take (indexes), all by default.
 *
 * A period's samples are summed in locals and added to its columns once: the same additions in
 * the same order as adding each sample to the column (which starts at 0, and `s` ascends, so a
 * period is met in one run), at a fifteenth of the memory traffic.
 */
export function accumulateColumns(s: DenseSeries, into: PeriodColumns, carry: RollupCarry | null, from = 0, to = s.ts.length): RollupCarry | null {
  const tss = s.ts;
  const vals = s.values;
  const { first, periodMs, count } = into;
  let has = carry !== null;
  let cTs = carry?.ts ?? 0;
  let cValue = carry?.value ?? 0;
  let hasRate = carry?.rate != null;
  let rateTs = carry?.rate?.ts ?? 0;
  let rate0 = carry?.rate?.value ?? 0;
  let hasCounterRate = carry?.counterRate != null;
  let counterRateTs = carry?.counterRate?.ts ?? 0;
  let counterRate0 = carry?.counterRate?.value ?? 0;
  const cols = into.columns;
  let k = from;
  while (k < to) {
    const i = Math.floor((tss[k]! - first) / periodMs);
    const start = first + i * periodMs;
    const end = start + periodMs;
    let vn = 0, vs = 0, vq = 0, dn = 0, ds = 0, dq = 0, cn = 0, cs = 0, cq = 0;
    let d2n = 0, d2s = 0, d2q = 0, c2n = 0, c2s = 0, c2q = 0;
    for (; k < to; k++) {
      const ts = tss[k]!;
      if (ts >= end || ts < start) break; // (an earlier stamp only in input that does not ascend)
      const v = vals[k]!;
      if (!(v - v === 0)) continue; // NaN, ±∞
      vn++;
      vs += v;
      vq += v * v;
      if (!has || ts <= cTs) {
        // No predecessor (or not an earlier one): the rates carried stay as they were.
        has = true;
        cTs = ts;
        cValue = v;
        continue;
      }
      const rate = (v - cValue) / ((ts - cTs) / 1000);
      dn++;
      ds += rate;
      dq += rate * rate;
      if (hasRate) {
        const r2 = (rate - rate0) / ((ts - rateTs) / 1000);
        d2n++;
        d2s += r2;
        d2q += r2 * r2;
      }
      if (v >= cValue) {
        cn++;
        cs += rate;
        cq += rate * rate;
        if (hasCounterRate) {
          const r2 = (rate - counterRate0) / ((ts - counterRateTs) / 1000);
          c2n++;
          c2s += r2;
          c2q += r2 * r2;
        }
        hasCounterRate = true;
        counterRateTs = ts;
        counterRate0 = rate;
      }
      hasRate = true;
      rateTs = ts;
      rate0 = rate;
      cTs = ts;
      cValue = v;
    }
    if (vn === 0 || i < 0 || i >= count) continue;
    into.present[i] = 1;
    book(cols, VALUE, i, vn, vs, vq);
    book(cols, DERIVATIVE, i, dn, ds, dq);
    book(cols, COUNTER, i, cn, cs, cq);
    book(cols, DERIVATIVE2, i, d2n, d2s, d2q);
    book(cols, COUNTER2, i, c2n, c2s, c2q);
  }
  if (!has) return null;
  return {
    ts: cTs,
    value: cValue,
    rate: hasRate ? { ts: rateTs, value: rate0 } : null,
    counterRate: hasCounterRate ? { ts: counterRateTs, value: counterRate0 } : null,
  };
}

/**
 * `accumulateColumns` for the value quantity alone, into values-only columns: no rates, so no
 * carry. The same sums in the same order as `accumulateColumns` takes them.
 */
export function accumulateValues(s: DenseSeries, into: PeriodColumns, from = 0, to = s.ts.length): void {
  const { first, periodMs, present } = into;
  accumulateValueColumns(s, { first, periodMs, present, n: into.columns[VALUE]!, sum: into.columns[VALUE + SUM]!, sumsq: into.columns[VALUE + SUMSQ]! }, from, to);
}

/** Where `accumulateValueColumns` adds: the value quantity's columns of periods [first + i·periodMs, …). */
interface ValueColumns {
  first: number;
  periodMs: number;
  present: Uint8Array;
  n: Float64Array;
  sum: Float64Array;
  sumsq: Float64Array;
}

/** `accumulateValues` into bare columns (present.length periods). */
function accumulateValueColumns(s: DenseSeries, into: ValueColumns, from: number, to: number): void {
  const tss = s.ts;
  const vals = s.values;
  // The columns held in locals: looked up per period, they took half the time.
  const { first, periodMs, present } = into;
  const count = present.length;
  const nCol = into.n;
  const sumCol = into.sum;
  const sumsqCol = into.sumsq;
  let k = from;
  while (k < to) {
    const i = Math.floor((tss[k]! - first) / periodMs);
    // Stamps ascend: the period's samples run until one reaches its end.
    const end = first + (i + 1) * periodMs;
    let n = 0;
    let sum = 0;
    let sumsq = 0;
    for (; k < to; k++) {
      if (tss[k]! >= end) break;
      const v = vals[k]!;
      if (!(v - v === 0)) continue; // NaN, ±∞
      n++;
      sum += v;
      sumsq += v * v;
    }
    if (n === 0 || i < 0 || i >= count) continue;
    present[i] = 1;
    nCol[i] += n;
    sumCol[i] += sum;
    sumsqCol[i] += sumsq;
  }
}

/**
 * A value-quantity field (a fetch's average, sum, count or stddev) per period of `periodMs` from
 * `first`, straight from raw samples into `out` (NaN: none): what `accumulateValues` into values-only
 * columns and `statInto` of them give, bit for bit, without a PeriodColumns, its compact copy and
 * a RollupSlots per stream (a 1000-stream fetch at a period no level keeps: ≈ 4 µs a stream).
 * Its columns are reused from call to call (it is synchronous, so no read shares them).
 */
export function valueStatInto(out: Float64Array, s: DenseSeries, first: number, periodMs: number, stat: FieldSpec['stat']): Float64Array {
  const columns = valueScratch(out.length, first, periodMs);
  accumulateValueColumns(s, columns, 0, s.ts.length);
  return statInto(out, stat, { ...columns, valueN: columns.n });
}

let reusedValueColumns: ValueColumns = { first: 0, periodMs: 1, present: new Uint8Array(0), n: new Float64Array(0), sum: new Float64Array(0), sumsq: new Float64Array(0) };

/** The reused value columns, `count` periods long, zeroed. */
function valueScratch(count: number, first: number, periodMs: number): ValueColumns {
  const c = reusedValueColumns;
  if (c.present.length !== count) {
    reusedValueColumns = { first, periodMs, present: new Uint8Array(count), n: new Float64Array(count), sum: new Float64Array(count), sumsq: new Float64Array(count) };
    return reusedValueColumns;
  }
  c.first = first;
  c.periodMs = periodMs;
  c.present.fill(0);
  c.n.fill(0);
  c.sum.fill(0);
  c.sumsq.fill(0);
  return c;
}

// The loops below are functions of their own with nothing after the loop: V8 compiles a long
// loop while it runs (on-stack replacement), before the code after it has ever run, and throws
// that code away on reaching it, at every call (issue 31: 117 deoptimizations summing coarser
// levels for 50 metrics while the loop sat inside `coarser`, with a store after it).

/** Per finer period, the index of the coarser one holding it (-1 where it holds no data); marks those coarser periods present. */
function coarseIndexes(fine: PeriodColumns, coarse: PeriodColumns): Int32Array {
  const into = new Int32Array(fine.count);
  for (let i = 0; i < fine.count; i++) {
    const j = fine.present[i] === 1 ? coarse.indexOf(fine.startOf(i)) : -1;
    into[i] = j;
    if (j >= 0) coarse.present[j] = 1;
  }
  return into;
}

/**
 * from[i] added into to[into[i]] for each i, in order (-1: none); a run of i with the same
 * into[i] is summed in a local and stored once (the same additions in the same order, so the
 * same bits: a run cut by a -1 goes on from the stored partial sum).
 */
function addIndexed(to: Float64Array, from: Float64Array, into: Int32Array): void {
  const n = into.length;
  let i = 0;
  while (i < n) {
    const k = into[i]!;
    if (k < 0) {
      i++;
      continue;
    }
    let sum = to[k]!;
    for (; i < n && into[i] === k; i++) sum += from[i]!;
    to[k] = sum;
  }
}

/** Adds one quantity's sums of a period into its columns. */
function book(cols: Float64Array[], at: number, i: number, n: number, sum: number, sumsq: number): void {
  cols[at]![i] += n;
  cols[at + SUM]![i] += sum;
  cols[at + SUMSQ]![i] += sumsq;
}

const NO_PERIODS = new PeriodColumns(0, 1, 0);

/**
 * Memory of complete column sets an ageing pass is done with, for the next metric's. A week of
 * one metric's 60 s periods is 1.2 MB of columns outside the JS heap, and V8 runs a full GC every
 * few tens of MB of such memory allocated (issue 31: 14 full GCs to age 50 metric-weeks). Sizes
 * go by powers of two from 64 KiB (smaller sets are allocated as they come); two idle per size.
 */
const POOL_MIN_BYTES = 1 << 16;
const memoryPool = new BufferPool(POOL_MIN_BYTES, Infinity, 2);

/** At least `bytes` of zeros. */
function takeMemory(bytes: number): ArrayBuffer {
  return bytes < POOL_MIN_BYTES ? new ArrayBuffer(bytes) : memoryPool.take(bytes, true);
}

/** The carry after the samples of `s` (as `accumulate(s, …, carry).carry`), booking nothing. */
export function carryAfter(s: DenseSeries, carry: RollupCarry | null): RollupCarry | null {
  return accumulateColumns(s, NO_PERIODS, carry);
}

/** col[i] for each i of `at`, in a new array. */
function gather(col: Float64Array, at: Int32Array): Float64Array {
  const out = new Float64Array(at.length);
  for (let k = 0; k < at.length; k++) out[k] = col[at[k]!]!;
  return out;
}
