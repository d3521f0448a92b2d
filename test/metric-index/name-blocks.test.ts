// storage/metric-index/name-blocks.ts through the metric index on a real RocksDB: ranges of dense
// ids whose names are all written are packed into blocks (their own records deleted in the same
// batch), an index rebuilt from the store finds every metric either way, a removed metric leaves
// its block, and a range still pending is not packed.
import test from 'ava';
import { rmSync } from 'node:fs';
import { canonicalizeMetricName } from '../../model/metric-name.js';
import { placeMetric } from '../../model/metric-key.js';
import type { MetricKey } from '../../model/types.js';
import { CF, NAME_BLOCK_KEYS } from '../../storage/keys.js';
import { MetricIndex, type IndexableMetric } from '../../storage/metric-index/metric-index.js';
import { decodeNameBlock, encodeNameBlock, NAME_BLOCK_IDS } from '../../storage/metric-index/name-blocks.js';
import { Store } from '../../storage/rocks.js';
import { tempDir } from '../helpers/node.js';

const UUID = '0a2a3f6c-0000-4000-8000-000000000001';

function metric(i: number): IndexableMetric {
  const name = canonicalizeMetricName(`disk.used_percent|ST[host:host_${i},region:eu-${i % 3}]`);
  if (!name.ok) throw new Error(name.reason);
  return { id: placeMetric(`${UUID}-${name.value.canonical}` as MetricKey, 1).id, accountId: 1, uuid: UUID, checkName: 'c_1_1::devops', name: name.value };
}

