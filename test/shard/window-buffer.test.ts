// actors/shard/window-buffer.ts: an open window keeps samples as appended, in pooled pairs for
// plain doubles and in arrays once another value or a generation arrives, and trims on delete.
import test from 'ava';
import fc from 'fast-check';
import { BufferTable } from '../../actors/shard/window-buffer.js';
import { newMetricInfo } from '../../model/metric-info.js';
import type { AccountId, MetricKey } from '../../model/types.js';

const owner = newMetricInfo({ key: 'u-m' as MetricKey, accountId: 1 as AccountId, uuid: 'u', checkName: 'c', name: { name: 'm', tags: [], canonical: 'm' } }, Buffer.alloc(16), '00'.repeat(16), 0);

test('doubles are kept as appended, across chunks, the first eight encoded as a part', (t) => {
  const table = new BufferTable();
  const b = table.create(owner, 'numeric', 0, 1, 0);
  for (let i = 0; i < 9; i++) table.append(b, i * 10, i / 2, 0);
  t.is(table.size(b), 9);
  t.deepEqual(table.series(b), { ts: [0, 10, 20, 30, 40, 50, 60, 70, 80], values: [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4] });
  t.is(table.figures.bytes.used, 2 * 64, 'a chunk of the part, one of the ninth pair (three chunks of pairs before)');
});

test('buffers interleaved in time keep their own samples; freed chunks are reused', (t) => {
  const table = new BufferTable();
  const [a, b] = [table.create(owner, 'numeric', 0, 1, 0), table.create(owner, 'numeric', 0, 1, 0)];
  for (let i = 0; i < 6; i++) {
    table.append(a, i, i, 0);
    table.append(b, i, -i, 0);
  }
  t.deepEqual(table.series(a).values, [0, 1, 2, 3, 4, 5]);
  t.deepEqual(table.series(b).values, [-0, -1, -2, -3, -4, -5]);
  const before = table.figures.bytes.allocated;
  table.free(a);
  const c = table.create(owner, 'numeric', 0, 2, 0);
  for (let i = 0; i < 6; i++) table.append(c, i, 10 + i, 0);
  t.deepEqual(table.series(c).values, [10, 11, 12, 13, 14, 15]);
  t.deepEqual(table.series(b).values, [-0, -1, -2, -3, -4, -5], 'the other buffer is untouched');
  t.is(table.figures.bytes.allocated, before, 'no new slab');
});

test('a null, a 64-bit integer or a generation switches to arrays without losing what came before', (t) => {
  const table = new BufferTable();
  const b = table.create(owner, 'numeric', 0, 1, 0);
  for (let i = 0; i < 5; i++) table.append(b, i, i + 0.5, 0);
  table.append(b, 5, null, 0);
  table.append(b, 6, 2n ** 63n, 0);
  table.append(b, 7, 7, 0, 3);
  t.deepEqual(table.series(b), { ts: [0, 1, 2, 3, 4, 5, 6, 7], values: [0.5, 1.5, 2.5, 3.5, 4.5, null, 2n ** 63n, 7], gens: [0, 0, 0, 0, 0, 0, 0, 3] });
  t.is(table.figures.bytes.used, 0, 'its chunks went back to the pool');
  t.is(table.denseSource(b).into(new Float64Array(8), new Float64Array(8), 0), -1, 'a dense read leaves it to the general read');
});

test('text is kept in arrays', (t) => {
  const table = new BufferTable();
  const b = table.create(owner, 'text', 0, 1, 0);
  table.append(b, 1, 'a', 0);
  table.append(b, 2, 'b', 0);
  t.deepEqual(table.series(b), { ts: [1, 2], values: ['a', 'b'] });
  t.is(table.kind(b), 'text');
});

test('a delete drops samples stamped before its time, whatever their order', (t) => {
  const table = new BufferTable();
  const b = table.create(owner, 'numeric', 0, 1, 0);
  for (const ts of [50, 10, 40, 20]) table.append(b, ts, ts, 0);
  t.true(table.hasBefore(b, 11));
  t.false(table.hasBefore(b, 10));
  table.dropBefore(b, 30);
  t.deepEqual(table.series(b), { ts: [50, 40], values: [50, 40] });
  t.false(table.hasBefore(b, 40));
  t.is(table.size(b), 2);
});

