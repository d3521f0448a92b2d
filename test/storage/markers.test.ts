// storage/markers.ts: a partition's markers are exactly the keys under its prefix (partition 1
// never sees partition 10's, nor another kind's), each parsed back into metric, start and value.
import test from 'ava';
import { CF, encodeU64, histogramDirtyKey, histogramDirtyPrefix, rollupDirtyKey, rollupDirtyPrefix } from '../../storage/keys.js';
import { loadMarkers } from '../../storage/markers.js';
import { metricId, withStore } from './store.js';

const A = metricId(1).toString('hex');
const B = metricId(2).toString('hex');

test("a partition's markers, and no other partition's or kind's", async (t) => {
  await withStore(async ({ store }) => {
    const batch = store.batch();
    batch.put(CF.state, rollupDirtyKey(1, A, 3_600_000), Buffer.alloc(0));
    batch.put(CF.state, rollupDirtyKey(1, B, 0), Buffer.alloc(0));
    batch.put(CF.state, rollupDirtyKey(10, A, 7), Buffer.alloc(0)); // shares the text "rdirty/1"
    batch.put(CF.state, rollupDirtyKey(0, A, 8), Buffer.alloc(0));
    batch.put(CF.state, histogramDirtyKey(1, A, 60_000), encodeU64(42));
    await batch.write();
    const rollup1 = await loadMarkers(store, rollupDirtyPrefix(1));
    t.deepEqual(
      rollup1.map((m) => [m.idHex, m.start]),
      [
        [A, 3_600_000],
        [B, 0],
      ],
    );
    t.deepEqual((await loadMarkers(store, rollupDirtyPrefix(10))).map((m) => [m.idHex, m.start]), [[A, 7]]);
    const hist = await loadMarkers(store, histogramDirtyPrefix(1));
    t.deepEqual(hist.map((m) => [m.idHex, m.start, [...m.value]]), [[A, 60_000, [...encodeU64(42)]]]);
    t.deepEqual(await loadMarkers(store, histogramDirtyPrefix(2)), [], 'none');
  });
});

test('markers outlive a restart and are gone once deleted', async (t) => {
  await withStore(async (open) => {
    await open.store.batch().put(CF.state, rollupDirtyKey(3, A, 120_000), Buffer.alloc(0)).write();
    const store = await open.reopen();
    t.deepEqual((await loadMarkers(store, rollupDirtyPrefix(3))).map((m) => m.start), [120_000]);
    await store.batch().delete(CF.state, rollupDirtyKey(3, A, 120_000)).write();
    t.deepEqual(await loadMarkers(store, rollupDirtyPrefix(3)), []);
  });
});