async function withStore(run: (store: Store) => Promise<void>): Promise<void> {
  const dir = tempDir();
  const store = await Store.open(dir);
  try {
    await run(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function named(index: MetricIndex, store: Store, metrics: IndexableMetric[]): Promise<void> {
  const batch = store.batch();
  const staged = index.stage(
    batch,
    metrics.map((m) => ({ metric: m, kind: 'numeric' as const })),
  );
  await batch.write();
  index.apply(staged);
}

async function pack(index: MetricIndex, store: Store): Promise<number[]> {
  const batch = store.batch();
  const ranges = index.stagePackNames(batch);
  await batch.write();
  index.namesPacked(ranges);
  return ranges;
}

async function count(store: Store, cf: 'metrics' | 'index', range: { gte?: Buffer; lt?: Buffer } = {}): Promise<number> {
  let n = 0;
  for await (const _ of store.scan(cf, range)) n++;
  return n;
}

/** Every metric of `metrics` as the index knows it: canonical name by storage id, and its dense id. */
function known(index: MetricIndex, metrics: IndexableMetric[]): [string, number][] {
  return metrics.map((m) => [index.canonicalOf(index.lookup(m.id)), index.lookup(m.id)]);
}

test('a block round-trips its entries', (t) => {
  const entries = [metric(1), metric(2)].map((m, i) => ({ storageId: m.id, record: Buffer.from(`record ${i}`) }));
  t.deepEqual(
    decodeNameBlock(encodeNameBlock(entries)).map((e) => [Buffer.from(e.storageId).toString('hex'), Buffer.from(e.record).toString()]),
    entries.map((e) => [e.storageId.toString('hex'), e.record.toString()]),
  );
  t.throws(() => decodeNameBlock(Uint8Array.of(9, 1, 2)), { message: /version 9/ });
});

test('whole ranges of written names are packed; a rebuilt index finds every metric with its dense id', async (t) => {
  await withStore(async (store) => {
    const metrics = Array.from({ length: 2 * NAME_BLOCK_IDS + 100 }, (_, i) => metric(i));
    const { index } = await MetricIndex.load(store);
    await named(index, store, metrics);
    const before = known(index, metrics);
    t.deepEqual(await pack(index, store), [0, 1], 'the two whole ranges');
    t.deepEqual(await pack(index, store), [], 'packed once');
    t.is(await count(store, CF.metrics), 100, 'the last, partial range keeps records of its own');
    t.is(await count(store, CF.index, NAME_BLOCK_KEYS), 2);
    const { index: rebuilt } = await MetricIndex.load(store);
    t.deepEqual(known(rebuilt, metrics), before);
    t.deepEqual(rebuilt.typesOf(rebuilt.lookup(metrics[5]!.id)), ['numeric'], 'types come back from the block');
  });
});

test('a removed metric leaves its block; a range emptied leaves no block; names after it are unharmed', async (t) => {
  await withStore(async (store) => {
    const metrics = Array.from({ length: 2 * NAME_BLOCK_IDS }, (_, i) => metric(i));
    const { index } = await MetricIndex.load(store);
    await named(index, store, metrics);
    await pack(index, store);
    const remove = async (ms: IndexableMetric[]) => {
      const batch = store.batch();
      for (const m of ms) index.stageRemove(batch, m.id);
      await batch.write();
      for (const m of ms) index.removed(m.id);
    };
    // Two of one block in one batch: neither may come back through the other's rewrite.
    await remove([metrics[3]!, metrics[7]!]);
    await remove(metrics.slice(NAME_BLOCK_IDS));
    t.is(await count(store, CF.index, NAME_BLOCK_KEYS), 1, 'the emptied range has no block');
    const { index: rebuilt } = await MetricIndex.load(store);
    t.is(rebuilt.lookup(metrics[3]!.id), -1);
    t.is(rebuilt.lookup(metrics[7]!.id), -1);
    t.is(rebuilt.lookup(metrics[NAME_BLOCK_IDS + 1]!.id), -1);
    t.is(rebuilt.canonicalOf(rebuilt.lookup(metrics[4]!.id)), metrics[4]!.name.canonical);
    t.is(decodeNameBlock((await firstBlock(store))!).length, NAME_BLOCK_IDS - 2);
    // Named again, a removed metric is a new one past the last alive id (given again after a
    // restart: here the first of the emptied range), with a record of its own.
    await named(rebuilt, store, [metrics[3]!]);
    t.is(rebuilt.lookup(metrics[3]!.id), NAME_BLOCK_IDS);
    t.is((await MetricIndex.load(store)).index.lookup(metrics[3]!.id), NAME_BLOCK_IDS);
  });
});

test('a metric given an id in a packed range after a restart joins the block when the block is next written', async (t) => {
  await withStore(async (store) => {
    const metrics = Array.from({ length: NAME_BLOCK_IDS + 10 }, (_, i) => metric(i));
    let { index } = await MetricIndex.load(store);
    await named(index, store, metrics.slice(0, NAME_BLOCK_IDS));
    await pack(index, store);
    // The range's last ids removed, then a restart: they are given again to new metrics.
    const batch = store.batch();
    for (const m of metrics.slice(NAME_BLOCK_IDS - 5, NAME_BLOCK_IDS)) index.stageRemove(batch, m.id);
    await batch.write();
    ({ index } = await MetricIndex.load(store));
    await named(index, store, metrics.slice(NAME_BLOCK_IDS));
    t.is(index.lookup(metrics[NAME_BLOCK_IDS]!.id), NAME_BLOCK_IDS - 5, 'an id of the packed range');
    // A removal in the range writes the block with every alive name in it, and no name twice.
    const again = store.batch();
    index.stageRemove(again, metrics[0]!.id);
    await again.write();
    index.removed(metrics[0]!.id);
    const { index: rebuilt } = await MetricIndex.load(store);
    for (const m of metrics.slice(NAME_BLOCK_IDS)) t.is(rebuilt.canonicalOf(rebuilt.lookup(m.id)), m.name.canonical);
    t.is(rebuilt.lookup(metrics[0]!.id), -1);
  });
});

test('a range with a name not yet written is not packed', async (t) => {
  await withStore(async (store) => {
    const metrics = Array.from({ length: NAME_BLOCK_IDS }, (_, i) => metric(i));
    const { index } = await MetricIndex.load(store);
    await named(index, store, metrics.slice(0, -1));
    // The last id of the range is staged in a batch that is not written (yet).
    const unwritten = store.batch();
    index.stage(unwritten, [{ metric: metrics[NAME_BLOCK_IDS - 1]!, kind: 'numeric' }]);
    t.deepEqual(await pack(index, store), []);
    unwritten.discard();
    await named(index, store, metrics.slice(-1));
    t.deepEqual(await pack(index, store), [0]);
  });
});

test('an index read from a snapshot knows which ranges are packed, so a removal rewrites the block', async (t) => {
  await withStore(async (store) => {
    const metrics = Array.from({ length: NAME_BLOCK_IDS }, (_, i) => metric(i));
    const { index } = await MetricIndex.load(store);
    await named(index, store, metrics);
    await pack(index, store);
    const image = index.image()!;
    const fromSnapshot = MetricIndex.fromImage(store, image);
    await fromSnapshot.notePackedNames();
    const batch = store.batch();
    fromSnapshot.stageRemove(batch, metrics[0]!.id);
    await batch.write();
    fromSnapshot.removed(metrics[0]!.id);
    const { index: rebuilt } = await MetricIndex.load(store);
    t.is(rebuilt.lookup(metrics[0]!.id), -1, 'gone from the block too');
    t.is(rebuilt.lookup(metrics[1]!.id), 1);
  });
});

async function firstBlock(store: Store): Promise<Buffer | null> {
  for await (const { value } of store.scan(CF.index, NAME_BLOCK_KEYS)) return value;
  return null;
}
