// Where a node's data lives: the node's own store (journal, outbox, node state, check tags) at
// the data directory, and each shard's store at `shards/<n>` holding the partitions p with
// p % shards = n (docs/format/storage.md "Shards"). The layout in use is recorded in the node
// store; a data directory written before shards, or with another shard count, is split anew
// when the node opens it:
//
// 1. every source store (the node store itself before shards, else the old shard stores) is
//    copied entry by entry into new stores under `shards.next/`, each entry to the shard of its
//    metric's partition (from the metric's name record) or of the partition its key names;
// 2. the new layout is recorded in the node store: the switch point of a crash;
// 3. `shards.next/` replaces `shards/`, and what was copied out of the node store is deleted.
//
// A crash before 2 leaves the old layout whole (`shards.next/` is discarded at the next open);
// after 2, the next open finishes 3. Which of the two it was is told by `shards.next/layout.json`,
// written (and synced) once the split is whole, before 2: `shards.next/` replaces `shards/` only
// when that file names the recorded layout.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { metricKey, placeMetric } from '../model/metric-key.js';
import { encodeActivityWindows } from './activity.js';
import { ACTIVITY_BLOCK_KEYS, activityBlockRangeOf, activityKey, CF, METRIC_ID_BYTES, NAME_BLOCK_KEYS, STATE_KEY, type ColumnFamilyName } from './keys.js';
import { decodeActivityBlock } from './metric-index/activity-blocks.js';
import { decodeNameBlock } from './metric-index/name-blocks.js';
import { decodeNameRecord, encodeNameRecord } from './metric-index/name-record.js';
import { Store, type StoreBatch } from './rocks.js';

export interface ShardLayout {
  shards: number;
  partitions: number;
}

/** Families whose every key starts with a metric id. */
const BY_METRIC_ID: readonly ColumnFamilyName[] = [CF.metrics, CF.numeric, CF.text, CF.histogramRaw, CF.histogram, CF.rollup];
/** Index keys that name a metric: a tag byte, then its id (types, activity, latest flags, tombstones). */
const INDEX_TAGS_WITH_ID = new Set([0x74, 0x61, 0x4c, 0x44]);
/** Name blocks (`N | range`): packed name records (storage/metric-index/name-blocks.ts). */
const NAME_BLOCK = NAME_BLOCK_KEYS.gte[0]!;
/** Activity blocks (`A | range`): packed activity windows (storage/metric-index/activity-blocks.ts). */
const ACTIVITY_BLOCK = ACTIVITY_BLOCK_KEYS.gte[0]!;
/** v1 postings end with the metric id. */
const INDEX_POSTING = 0x70;
/** State keys a partition owns: `<kind>/<partition>` or `<kind>/<partition>/…`. */
const PARTITION_STATE = /^(seal_seq|hdirty|hcum|hageing|rdirty|rageing|rfloor|rcarry)\/(\d+)(\/|$)/;
/** Entries copied between writes. */
const BATCH_ENTRIES = 10_000;
/** In `shards.next/`: the layout of a split that was copied whole. */
export const SPLIT_DONE_FILE = 'layout.json';

export function shardDir(dataDir: string, n: number): string {
  return path.join(dataDir, 'shards', String(n));
}

/** The layout recorded in the node store (null: written before shards). */
export async function recordedLayout(node: Store): Promise<ShardLayout | null> {
  const raw = await node.get(CF.state, STATE_KEY.shardLayout);
  return raw === null ? null : (JSON.parse(raw.toString('utf8')) as ShardLayout);
}

/**
 * Makes the shard stores match `want`, splitting the data anew if it was written with another
 * layout; `progress` hears of each source as it is copied.
 */
