// storage/figures.ts and the store's write generations: disk figures group the column
// families by kind and add up; only batches that wrote a family move its generation.
import test from 'ava';
import { addDiskUse, diskUse } from '../../storage/figures.js';
import { CF } from '../../storage/keys.js';
import { metricId, withStore } from './store.js';

test('disk use by kind adds up to the total, for one store and for several', async (t) => {
  await withStore(async ({ store }) => {
    await store.batch().put(CF.numeric, metricId(1), Buffer.alloc(5_000, 1)).put(CF.journal, metricId(2), Buffer.alloc(3_000, 2)).write();
    const one = await diskUse(store);
    t.is(Object.values(one.by_kind).reduce((a, b) => a + b, 0), one.total_bytes);
    t.true(one.by_kind.raw >= 5_000, 'numeric blocks count as raw');
    t.true(one.by_kind.journal >= 3_000);
    const two = addDiskUse([one, one]);
    t.is(two.total_bytes, 2 * one.total_bytes);
    t.is(two.by_kind.raw, 2 * one.by_kind.raw);
  });
});

test('a batch moves the generation of the families it wrote, once, and no other', async (t) => {
  await withStore(async ({ store }) => {
    t.is(store.generation(CF.rollup), 0);
    await store.batch().put(CF.rollup, metricId(1), Buffer.from('x')).put(CF.rollup, metricId(2), Buffer.from('y')).write();
    await store.batch().put(CF.numeric, metricId(1), Buffer.from('z')).write();
    await store.batch().write();
    t.is(store.generation(CF.rollup), 1);
    t.is(store.generation(CF.numeric), 1);
    t.is(store.generation(CF.index), 0);
  });
});
