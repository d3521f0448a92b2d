// model/rollup/period-columns.ts against model/rollup/accumulator.ts: the columns hold the very
// bits `accumulate` and `addInto` give (same sums in the same order), carries included.
import test from 'ava';
import fc from 'fast-check';
import { accumulate, addInto, emptyAccumulator, type RollupAccumulator } from '../../model/rollup/accumulator.js';
import { accumulateColumns, accumulateValues, PeriodColumns } from '../../model/rollup/period-columns.js';
import { denseOf } from '../../model/dense-series.js';
import { QUANTITIES, PARTS } from '../../model/rollup/chunk.js';
import { RollupSlots } from '../../model/rollup/slots.js';
import type { NumericValue } from '../../model/types.js';

const MIN = 60_000;

const seriesArb = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 40_000 }), fc.oneof(fc.double({ min: -1e9, max: 1e9, noNaN: true }), fc.integer({ min: -1000, max: 1000 }), fc.constant(null), fc.constant(Infinity))), { maxLength: 300 })
  .map((steps) => {
    let ts = 5 * MIN;
    const s = { ts: [] as number[], values: [] as NumericValue[] };
    for (const [dt, v] of steps) {
      ts += dt; // dt 0: a repeated stamp (no rate, as accumulate does)
      s.ts.push(ts);
      s.values.push(v);
    }
    return s;
  });

/** Samples stamped from 0 on by their steps (dt, value). */
function stampedFromZero(steps: [number, NumericValue][]): { ts: number[]; values: NumericValue[] } {
  let ts = 0;
  const s = { ts: [] as number[], values: [] as NumericValue[] };
  for (const [dt, v] of steps) {
    ts += dt;
    s.ts.push(ts);
    s.values.push(v);
  }
  return s;
}

/** Like seriesArb, stamped 10 s apart mostly: many samples fall on a period's first millisecond. */
const alignedArb = fc
  .array(fc.tuple(fc.constantFrom(0, 10_000, 10_000, 10_000, 30_000, MIN, 7), fc.oneof(fc.double({ min: -1e9, max: 1e9, noNaN: true }), fc.constant(null), fc.constant(Infinity))), { maxLength: 300 })
  .map(stampedFromZero);

function sameBits(t: { true(v: boolean, m: string): void }, a: RollupAccumulator, b: RollupAccumulator, at: string): void {
  for (const q of QUANTITIES) for (const p of PARTS) t.true(Object.is(a[q][p], b[q][p]), `${at} ${q}.${p}: ${a[q][p]} against ${b[q][p]}`);
}

test('accumulateColumns books the bits accumulate books, and the same carry', (t) => {
  fc.assert(
    fc.property(seriesArb, fc.boolean(), (s, withCarry) => {
      const carry = withCarry ? { ts: 0, value: 3, rate: { ts: 0, value: 0.5 }, counterRate: null } : null;
      const want = accumulate(s, MIN, carry);
      const last = s.ts[s.ts.length - 1] ?? 0;
      const cols = new PeriodColumns(0, MIN, Math.floor(last / MIN) + 1);
      const got = accumulateColumns(denseOf(s), cols, carry);
      t.deepEqual(got, want.carry);
      for (let i = 0; i < cols.count; i++) {
        const acc = want.periods.get(i * MIN);
        t.is(cols.present[i], acc === undefined ? 0 : 1);
        if (acc !== undefined) sameBits(t, cols.row(i), acc, `period ${i}`);
      }
    }),
    { numRuns: 200 },
  );
});

test('accumulateValues books the value columns accumulateColumns books, samples outside the periods left out', (t) => {
  fc.assert(
    fc.property(alignedArb, fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 30 }), (s, skip, count) => {
      const dense = denseOf(s);
      // Periods from `skip` minutes in, `count` of them: samples before and after them are in the series.
      const all = new PeriodColumns(skip * MIN, MIN, count);
      accumulateColumns(dense, all, null);
      const values = new PeriodColumns(skip * MIN, MIN, count, true);
      accumulateValues(dense, values);
      t.deepEqual(values.present, all.present);
      for (const part of [0, 1, 2]) t.deepEqual(values.columns[part], all.columns[part]);
    }),
    { numRuns: 300 },
  );
});

test('coarser periods are the finer ones summed as addInto sums them', (t) => {
  fc.assert(
    fc.property(seriesArb, (s) => {
      const last = s.ts[s.ts.length - 1] ?? 0;
      const fine = new PeriodColumns(2 * MIN, MIN, Math.floor(last / MIN) + 1);
      accumulateColumns(denseOf(s), fine, null);
      const coarse = fine.coarser(5 * MIN);
      const want = new Map<number, RollupAccumulator>();
      for (let i = 0; i < fine.count; i++) {
        if (fine.present[i] === 0) continue;
        const p = fine.startOf(i) - (fine.startOf(i) % (5 * MIN));
        if (!want.has(p)) want.set(p, emptyAccumulator());
        addInto(want.get(p)!, fine.row(i));
      }
      t.is(coarse.first % (5 * MIN), 0);
      for (let i = 0; i < coarse.count; i++) {
        const acc = want.get(coarse.startOf(i));
        t.is(coarse.present[i], acc === undefined ? 0 : 1);
        if (acc !== undefined) sameBits(t, coarse.row(i), acc, `coarse period ${i}`);
      }
    }),
    { numRuns: 100 },
  );
});