export async function prepareShardLayout(node: Store, dataDir: string, want: ShardLayout, progress: (what: string) => void): Promise<void> {
  const next = path.join(dataDir, 'shards.next');
  const current = path.join(dataDir, 'shards');
  const recorded = await recordedLayout(node);
  if (recorded !== null && recorded.partitions !== want.partitions) {
    throw new Error(`the data directory was written with ${recorded.partitions} partitions, not ${want.partitions}: partitions are fixed for the life of a data directory`);
  }
  if (recorded === null && !existsSync(current) && !(await holdsShardData(node))) {
    // A new data directory: nothing to split, each shard creates its store when it opens.
    await node.batch().put(CF.state, STATE_KEY.shardLayout, Buffer.from(JSON.stringify(want))).write();
    return;
  }
  if (recorded === null || recorded.shards !== want.shards) {
    rmSync(next, { recursive: true, force: true });
    const fromNodeStore = recorded === null;
    const sources = fromNodeStore ? [node] : await openAll(Array.from({ length: recorded.shards }, (_, n) => shardDir(dataDir, n)));
    try {
      await split(sources, next, want, progress);
    } finally {
      if (!fromNodeStore) for (const s of sources) await s.close();
    }
    writeSynced(path.join(next, SPLIT_DONE_FILE), JSON.stringify(want));
    await node.batch().put(CF.state, STATE_KEY.shardLayout, Buffer.from(JSON.stringify(want))).write();
  }
  if (existsSync(next)) {
    // A split cut short, or one whose layout was never recorded (the node was started again with the
    // old shard count), is not the data: the shards it would replace are.
    if (splitDone(next, want)) {
      rmSync(current, { recursive: true, force: true });
      renameSync(next, current);
      rmSync(path.join(current, SPLIT_DONE_FILE), { force: true });
    } else {
      rmSync(next, { recursive: true, force: true });
    }
  }
  await dropShardData(node);
}

/** True when `next` holds a whole split into `layout`. */
function splitDone(next: string, layout: ShardLayout): boolean {
  const file = path.join(next, SPLIT_DONE_FILE);
  if (!existsSync(file)) return false;
  const done = JSON.parse(readFileSync(file, 'utf8')) as ShardLayout;
  return done.shards === layout.shards && done.partitions === layout.partitions;
}