test('thousands of buffers interleaved fill slab after slab, and each keeps its own samples', (t) => {
  const table = new BufferTable();
  const buffers = Array.from({ length: 3000 }, () => table.create(owner, 'numeric', 0, 1, 0));
  // 3000 buffers × 11 samples = 6000 chunks (the first eight samples' part, the last three's
  // pairs): more than two slabs of 2048 chunks.
  for (let i = 0; i < 11; i++) buffers.forEach((b, n) => table.append(b, i * 10, n * 100 + i, 0));
  t.true(buffers.every((b, n) => table.series(b).values.every((v, i) => v === n * 100 + i)));
  t.is(table.figures.bytes.used, 6000 * 64);
  t.is(table.figures.bytes.allocated, 3 * 2048 * 64, 'slabs are added as needed, not doubled');
});

test('an hour of scrapes is kept encoded in parts of FREEZE_PAIRS, and read back exactly', (t) => {
  const table = new BufferTable();
  const b = table.create(owner, 'numeric', 0, 1, 0);
  const start = 1_795_000_000_000;
  const want = { ts: [] as number[], values: [] as number[] };
  for (let i = 0; i < 360; i++) {
    want.ts.push(start + i * 10_000);
    want.values.push(Math.round(500 + 400 * Math.sin(i / 7)) / 100);
    table.append(b, want.ts[i]!, want.values[i]!, 0);
  }
  t.deepEqual(table.series(b), want);
  t.is(table.size(b), 360);
  const used = table.figures.bytes.used;
  t.true(used <= 360 * 16 / 4, `${used} bytes for 360 samples (pairs: ${360 * 16})`);
  table.free(b);
  t.is(table.figures.bytes.used, 0, 'parts and pairs go back to the pool');
});

test('any doubles, whatever their stamps, read back as appended with parts among them', (t) => {
  let encoded = 0;
  const double = fc.oneof(fc.double(), fc.constantFrom(-0, NaN, Infinity, -Infinity, 0.1, 1e-310), fc.integer({ min: -1e6, max: 1e6 }).map((n) => n / 100));
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.oneof({ arbitrary: fc.constantFrom(0, 1, 10_000), weight: 60 }, { arbitrary: fc.integer({ min: 0, max: 60_000 }), weight: 39 }, { arbitrary: fc.integer({ min: -5000, max: -1 }), weight: 1 }), double), { minLength: 40, maxLength: 200 }), fc.integer({ min: -10, max: 2e12 }), (steps, start) => {
      const table = new BufferTable();
      const other = table.create(owner, 'numeric', 0, 1, 0);
      const b = table.create(owner, 'numeric', 0, 1, 0);
      const want = { ts: [] as number[], values: [] as number[] };
      let ts = start;
      for (const [dt, v] of steps) {
        ts += dt;
        want.ts.push(ts);
        want.values.push(v);
        table.append(b, ts, v, 0);
        table.append(other, ts, 1, 0); // interleaved: the two chains share slabs
      }
      const got = table.series(b);
      t.is(got.ts.length, want.ts.length);
      t.true(got.ts.every((x, i) => Object.is(x, want.ts[i])) && got.values.every((x, i) => Object.is(x, want.values[i])), 'same bits in the same order');
      // Read densely (straight into typed arrays, after what is there already), the same.
      const dense = table.denseSource(b);
      const [dts, dvs] = [new Float64Array(dense.count + 1), new Float64Array(dense.count + 1)];
      t.is(dense.into(dts, dvs, 1), want.ts.length + 1);
      t.true(want.ts.every((x, i) => Object.is(dts[i + 1], x)) && want.values.every((x, i) => Object.is(dvs[i + 1], x)), 'dense: same bits in the same order');
      t.true(table.series(other).values.every((v) => v === 1));
      const used = table.figures.bytes.used;
      table.free(b);
      if (used - table.figures.bytes.used < steps.length * 16) encoded++;
      table.free(other);
      t.is(table.figures.bytes.used, 0);
    }),
    { numRuns: 300 },
  );
  t.true(encoded > 100, `${encoded} of 300 runs kept parts`);
});

test('a buffer with parts switches to arrays, or drops its oldest samples, keeping the others', (t) => {
  const table = new BufferTable();
  const b = table.create(owner, 'numeric', 0, 1, 0);
  for (let i = 0; i < 100; i++) table.append(b, 1000 * i, i, 0);
  table.dropBefore(b, 50_000);
  t.deepEqual(table.series(b).values, Array.from({ length: 50 }, (_, i) => 50 + i));
  t.is(table.figures.bytes.used, 0, 'in arrays now: the parts went back to the pool');
  const c = table.create(owner, 'numeric', 0, 1, 0);
  for (let i = 0; i < 70; i++) table.append(c, 1000 * i, i, 0);
  table.append(c, 70_000, null, 0);
  t.deepEqual(table.series(c).values, [...Array.from({ length: 70 }, (_, i) => i), null]);
});
