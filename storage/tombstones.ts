// Delete tombstones: a delete of `kind` data before `before` for a metric, made when the
// journal's next sequence was `seq`. Journal entries below `seq` that are replayed (after a
// crash) or still in flight must not bring deleted samples back, so records with a seq
// below a tombstone's and a timestamp before its time are dropped at apply. Once the
// journal is truncated past `seq` nothing can replay them, and the tombstone is pruned.
import type { DataKind } from '../model/ingest-record.js';
import { CF, METRIC_ID_BYTES, TOMBSTONE_KEYS, tombstoneKey as keyOf, tombstoneKindOf } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';

export interface Tombstone {
  before: number;
  seq: number;
}

const tombstoneKey = (idHex: string, kind: DataKind): Buffer => keyOf(Buffer.from(idHex, 'hex'), kind);

export class Tombstones {
  private readonly byMetric = new Map<string, Map<DataKind, Tombstone>>();
  /** No tombstone's seq is above this: records journaled from it on are never dropped. */
  private newest = 0;

  static async load(store: Store): Promise<Tombstones> {
    const t = new Tombstones();
    for await (const { key, value } of store.scan(CF.index, TOMBSTONE_KEYS)) {
      const idHex = key.subarray(1, 1 + METRIC_ID_BYTES).toString('hex');
      t.set(idHex, tombstoneKindOf(key), JSON.parse(value.toString('utf8')) as Tombstone);
    }
    return t;
  }

  get size(): number {
    return this.byMetric.size;
  }

  /**
   * False when no record journaled at `seq` can be dropped: the apply path asks this before it
   * names the metric (a shard's metric makes its hex id only when asked).
   */
  mayDrop(seq: number): boolean {
    return this.byMetric.size > 0 && seq < this.newest;
  }

  /** True when a record (journal `seq`, time `ts`) was deleted before it was applied. */
  drops(idHex: string, kind: DataKind, ts: number, seq: number): boolean {
    const t = this.byMetric.get(idHex)?.get(kind);
    return t !== undefined && seq < t.seq && ts < t.before;
  }

  /** Records a tombstone in `batch` (and in memory once the caller has written it). */
  add(batch: StoreBatch, idHex: string, kind: DataKind, stone: Tombstone): void {
    const have = this.byMetric.get(idHex)?.get(kind);
    const merged = have === undefined ? stone : { before: Math.max(have.before, stone.before), seq: Math.max(have.seq, stone.seq) };
    batch.put(CF.index, tombstoneKey(idHex, kind), Buffer.from(JSON.stringify(merged)));
    this.set(idHex, kind, merged);
  }

  /** Drops tombstones no journal entry can need any more (all below `journalCut`). */
  prune(batch: StoreBatch, journalCut: number): void {
    for (const [idHex, kinds] of this.byMetric) {
      for (const [kind, t] of kinds) {
        if (t.seq > journalCut) continue;
        batch.delete(CF.index, tombstoneKey(idHex, kind));
        kinds.delete(kind);
      }
      if (kinds.size === 0) this.byMetric.delete(idHex);
    }
  }

  private set(idHex: string, kind: DataKind, t: Tombstone): void {
    let kinds = this.byMetric.get(idHex);
    if (kinds === undefined) this.byMetric.set(idHex, (kinds = new Map()));
    kinds.set(kind, t);
    this.newest = Math.max(this.newest, t.seq);
  }
}
