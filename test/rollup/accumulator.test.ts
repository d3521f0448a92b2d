// Rollup math against hand-computed values, and the exactness of building coarse
// periods from finer ones.
import test from 'ava';
import fc from 'fast-check';
import { accumulate, decodeAccumulator, emptyAccumulator, encodeAccumulator, mergeAccumulators, rollupFields, type RollupAccumulator } from '../../model/rollup/accumulator.js';
import { nntRecords } from '../../model/rollup/nnt.js';
import { parseRollupType, rollupValue } from '../../model/rollup/types.js';

const S = 1000;
const series = { ts: [0, 30 * S, 60 * S, 90 * S, 100 * S], values: [10, 20, 15, 25, null] };
const close = (a: number | null, b: number) => a !== null && Math.abs(a - b) < 1e-12;

test('60 s periods, hand-computed', (t) => {
  const { periods, carry } = accumulate(series, 60 * S, null);
  const p0 = rollupFields(periods.get(0)!);
  t.is(p0.count, 2);
  t.is(p0.value, 15);
  t.is(p0.stddev, 5);
  t.true(close(p0.derivative, 1 / 3)); // (20-10)/30 s; the first sample has no predecessor
  t.is(p0.derivative_stddev, 0);
  t.true(close(p0.counter, 1 / 3));
  t.is(p0.derivative2, null);
  const p1 = rollupFields(periods.get(60 * S)!);
  t.is(p1.count, 2, 'nulls count nowhere');
  t.is(p1.value, 20);
  t.true(close(p1.derivative, 1 / 12)); // rates -1/6 (from the previous period's last sample) and 1/3
  t.true(close(p1.derivative_stddev, 0.25));
  t.true(close(p1.counter, 1 / 3), 'the negative delta is a reset and is skipped');
  t.true(close(p1.counter_stddev, 0));
  t.true(close(p1.derivative2, 0)); // -1/60 and +1/60
  t.true(close(p1.derivative2_stddev, 1 / 60));
  t.true(close(p1.counter2, 0)); // counter rates 1/3 at 30 s and 1/3 at 90 s
  t.deepEqual(carry?.ts, 90 * S);
});

test('coarse periods from fine ones equal coarse periods from raw', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constant(null))), { maxLength: 200 }),
      (steps) => {
        let ts = 0;
        const s = { ts: [] as number[], values: [] as (number | null)[] };
        for (const [dt, v] of steps) {
          ts += dt;
          s.ts.push(ts);
          s.values.push(v);
        }
        const fine = accumulate(s, 60 * S, null).periods;
        const coarse = accumulate(s, 300 * S, null).periods;
        const merged = new Map<number, RollupAccumulator>();
        for (const [p, acc] of fine) {
          const c = p - (p % (300 * S));
          merged.set(c, mergeAccumulators(merged.get(c) ?? emptyAccumulator(), acc));
        }
        t.deepEqual([...merged.keys()].sort(), [...coarse.keys()].sort());
        for (const [p, acc] of coarse) {
          const a = rollupFields(acc);
          const b = rollupFields(merged.get(p)!);
          for (const k of Object.keys(a) as (keyof typeof a)[]) {
            const x = a[k];
            const y = b[k];
            if (x === null || y === null) t.is(x, y);
            else t.true(Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x)), `${k}: ${x} vs ${y}`);
          }
        }
      },
    ),
  );
});

test('records round-trip through their binary form', (t) => {
  const acc = accumulate(series, 300 * S, null).periods.get(0)!;
  t.deepEqual(decodeAccumulator(encodeAccumulator(acc)), acc);
});

test('rollup types and aliases', (t) => {
  const acc = accumulate(series, 60 * S, null).periods.get(0)!;
  t.is(parseRollupType(undefined), 'value');
  t.is(parseRollupType('derive'), 'derivative');
  t.is(parseRollupType('derive2_stddev'), 'derivative2_stddev');
  t.is(parseRollupType('median'), null);
  t.is(rollupValue(acc, 'count'), 2);
  t.is(rollupValue(acc, 'value'), 15);
  t.deepEqual(Object.keys(rollupValue(acc, 'all') as object).sort(), ['count', 'counter', 'counter2', 'counter2_stddev', 'counter_stddev', 'derivative', 'derivative2', 'derivative2_stddev', 'derivative_stddev', 'stddev', 'value']);
  t.is(rollupValue(null, 'value'), null);
});

test('nnt items: a summary is one record, parts one record per sub-interval', (t) => {
  const item = { count: 4, value: 10, stddev: 2, derivative: 1, derivative_stddev: 0, counter: 1, counter_stddev: 0 };
  const one = nntRecords(item) as [number, RollupAccumulator][];
  t.is(one.length, 1);
  t.is(one[0]![0], 0);
  const f = rollupFields(one[0]![1]);
  t.is(f.count, 4);
  t.is(f.value, 10);
  t.true(close(f.stddev, 2));
  const parts = nntRecords({ ...item, parts: [30, [item, { ...item, count: 0 }, { ...item, value: 20, count: 1 }]] }) as [number, RollupAccumulator][];
  t.deepEqual(parts.map(([at]) => at), [0, 60_000], 'the i-th part starts i × 30 s after the offset; a part counting 0 stores nothing');
  t.deepEqual(parts.map(([, acc]) => [rollupFields(acc).count, rollupFields(acc).value]), [[4, 10], [1, 20]]);
  t.regex(nntRecords({ ...item, count: -1 }) as string, /count/);
  t.regex(nntRecords({ ...item, stddev: 'x' }) as string, /stddev/);
  t.regex(nntRecords({ parts: [0, [item]] }) as string, /parts\[0\]/);
  t.regex(nntRecords({ parts: [60, []] }) as string, /parts\[1\]/);
  t.regex(nntRecords({ parts: [60, Array.from({ length: 1441 }, () => item)] }) as string, /86400/);
  // gosnowth always sends `parts`; its zero value [0, null] (and null, [0, []]) means no parts
  for (const none of [null, [0, null], [0, []]]) t.is(rollupFields((nntRecords({ ...item, parts: none }) as [number, RollupAccumulator][])[0]![1]).count, 4);
  t.regex(nntRecords({ parts: [30, [{ ...item, value: null }]] }) as string, /parts\[1\]\[0\]\.value/);
});
