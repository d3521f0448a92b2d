// Rollup fields per slot (model/rollup/fields.ts) against the accumulator's own statistics, for
// a read of one source in its own periods (whose columns are the slots') and for a read that
// sums several sources into each slot; and the scratch memory those reads use (model/scratch.ts).
import test from 'ava';
import fc from 'fast-check';
import { emptyAccumulator, meanOf, stddevOf } from '../../model/rollup/accumulator.js';
import { FIELD_SPECS, fieldColumn, fieldInto, type FieldSpec } from '../../model/rollup/fields.js';
import { PeriodColumns, accumulateColumns, accumulateValues, valueStatInto } from '../../model/rollup/period-columns.js';
import { RollupSlots } from '../../model/rollup/slots.js';
import { scratchFloat64, scratchInt32, scratchUint8 } from '../../model/scratch.js';

const PERIOD = 60_000;

/** Periods of values 10 s apart (NaN: no sample), as a read computes them from raw data (`rates`: every quantity's). */
function periodsOf(values: number[], first = 0, rates = false) {
  const ts: number[] = [];
  const vs: number[] = [];
  values.forEach((v, i) => {
    if (!Number.isNaN(v)) {
      ts.push(first + i * 10_000);
      vs.push(v);
    }
  });
  const count = Math.ceil((values.length * 10_000) / PERIOD);
  const columns = new PeriodColumns(first, PERIOD, count, !rates);
  const dense = { ts: Float64Array.from(ts), values: Float64Array.from(vs) };
  if (rates) accumulateColumns(dense, columns, null);
  else accumulateValues(dense, columns);
  return columns.compact();
}

/** What a field is, slot by slot, from the slot's summed moments (the accumulator's functions). */
function expected(slots: RollupSlots, spec: FieldSpec, requireValues: boolean): number[] {
  const valueN = slots.column('value', 'n');
  const n = slots.column(spec.q, 'n');
  const sum = slots.column(spec.q, 'sum');
  const sumsq = slots.column(spec.q, 'sumsq');
  return Array.from({ length: slots.count }, (_, i) => {
    if (slots.present[i] === 0 || (requireValues && valueN[i] === 0)) return NaN;
    const v = spec.stat === 'count' ? n[i]! : spec.stat === 'sum' ? sum[i]! : spec.stat === 'mean' ? meanOf(n[i]!, sum[i]!) : stddevOf(n[i]!, sum[i]!, sumsq[i]!);
    return v !== null && Number.isFinite(v) ? v : NaN;
  });
}

const sample = fc.oneof(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), fc.constant(NaN), fc.constant(Infinity), fc.constant(7));
const specs: FieldSpec[] = [...Object.values(FIELD_SPECS), { q: 'value', stat: 'sum' }, { q: 'derivative', stat: 'count' }, { q: 'counter', stat: 'sum' }];

test('each field of a slot is the statistic of its moments, read from one source or several', (t) => {
  fc.assert(
    fc.property(fc.array(sample, { minLength: 6, maxLength: 200 }), fc.integer({ min: 1, max: 5 }), (values, per) => {
      const source = periodsOf(values, 0, true);
      const count = Math.ceil(values.length / 6);
      // The source alone, slot = period; and twice over, per slots of `per` periods.
      const own = new RollupSlots(0, PERIOD, count);
      own.addComputed(source, 0, PERIOD);
      const summed = new RollupSlots(0, per * PERIOD, Math.ceil(count / per));
      summed.addComputed(source, 0, PERIOD);
      summed.addChunk(source, 0, PERIOD);
      for (const slots of [own, summed]) {
        for (const spec of specs) {
          for (const requireValues of [false, true]) {
            const got = Array.from(fieldInto(new Float64Array(slots.count).fill(123), slots, spec, requireValues));
            t.deepEqual(got, expected(slots, spec, requireValues));
            t.deepEqual(Array.from(fieldColumn(slots, spec, requireValues)), got);
          }
        }
      }
    }),
    { numRuns: 200 },
  );
});

