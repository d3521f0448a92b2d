// storage/rollup-migration.ts on a real RocksDB: v1 records (one 101-byte accumulator per
// period) become chunks (now format v3) holding the same accumulators, grouped by metric, level and chunk;
// no v1 record is left and the format is recorded, after which migration is a no-op; a store
// half migrated (some chunks already v2) finishes; an unknown record stops the open.
import test from 'ava';
import { emptyAccumulator, encodeAccumulator, type RollupAccumulator } from '../../model/rollup/accumulator.js';
import { chunkSpanMs } from '../../model/rollup/chunk.js';
import { CF, rollupColumnOf, rollupKey, STATE_KEY } from '../../storage/keys.js';
import { ChunkEdit } from '../../storage/rollup-chunks.js';
import { migrateRollups } from '../../storage/rollup-migration.js';
import type { Store } from '../../storage/rocks.js';
import { metricId, storedPeriods, withStore } from './store.js';

const ref = (n: number) => ({ id: metricId(n), idHex: metricId(n).toString('hex') });
const CHUNK60 = chunkSpanMs(60); // one day

function acc(n: number, mean: number): RollupAccumulator {
  const a = emptyAccumulator();
  a.value = { n, sum: n * mean, sumsq: n * mean * mean + 1 };
  a.counter = { n: n - 1, sum: n, sumsq: 2 * n };
  return a;
}

async function putV1(store: Store, records: [number, number, number, RollupAccumulator][]): Promise<void> {
  const batch = store.batch();
  for (const [n, period, start, a] of records) batch.put(CF.rollup, rollupKey(metricId(n), period, start), encodeAccumulator(a));
  await batch.write();
}

async function keyKinds(store: Store): Promise<{ v1: number; v2: number }> {
  const out = { v1: 0, v2: 0 };
  for await (const { key } of store.scan(CF.rollup, {})) out[rollupColumnOf(key) === null ? 'v1' : 'v2']++;
  return out;
}

test('v1 records become chunks with the same accumulators, per metric, level and chunk', async (t) => {
  await withStore(async ({ store }) => {
    const records: [number, number, number, RollupAccumulator][] = [
      [1, 60, 0, acc(6, 10)],
      [1, 60, 60_000, acc(6, 20)],
      [1, 60, CHUNK60 - 60_000, acc(2, 5)], // the last period of the first chunk
      [1, 60, CHUNK60, acc(3, 30)], // the first of the next
      [1, 300, 0, acc(15, 18)],
      [2, 60, 60_000, acc(1, 99)],
    ];
    await putV1(store, records);
    await migrateRollups(store);
    t.deepEqual(await storedPeriods(store, ref(1), 60, 0, 2 * CHUNK60), [
      [0, acc(6, 10)],
      [60_000, acc(6, 20)],
      [CHUNK60 - 60_000, acc(2, 5)],
      [CHUNK60, acc(3, 30)],
    ]);
    t.deepEqual(await storedPeriods(store, ref(1), 300, 0, CHUNK60), [[0, acc(15, 18)]]);
    t.deepEqual(await storedPeriods(store, ref(2), 60, 0, CHUNK60), [[60_000, acc(1, 99)]]);
    t.is((await keyKinds(store)).v1, 0, 'no v1 record left');
    t.is((await keyKinds(store)).v2, 4 * 15, '4 chunks of 15 columns');
    t.deepEqual([...((await store.get(CF.state, STATE_KEY.rollupFormat)) ?? [])], [3]);
  });
});

test('once the format is recorded, migration reads nothing more', async (t) => {
  await withStore(async ({ store }) => {
    await migrateRollups(store);
    t.deepEqual([...((await store.get(CF.state, STATE_KEY.rollupFormat)) ?? [])], [3], 'an empty store is marked migrated');
    // A record that would stop a migration (not v1, not v2) is never looked at again.
    await store.batch().put(CF.rollup, rollupKey(metricId(1), 60, 0), Buffer.from([9, 9, 9])).write();
    await t.notThrowsAsync(migrateRollups(store));
  });
});

test('a migration cut short finishes: chunks already written stay, the rest are migrated', async (t) => {
  await withStore(async ({ store }) => {
    // Metric 1 was migrated before the crash (its chunk is v2); metric 2 still has v1 records.
    const edit = new ChunkEdit(store, ref(1));
    await edit.load(60, [[0, 120_000]]);
    edit.set(60, 0, acc(4, 1));
    edit.set(60, 60_000, acc(4, 2));
    const batch = store.batch();
    edit.flush(batch);
    await batch.write();
    await putV1(store, [[2, 60, 120_000, acc(5, 7)]]);
    await migrateRollups(store);
    t.deepEqual(await storedPeriods(store, ref(1), 60, 0, CHUNK60), [
      [0, acc(4, 1)],
      [60_000, acc(4, 2)],
    ]);
    t.deepEqual(await storedPeriods(store, ref(2), 60, 0, CHUNK60), [[120_000, acc(5, 7)]]);
    t.deepEqual(await keyKinds(store), { v1: 0, v2: 2 * 15 });
  });
});

test('more chunks than one batch holds are all migrated', async (t) => {
  await withStore(async ({ store }) => {
    const records: [number, number, number, RollupAccumulator][] = [];
    for (let n = 1; n <= 300; n++) records.push([n, 60, n * 60_000, acc(2, n)]);
    await putV1(store, records);
    await migrateRollups(store);
    t.deepEqual(await keyKinds(store), { v1: 0, v2: 300 * 15 });
    t.deepEqual(await storedPeriods(store, ref(300), 60, 0, CHUNK60), [[300 * 60_000, acc(2, 300)]]);
  });
});

test('a record that is neither v1 nor v2 stops the migration, which is not recorded as done', async (t) => {
  await withStore(async ({ store }) => {
    // Metric 1's chunk is staged in the migration's batch when metric 2's record is met.
    await putV1(store, [
      [1, 60, 0, acc(2, 1)],
      [2, 60, 0, acc(2, 2)],
    ]);
    await store.batch().put(CF.rollup, rollupKey(metricId(3), 60, 0), Buffer.from([7, 1, 2])).write();
    await t.throwsAsync(migrateRollups(store), { message: /BUG: rollup record of version 7 and 3 bytes/ });
    t.is(await store.get(CF.state, STATE_KEY.rollupFormat), null);
    t.deepEqual(await keyKinds(store), { v1: 3, v2: 0 }, 'nothing half done');
    // (withStore then closes the store: a batch left holding its handle would make that wait forever)
  });
});
