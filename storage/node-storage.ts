// Everything the node (main thread) keeps on disk, in the RocksDB store at the data directory:
// its identity, the ingest journal and its cut, the cluster outbox, check tags and the shard
// layout (docs/format/storage.md). actors/node and actors/cluster reach RocksDB only through these.
import { randomUUID } from 'node:crypto';
import { CheckTagStore } from './check-tags.js';
import { diskUse, type DiskUse } from './figures.js';
import { CF, decodeU64, encodeU64, journalKey, journalSeqOf, STATE_KEY, TOPOLOGY_RANGE, topologyKey } from './keys.js';
import { Outbox } from './outbox.js';
import { Store, type StoreBatch } from './rocks.js';
import { prepareShardLayout, type ShardLayout } from './shard-layout.js';

/** An atomic write across the node's stores (the journal entry, outbox entries, applied marks). */
export type NodeBatch = StoreBatch;

/** Journal entries still on disk: written, but some of their records not yet sealed into blocks. */
export interface JournalBacklog {
  entries: number;
  first_seq: number | null;
  last_seq: number | null;
}

export class NodeStorage {
  readonly checkTags: CheckTagStore;
  readonly outbox: Outbox;

  private constructor(private readonly store: Store) {
    this.checkTags = new CheckTagStore(store);
    this.outbox = new Outbox(store);
  }

  /** Opens (creating if missing) the node store at the data directory; a DataDirError says why it cannot. */
  static async open(dataDir: string, options: { syncWrites?: boolean } = {}): Promise<NodeStorage> {
    return new NodeStorage(await Store.open(dataDir, options));
  }

  /** fsyncs of the WAL and the batches they covered (`syncWrites`; null when off). */
  get syncFigures(): { fsyncs: number; batches: number } | null {
    return this.store.syncFigures;
  }

  batch(): NodeBatch {
    return this.store.batch();
  }

  /** The node id: configured, else the one this data directory was given, else a new uuid. */
  async identity(configured: string | null): Promise<string> {
    const stored = await this.store.get(CF.state, STATE_KEY.nodeId);
    if (stored !== null && configured === null) return stored.toString('utf8');
    const identity = configured ?? randomUUID();
    if (stored === null || stored.toString('utf8') !== identity) await this.store.batch().put(CF.state, STATE_KEY.nodeId, Buffer.from(identity)).write();
    return identity;
  }

  /** Makes the shard stores under `dataDir` match `want` (storage/shard-layout.ts). */
  prepareShards(dataDir: string, want: ShardLayout, progress: (what: string) => void): Promise<void> {
    return prepareShardLayout(this.store, dataDir, want, progress);
  }

  // ---- loaded topologies and the rebalance (actors/cluster/topologies.ts, rebalance.ts) ----

  async storeTopology(hash: string, json: string): Promise<void> {
    await this.store.batch().put(CF.state, topologyKey(hash), Buffer.from(json)).write();
  }

  /** Every topology loaded with POST /topology/<hash>: its stored JSON. */
  async *loadedTopologies(): AsyncGenerator<string> {
    for await (const { value } of this.store.scan(CF.state, TOPOLOGY_RANGE)) yield value.toString('utf8');
  }

  async rebalanceState(): Promise<string | null> {
    return (await this.store.get(CF.state, STATE_KEY.rebalance))?.toString('utf8') ?? null;
  }

  async storeRebalanceState(json: string): Promise<void> {
    await this.store.batch().put(CF.state, STATE_KEY.rebalance, Buffer.from(json)).write();
  }

  async rebuildState(): Promise<string | null> {
    return (await this.store.get(CF.state, STATE_KEY.rebuild))?.toString('utf8') ?? null;
  }

  async storeRebuildState(json: string): Promise<void> {
    await this.store.batch().put(CF.state, STATE_KEY.rebuild, Buffer.from(json)).write();
  }

  async joinState(): Promise<string | null> {
    return (await this.store.get(CF.state, STATE_KEY.join))?.toString('utf8') ?? null;
  }

  async storeJoinState(json: string): Promise<void> {
    await this.store.batch().put(CF.state, STATE_KEY.join, Buffer.from(json)).write();
  }

  // ---- the ingest journal ----

  stageJournalEntry(batch: NodeBatch, seq: number, entry: Uint8Array): void {
    batch.put(CF.journal, journalKey(seq), entry);
  }

  /** Journal entries below this sequence are gone. */
  async journalCut(): Promise<number> {
    const cut = await this.store.get(CF.state, STATE_KEY.journalCut);
    return cut === null ? 0 : decodeU64(cut);
  }

  /** Every journal entry on disk, in sequence order. */
  async *journal(): AsyncGenerator<{ seq: number; entry: Buffer }> {
    for await (const { key, value } of this.store.scan(CF.journal, {})) yield { seq: journalSeqOf(key), entry: value };
  }

  /** Deletes every entry below `cut` (one range delete) and remembers the cut. */
  async truncateJournal(cut: number): Promise<void> {
    await this.store.batch().deleteRange(CF.journal, journalKey(0), journalKey(cut)).put(CF.state, STATE_KEY.journalCut, encodeU64(cut)).write();
  }

  /** Frees the bytes truncated entries left (range tombstones hide them; only compaction frees them). */
  compactJournal(): Promise<void> {
    return this.store.compact(CF.journal);
  }

  async journalBacklog(): Promise<JournalBacklog> {
    const first = await firstKey(this.store.scan(CF.journal, { limit: 1, capacity: 1 }));
    const last = await firstKey(this.store.scan(CF.journal, { limit: 1, capacity: 1, reverse: true }));
    if (first === null || last === null) return { entries: 0, first_seq: null, last_seq: null };
    // Sequences are consecutive and truncated from the front, so the span is the count.
    const [a, b] = [journalSeqOf(first), journalSeqOf(last)];
    return { entries: b - a + 1, first_seq: a, last_seq: b };
  }

  /** A point-in-time copy of the node's store into a new store at `dest` (bytes copied). */
  copySnapshotTo(dest: string): Promise<number> {
    return this.store.copySnapshotTo(dest);
  }

  diskUse(): Promise<DiskUse> {
    return diskUse(this.store);
  }

  /** At a clean stop, with the journal empty: only SST files stay on disk, not the WAL and entries that led to them. */
  async flushAndCompact(): Promise<void> {
    await this.store.flushAll();
    await this.store.compact(CF.journal);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

async function firstKey(entries: AsyncGenerator<{ key: Buffer }>): Promise<Buffer | null> {
  for await (const { key } of entries) return key;
  return null;
}