test('valueStatInto gives the bits of accumulating values-only columns into slots and reading the field off them', (t) => {
  // Stamps anywhere (before the first slot and after the last too), values with NaN, ±∞, -0 and
  // subnormals: the fast path of a fetch at a period no level keeps (storage/rollups.ts
  // readFieldInto) against the general one. A mutation of its period arithmetic, its column
  // reuse (a shorter read after a longer one) or its stat fails this.
  const value = fc.oneof(fc.double(), fc.constant(-0), fc.constant(5e-324), fc.integer({ min: -1000, max: 1000 }));
  const read = fc.record({
    steps: fc.array(fc.integer({ min: 1, max: 40_000 }), { maxLength: 120 }),
    values: fc.array(value, { minLength: 120, maxLength: 120 }),
    start: fc.integer({ min: 0, max: 100_000 }),
    first: fc.integer({ min: 0, max: 200_000 }),
    periodMs: fc.integer({ min: 1, max: 60_000 }),
    count: fc.integer({ min: 0, max: 40 }),
  });
  fc.assert(
    fc.property(fc.array(read, { minLength: 1, maxLength: 3 }), (reads) => {
      for (const r of reads) {
        let at = r.start;
        const ts = Float64Array.from(r.steps, (d) => (at += d));
        const dense = { ts, values: Float64Array.from(r.values.slice(0, ts.length)) };
        const periods = PeriodColumns.scratchValues(r.first, r.periodMs, r.count);
        accumulateValues(dense, periods);
        const slots = new RollupSlots(r.first, r.periodMs, r.count);
        slots.addComputed(periods.compact(), r.first, r.periodMs);
        for (const stat of ['count', 'sum', 'mean', 'stddev'] as const) {
          const general = fieldInto(new Float64Array(r.count), slots, { q: 'value', stat }, true);
          const fast = valueStatInto(new Float64Array(r.count).fill(7), dense, r.first, r.periodMs, stat);
          t.deepEqual(new Uint8Array(fast.buffer), new Uint8Array(general.buffer), `${stat} of ${JSON.stringify(r)}`);
        }
      }
    }),
    { numRuns: 300 },
  );
});

test('a source read in its own periods gives its columns; a period missing or a second source makes slots of their own', (t) => {
  const full = periodsOf(Array.from({ length: 60 }, (_, i) => i), 0, true); // 10 periods, all holding data
  const one = new RollupSlots(0, PERIOD, 10);
  one.addComputed(full, 0, PERIOD);
  t.is(one.column('value', 'sum'), full.column('value', 'sum'));
  // Shifted by a period: slot j is period j + 1, not the source's own column.
  const shifted = new RollupSlots(PERIOD, PERIOD, 10);
  shifted.addComputed(full, 0, PERIOD);
  t.deepEqual(Array.from(shifted.column('value', 'sum')), [...Array.from(full.column('value', 'sum').subarray(1)), 0]);
  const gappy = periodsOf([...Array.from({ length: 6 }, () => NaN), ...Array.from({ length: 54 }, (_, i) => i)]);
  const holes = new RollupSlots(0, PERIOD, 10);
  holes.addComputed(gappy, 0, PERIOD);
  t.is(holes.present[0], 0);
  t.is(holes.column('value', 'n')[0], 0);
  const twice = new RollupSlots(0, PERIOD, 10);
  twice.addComputed(full, 0, PERIOD);
  twice.addChunk(full, 0, PERIOD);
  t.deepEqual(Array.from(twice.column('value', 'sum')), Array.from(full.column('value', 'sum'), (x) => x + x));
  // A recalculated slot replaces what the source says.
  one.replace(2, null);
  t.is(one.column('value', 'n')[2], 0);
  t.is(full.column('value', 'n')[2], 6, 'the source itself is left as it was');
  // A slot with rates but no measurement (a record written so): fetch cells, which require values, leave it blank.
  one.replace(3, { ...emptyAccumulator(), counter: { n: 2, sum: 5, sumsq: 13 } });
  t.is(fieldColumn(one, FIELD_SPECS.counter)[3], 2.5);
  t.true(Number.isNaN(fieldColumn(one, FIELD_SPECS.counter, true)[3]!));
  t.true(Number.isNaN(fieldColumn(one, FIELD_SPECS.counter_stddev, true)[3]!));
});

test('scratch arrays are zero, apart from each other, and large ones have memory of their own', (t) => {
  const a = scratchFloat64(1440);
  const b = scratchUint8(13);
  const c = scratchInt32(7);
  const d = scratchFloat64(5);
  for (const x of [a, b, c, d]) t.true(x.every((v) => v === 0));
  a.fill(1);
  b.fill(2);
  c.fill(3);
  t.true(d.every((v) => v === 0), 'writing one view leaves the others as they were');
  t.is(d.byteOffset % 8, 0, 'every view starts on an 8-byte boundary');
  const seen = Array.from({ length: 500 }, () => scratchFloat64(1440));
  seen.forEach((x, i) => x.fill(i));
  seen.forEach((x, i) => t.true(x.every((v) => v === i)));
  const large = scratchFloat64(1 << 16);
  t.is(large.byteOffset, 0);
  t.is(large.byteLength, large.buffer.byteLength);
});
