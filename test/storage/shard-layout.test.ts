// storage/shard-layout.ts on real stores: a data directory written before shards is split so
// each shard store holds exactly its partitions' metrics (name records, blocks, index keys,
// tombstones, partition state) and the node store keeps only its own (check tags, node state);
// a shard count change re-splits; a new directory only records its layout; the partition
// count cannot change; and the crash orders the module promises hold.
import test, { type ExecutionContext } from 'ava';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { metricKey, placeMetric } from '../../model/metric-key.js';
import { canonicalizeMetricName } from '../../model/metric-name.js';
import { BlockStore } from '../../storage/blocks.js';
import { CF, checkTagsKey, encodeU64, NAME_BLOCK_KEYS, rollupDirtyKey, sealSeqKey, STATE_KEY, tombstoneKey, typeKey, type ColumnFamilyName } from '../../storage/keys.js';
import { MetricIndex, type IndexableMetric } from '../../storage/metric-index/metric-index.js';
import { NAME_BLOCK_IDS } from '../../storage/metric-index/name-blocks.js';
import { Store } from '../../storage/rocks.js';
import { prepareShardLayout, recordedLayout, shardDir, SPLIT_DONE_FILE } from '../../storage/shard-layout.js';
import { tempDir } from '../helpers/node.js';

const PARTITIONS = 8;
const UUID = '0a2a3f6c-0000-4000-8000-000000000001';

interface Placed extends IndexableMetric {
  partition: number;
}

function metric(i: number): Placed {
  const name = canonicalizeMetricName(`m${i}|ST[host:h${i}]`);
  if (!name.ok) throw new Error(name.reason);
  const { id, partition } = placeMetric(metricKey(UUID, name.value.canonical), PARTITIONS);
  return { id, partition, accountId: 1, uuid: UUID, checkName: 'c_1_1::t', name: name.value };
}
const METRICS = Array.from({ length: 12 }, (_, i) => metric(i));

/** A node store as the release before shards wrote it: every metric's data in it, plus the node's own. */
async function preShard(dataDir: string): Promise<void> {
  const node = await Store.open(dataDir);
  try {
    const { index } = await MetricIndex.load(node);
    const batch = node.batch();
    index.apply(index.stage(batch, METRICS.map((m) => ({ metric: m, kind: 'numeric' as const }))));
    for (const m of METRICS) batch.put(CF.index, tombstoneKey(m.id, 'text'), Buffer.from('{"before":1,"seq":1}'));
    // That release kept every type as a type key (the name record carries the first since v3).
    for (const m of METRICS) batch.put(CF.index, typeKey(m.id, 'numeric'), Buffer.alloc(0));
    for (let p = 0; p < PARTITIONS; p++) batch.put(CF.state, sealSeqKey(p), encodeU64(p));
    batch.put(CF.state, rollupDirtyKey(5, METRICS[0]!.id.toString('hex'), 0), Buffer.alloc(0));
    batch.put(CF.state, STATE_KEY.rollupFormat, Uint8Array.of(2));
    batch.put(CF.state, STATE_KEY.nodeId, Buffer.from('node-a'));
    batch.put(CF.index, checkTagsKey('1', UUID), Buffer.from('{"tags":{},"cleared":0}'));
    await batch.write();
    for (const m of METRICS) {
      const blocks = await BlockStore.open(node, m.partition);
      const b = blocks.batch();
      blocks.stageBlock(b, m, 'numeric', 0, blocks.nextSeqs(1)[0]!, { ts: [1_000], values: [m.partition] });
      await b.write();
    }
  } finally {
    await node.close();
  }
}

async function keys(store: Store, cf: ColumnFamilyName): Promise<string[]> {
  const out: string[] = [];
  for await (const { key } of store.scan(cf, {})) out.push(key.toString('hex'));
  return out.sort();
}

const hex = (b: Buffer) => b.toString('hex');