test('pooled columns (ageing) hold what fresh ones hold, and memory given back comes back as zeros', (t) => {
  // A day at 10 s: 1440 periods, 2 MB of columns, from the pool.
  const s = { ts: Array.from({ length: 8640 }, (_, i) => i * 10_000), values: Array.from({ length: 8640 }, (_, i) => Math.round(1000 * Math.sin(i / 100)) / 10) as NumericValue[] };
  const fresh = new PeriodColumns(0, MIN, 1440);
  accumulateColumns(denseOf(s), fresh, null);
  for (let round = 0; round < 3; round++) {
    const pooled = PeriodColumns.pooled(0, MIN, 1440);
    t.true(pooled.columns.every((c) => c.every((x) => x === 0)) && pooled.present.every((x) => x === 0), `round ${round}: zeros`);
    accumulateColumns(denseOf(s), pooled, null);
    for (let c = 0; c < fresh.columns.length; c++) t.deepEqual(pooled.columns[c], fresh.columns[c]);
    t.deepEqual(pooled.present, fresh.present);
    const coarse = pooled.coarser(5 * MIN);
    t.deepEqual(coarse.columns, fresh.coarser(5 * MIN).columns);
    pooled.release();
    pooled.release(); // twice: ignored, not pooled twice
    coarse.release();
  }
});

test('compact keeps the periods holding data, aligned with their slots', (t) => {
  const cols = new PeriodColumns(0, MIN, 10);
  accumulateColumns(denseOf({ ts: [MIN, 3 * MIN + 1, 3 * MIN + 2], values: [1, 2, 4] }), cols, null);
  const c = cols.compact();
  t.deepEqual([...c.slots], [1, 3]);
  t.deepEqual([...c.column('value', 'n')], [1, 2]);
  t.deepEqual([...c.column('value', 'sum')], [1, 6]);
  t.deepEqual([...c.column('derivative', 'n')], [0, 2]);
});

/** Samples over hours (most periods of four hours hold some), on period edges often. */
const spreadArb = fc
  .array(fc.tuple(fc.constantFrom(0, 10_000, MIN, 3 * MIN, 11 * MIN, 7), fc.oneof(fc.double({ min: -1e9, max: 1e9, noNaN: true }), fc.constant(null))), { minLength: 20, maxLength: 200 })
  .map(stampedFromZero);

test('periods summed per slot ahead of a read (per) give the read the bits it sums from the finer periods', (t) => {
  fc.assert(
    fc.property(spreadArb, fc.boolean(), fc.constantFrom(10, 12, 60), fc.integer({ min: -3, max: 3 }), (s, values, ratio, shift) => {
      const count = 240;
      const fine = new PeriodColumns(0, MIN, count, values);
      if (values) accumulateValues(denseOf(s), fine);
      else accumulateColumns(denseOf(s), fine, null);
      const periods = fine.compact();
      const span = ratio * MIN;
      // Slots from `shift` spans before or after the periods' start: some read windows cut the span.
      const first = shift * span;
      const n = count / ratio + 2;
      const direct = new RollupSlots(first, span, n);
      direct.addComputed(periods, periods.first, periods.periodMs);
      const coarse = periods.per(span);
      t.is(periods.per(span), coarse, 'kept for the next read of the span');
      t.is(periods.per(2 * span).periodMs, 2 * span, 'another span is summed anew');
      const summed = new RollupSlots(first, span, n);
      summed.addComputed(coarse, coarse.first, coarse.periodMs);
      t.deepEqual(Array.from(summed.present), Array.from(direct.present));
      for (const q of values ? (['value'] as const) : QUANTITIES)
        for (const p of PARTS) {
          const a = direct.column(q, p);
          const b = summed.column(q, p);
          for (let i = 0; i < n; i++) t.true(Object.is(a[i], b[i]), `slot ${i} ${q}.${p}: ${b[i]} against ${a[i]}`);
        }
    }),
    { numRuns: 200 },
  );
  t.throws(() => new PeriodColumns(0, MIN, 10).compact().per(5 * MIN), { message: /not summed per/ });
});

test('rollup tuples stamp whole seconds as String() does, across digit carries', async (t) => {
  const { rollupTuplesJson } = await import('../../model/rollup/types.js');
  const { RollupSlots } = await import('../../model/rollup/slots.js');
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4e9 }), fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 0, max: 50 }), (firstS, spanS, count) => {
      const slots = new RollupSlots(firstS * 1000, spanS * 1000, count);
      const want = `[${Array.from({ length: count }, (_, i) => `[${firstS + i * spanS},null]`).join(',')}]`;
      t.is(rollupTuplesJson(slots, 'value'), want);
    }),
  );
  // A run crossing 10^5 s boundaries (the kept leading digits change).
  const slots = new RollupSlots(99_990_000, 5_000, 5);
  t.is(rollupTuplesJson(slots, 'count'), '[[99990,null],[99995,null],[100000,null],[100005,null],[100010,null]]');
});

test('rollup values as tuples: the same text as String() of each value, NaN and ±∞ as null', async (t) => {
  const { rollupValuesJson } = await import('../../model/rollup/types.js');
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4e9 }), fc.integer({ min: 1, max: 100_000 }), fc.array(fc.oneof(fc.double(), fc.constant(NaN), fc.constant(-0), fc.constant(-Infinity)), { maxLength: 40 }), (firstS, spanS, values) => {
      const want = `[${values.map((v, i) => `[${firstS + i * spanS},${Number.isFinite(v) ? String(v) : 'null'}]`).join(',')}]`;
      t.is(rollupValuesJson(firstS * 1000, spanS * 1000, Float64Array.from(values)), want);
    }),
  );
  t.is(rollupValuesJson(1500, 500, Float64Array.of(1, NaN, Infinity)), '[[1.500,1],[2.000,null],[2.500,null]]', 'spans of ms stamp every tuple with its ms');
});