/** Writes a small file and syncs it and its directory, so it is on disk before what follows. */
function writeSynced(file: string, text: string): void {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const dir = openSync(path.dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

async function openAll(dirs: string[]): Promise<Store[]> {
  const stores: Store[] = [];
  try {
    for (const dir of dirs) stores.push(await Store.open(dir));
  } catch (error) {
    for (const s of stores) await s.close();
    throw error;
  }
  return stores;
}

async function split(sources: Store[], into: string, want: ShardLayout, progress: (what: string) => void): Promise<void> {
  const targets = await openAll(Array.from({ length: want.shards }, (_, n) => path.join(into, String(n))));
  try {
    const copier = new Copier(targets);
    // Dense ids are a store's own: two shards merged into one have given the same ids to different
    // metrics, so each target numbers the name records it receives anew.
    const dense = new Array<number>(want.shards).fill(0);
    const putName = (n: number, storageId: Buffer, record: Uint8Array) => copier.put(n, CF.metrics, storageId, Buffer.from(renumbered(record, () => dense[n]!++)));
    for (const [i, source] of sources.entries()) {
      progress(`splitting store ${i + 1} of ${sources.length} into ${want.shards} shards`);
      const { shardOfId, storageIdOf } = await metricShards(source, want);
      const ofId = (key: Buffer, at: number): number => shardOfId.get(key.toString('hex', at, at + METRIC_ID_BYTES)) ?? 0;
      for await (const e of source.scan(CF.metrics, { capacity: 1024 })) await putName(ofId(e.key, 0), e.key, e.value);
      for (const cf of BY_METRIC_ID.filter((f) => f !== CF.metrics)) for await (const e of source.scan(cf, { capacity: 1024 })) await copier.put(ofId(e.key, 0), cf, e.key, e.value);
      for await (const e of source.scan(CF.index, { capacity: 1024 })) {
        const tag = e.key[0]!;
        if (INDEX_TAGS_WITH_ID.has(tag)) await copier.put(ofId(e.key, 1), CF.index, e.key, e.value);
        // Packed name records go back to records of their own in their metric's shard (packed again there).
        else if (tag === NAME_BLOCK) for (const n of decodeNameBlock(e.value)) await putName(ofId(Buffer.from(n.storageId), 0), Buffer.from(n.storageId), n.record);
        // Activity blocks name the source's dense ids: each metric's windows go to an `a` key of its own (packed again there).
        else if (tag === ACTIVITY_BLOCK) {
          for (const { id, windows } of decodeActivityBlock(activityBlockRangeOf(e.key), e.value)) {
            const storageId = storageIdOf.get(id);
            if (storageId !== undefined) await copier.put(ofId(storageId, 0), CF.index, activityKey(storageId), encodeActivityWindows(windows));
          }
        }
        else if (tag === INDEX_POSTING) await copier.put(ofId(e.key, e.key.length - METRIC_ID_BYTES), CF.index, e.key, e.value);
        // Check tags (`c`) stay with the node.
      }
      for await (const e of source.scan(CF.state, { capacity: 1024 })) {
        const text = e.key.toString('utf8');
        const owned = PARTITION_STATE.exec(text);
        if (owned !== null) await copier.put(Number(owned[2]) % want.shards, CF.state, e.key, e.value);
        else if (e.key.equals(STATE_KEY.rollupFormat)) for (let n = 0; n < want.shards; n++) await copier.put(n, CF.state, e.key, e.value);
      }
    }
    await copier.flush();
    for (const t of targets) await t.flushAll();
  } finally {
    for (const t of targets) await t.close();
  }
}

/** A name record with the next dense id of its target store (v1 records, which have none, as they are: loading numbers them). */
function renumbered(record: Uint8Array, next: () => number): Uint8Array {
  const r = decodeNameRecord(record);
  return r.denseId === null ? record : encodeNameRecord(next(), r.typeBits, r);
}

/** Metric id (hex) → shard, and the source's dense id → metric id, from the name records (their own and packed ones). */
async function metricShards(source: Store, want: ShardLayout): Promise<{ shardOfId: Map<string, number>; storageIdOf: Map<number, Buffer> }> {
  const shardOfId = new Map<string, number>();
  const storageIdOf = new Map<number, Buffer>();
  const note = (storageId: Uint8Array, record: Uint8Array) => {
    const r = decodeNameRecord(record);
    const id = Buffer.from(storageId.subarray(0, METRIC_ID_BYTES));
    shardOfId.set(id.toString('hex'), placeMetric(metricKey(r.uuid, r.canonical), want.partitions).partition % want.shards);
    if (r.denseId !== null) storageIdOf.set(r.denseId, id);
  };
  for await (const { key, value } of source.scan(CF.metrics, { capacity: 4096 })) note(key, value);
  for await (const { value } of source.scan(CF.index, { ...NAME_BLOCK_KEYS, capacity: 256 })) for (const n of decodeNameBlock(value)) note(n.storageId, n.record);
  return { shardOfId, storageIdOf };
}

/** Writes entries to target stores in batches. */
class Copier {
  private readonly batches: StoreBatch[];

  constructor(private readonly targets: Store[]) {
    this.batches = targets.map((t) => t.batch());
  }

  async put(n: number, cf: ColumnFamilyName, key: Buffer, value: Buffer): Promise<void> {
    const batch = this.batches[n]!.put(cf, Buffer.from(key), Buffer.from(value));
    if (batch.size < BATCH_ENTRIES) return;
    await batch.write();
    this.batches[n] = this.targets[n]!.batch();
  }

  async flush(): Promise<void> {
    for (const b of this.batches) await b.write();
  }
}

/** True when the node store holds data of metrics (a store written before shards). */
async function holdsShardData(node: Store): Promise<boolean> {
  for (const cf of BY_METRIC_ID) for await (const _ of node.scan(cf, { limit: 1 })) return true;
  return false;
}

/** Deletes what the shards now hold from the node store (left there by a store written before shards). */
async function dropShardData(node: Store): Promise<void> {
  if (!(await holdsShardData(node))) return;
  const all = { gte: Buffer.alloc(0), lt: Buffer.alloc(METRIC_ID_BYTES + 64, 0xff) };
  const batch = node.batch();
  for (const cf of BY_METRIC_ID) batch.deleteRange(cf, all.gte, all.lt);
  for (const tag of [...INDEX_TAGS_WITH_ID, INDEX_POSTING, NAME_BLOCK, ACTIVITY_BLOCK]) batch.deleteRange(CF.index, Buffer.from([tag]), Buffer.from([tag + 1]));
  for (const kind of ['seal_seq', 'hdirty', 'hcum', 'hageing', 'rdirty', 'rageing', 'rfloor', 'rcarry']) batch.deleteRange(CF.state, Buffer.from(`${kind}/`), Buffer.from(`${kind}0`));
  await batch.write();
  for (const cf of [...BY_METRIC_ID, CF.index, CF.state]) await node.compact(cf);
}