/** Checks that shard n of `shards` holds exactly the data of partitions p % shards = n. */
async function holdsItsPartitions(t: ExecutionContext, dataDir: string, shards: number): Promise<void> {
  for (let n = 0; n < shards; n++) {
    const mine = METRICS.filter((m) => m.partition % shards === n);
    const store = await Store.open(shardDir(dataDir, n));
    try {
      t.deepEqual(await keys(store, CF.metrics), mine.map((m) => hex(m.id)).sort(), `shard ${n} name records`);
      t.deepEqual((await keys(store, CF.numeric)).map((k) => k.slice(0, 32)), mine.map((m) => hex(m.id)).sort(), `shard ${n} blocks`);
      const index = await keys(store, CF.index);
      t.deepEqual(index, [...mine.map((m) => hex(typeKey(m.id, 'numeric'))), ...mine.map((m) => hex(tombstoneKey(m.id, 'text')))].sort(), `shard ${n} index keys`);
      const state = (await keys(store, CF.state)).map((k) => Buffer.from(k, 'hex').toString());
      const partitions = Array.from({ length: PARTITIONS }, (_, p) => p).filter((p) => p % shards === n);
      t.deepEqual(state.filter((k) => k.startsWith('seal_seq/')).sort(), partitions.map((p) => `seal_seq/${p}`).sort(), `shard ${n} seal sequences`);
      t.is(state.some((k) => k.startsWith('rdirty/5/')), 5 % shards === n, `shard ${n} rollup marker of partition 5`);
      t.true(state.includes('rollup_format'), 'every shard knows its rollups are v2');
      t.false(state.includes('node_id'), 'node state stays with the node');
    } finally {
      await store.close();
    }
  }
}

async function withDataDir(run: (dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = tempDir('ferrite-layout-');
  try {
    await run(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function prepare(dataDir: string, shards: number, partitions = PARTITIONS): Promise<string[]> {
  const progress: string[] = [];
  const node = await Store.open(dataDir);
  try {
    await prepareShardLayout(node, dataDir, { shards, partitions }, (what) => progress.push(what));
  } finally {
    await node.close();
  }
  return progress;
}

test('a pre-shard store is split by partition, the node store keeping only its own; a new shard count re-splits', async (t) => {
  await withDataDir(async (dataDir) => {
    await preShard(dataDir);
    t.true(new Set(METRICS.map((m) => m.partition % 3)).size === 3, 'the metrics reach every shard of 3');
    const progress = await prepare(dataDir, 2);
    t.deepEqual(progress, ['splitting store 1 of 1 into 2 shards']);
    await holdsItsPartitions(t, dataDir, 2);
    const node = await Store.open(dataDir);
    try {
      t.deepEqual(await recordedLayout(node), { shards: 2, partitions: PARTITIONS });
      for (const cf of [CF.metrics, CF.numeric]) t.deepEqual(await keys(node, cf), [], `node store ${cf} emptied`);
      t.deepEqual(await keys(node, CF.index), [hex(checkTagsKey('1', UUID))], 'check tags stay with the node');
      t.deepEqual((await keys(node, CF.state)).map((k) => Buffer.from(k, 'hex').toString()).sort(), ['node_id', 'rollup_format', 'shard_layout']);
    } finally {
      await node.close();
    }

    t.deepEqual(await prepare(dataDir, 3), ['splitting store 1 of 2 into 3 shards', 'splitting store 2 of 2 into 3 shards']);
    await holdsItsPartitions(t, dataDir, 3);
    t.false(existsSync(path.join(dataDir, 'shards.next')));
    t.deepEqual(await prepare(dataDir, 3), [], 'the same layout again: nothing to do');
    await holdsItsPartitions(t, dataDir, 3);
  });
});

test('a new data directory only records its layout; the partition count is fixed from then on', async (t) => {
  await withDataDir(async (dataDir) => {
    t.deepEqual(await prepare(dataDir, 4), []);
    t.false(existsSync(path.join(dataDir, 'shards')), 'each shard creates its store when it opens');
    const node = await Store.open(dataDir);
    t.deepEqual(await recordedLayout(node), { shards: 4, partitions: PARTITIONS });
    await node.close();
    await t.throwsAsync(prepare(dataDir, 4, 16), { message: /written with 8 partitions, not 16/ });
  });
});

test('a split cut short before the layout was recorded is discarded: the old shards stay whole', async (t) => {
  await withDataDir(async (dataDir) => {
    await preShard(dataDir);
    await prepare(dataDir, 2);
    // What a crash while re-splitting into 3 leaves: shards.next/ with some of the new stores, the layout still 2.
    for (let n = 0; n < 3; n++) {
      const partial = await Store.open(path.join(dataDir, 'shards.next', String(n)));
      await partial.close();
    }
    // The node is started again with the old shard count: the old shards are the data.
    t.deepEqual(await prepare(dataDir, 2), []);
    t.false(existsSync(path.join(dataDir, 'shards.next')));
    await holdsItsPartitions(t, dataDir, 2);
    // Or with the new count: the split is done anew.
    for (let n = 0; n < 2; n++) mkdirSync(path.join(dataDir, 'shards.next', String(n)), { recursive: true });
    await prepare(dataDir, 3);
    await holdsItsPartitions(t, dataDir, 3);
  });
});

test('a split recorded but not yet moved into place is finished at the next open', async (t) => {
  await withDataDir(async (dataDir) => {
    await preShard(dataDir);
    await prepare(dataDir, 2);
    // Made elsewhere: the whole split into 3, as it stands in shards.next/ when the layout has been recorded.
    const elsewhere = tempDir('ferrite-layout-');
    try {
      cpSync(dataDir, elsewhere, { recursive: true });
      await prepare(elsewhere, 3);
      cpSync(path.join(elsewhere, 'shards'), path.join(dataDir, 'shards.next'), { recursive: true });
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    writeFileSync(path.join(dataDir, 'shards.next', SPLIT_DONE_FILE), JSON.stringify({ shards: 3, partitions: PARTITIONS }));
    const node = await Store.open(dataDir);
    await node.batch().put(CF.state, STATE_KEY.shardLayout, Buffer.from(JSON.stringify({ shards: 3, partitions: PARTITIONS }))).write();
    await node.close();
    t.deepEqual(await prepare(dataDir, 3), [], 'no split: only the move');
    t.false(existsSync(path.join(dataDir, 'shards.next')));
    t.false(existsSync(path.join(dataDir, 'shards', SPLIT_DONE_FILE)));
    await holdsItsPartitions(t, dataDir, 3);
  });
});

test('packed name records are split too: each goes back to a record of its own in its metric\'s shard', async (t) => {
  await withDataDir(async (dataDir) => {
    const many = Array.from({ length: 2 * NAME_BLOCK_IDS + 300 }, (_, i) => metric(100 + i));
    const node = await Store.open(dataDir);
    try {
      const { index } = await MetricIndex.load(node);
      const batch = node.batch();
      index.apply(index.stage(batch, many.map((m) => ({ metric: m, kind: 'numeric' as const }))));
      await batch.write();
    } finally {
      await node.close();
    }
    await prepare(dataDir, 2);
    // Each shard packs the ranges of dense ids it holds whole (ids it does not hold are free: nothing pending).
    for (let n = 0; n < 2; n++) {
      const store = await Store.open(shardDir(dataDir, n));
      try {
        const { index } = await MetricIndex.load(store);
        const batch = store.batch();
        index.namesPacked(index.stagePackNames(batch));
        await batch.write();
      } finally {
        await store.close();
      }
    }
    let blocks = 0;
    for (let n = 0; n < 2; n++) {
      const store = await Store.open(shardDir(dataDir, n));
      for await (const _ of store.scan(CF.index, NAME_BLOCK_KEYS)) blocks++;
      await store.close();
    }
    t.true(blocks > 0, 'a shard packed its names');
    await prepare(dataDir, 3);
    for (let n = 0; n < 3; n++) {
      const store = await Store.open(shardDir(dataDir, n));
      try {
        const mine = many.filter((m) => m.partition % 3 === n);
        const { index } = await MetricIndex.load(store);
        t.deepEqual(mine.filter((m) => index.lookup(m.id) < 0).map((m) => m.name.canonical), [], `shard ${n} knows its metrics`);
        t.is(index.report().metrics, mine.length, `shard ${n} knows no other metric`);
      } finally {
        await store.close();
      }
    }
  });
});

test('stores merged into fewer shards, or split into more, number their name records anew: every shard\'s index loads whole', async (t) => {
  await withDataDir(async (dataDir) => {
    await prepare(dataDir, 2);
    // Named after the split, in each shard: both shards give dense ids from 0.
    const later = Array.from({ length: 30 }, (_, i) => metric(5000 + i));
    for (let n = 0; n < 2; n++) {
      const store = await Store.open(shardDir(dataDir, n));
      try {
        const { index } = await MetricIndex.load(store);
        const batch = store.batch();
        index.apply(index.stage(batch, later.filter((m) => m.partition % 2 === n).map((m) => ({ metric: m, kind: 'numeric' as const }))));
        await batch.write();
      } finally {
        await store.close();
      }
    }
    for (const shards of [1, 3]) {
      await prepare(dataDir, shards);
      for (let n = 0; n < shards; n++) {
        const store = await Store.open(shardDir(dataDir, n));
        try {
          const { index } = await MetricIndex.load(store);
          const mine = later.filter((m) => m.partition % shards === n);
          t.deepEqual(mine.filter((m) => index.lookup(m.id) < 0).map((m) => m.name.canonical), [], `${shards} shards: shard ${n} knows its metrics`);
          t.is(index.report().metrics, mine.length);
        } finally {
          await store.close();
        }
      }
    }
  });
});
