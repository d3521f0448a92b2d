// The metric index (DESIGN.md "Next shape": one home, one writer, in the journal batch).
// Every metric this node stores gets a dense integer id when it is first indexed; its name
// record (CF.metrics) carries the id, so it is reused after a restart. In memory, by dense
// id: the 16-byte storage id (with an open-addressing table to find a metric's dense id),
// account, check, canonical name (one UTF-8 arena), data types and activity windows; per
// (account, category) a sorted term dictionary whose terms hold sorted posting lists.
// Searches (query-plan.ts) run on these alone; names are decoded only for final results.
import { unionActivity, type ActivityWindow } from '../../model/activity.js';
import type { IngestBatch, Placed } from '../../model/ingest-batch.js';
import { canonicalText } from '../../model/metric-info.js';
import { splitCanonical, tagSearchText, type CanonicalName } from '../../model/metric-name.js';
import { decodeActivityWindows } from '../activity.js';
import { ACTIVITY_BLOCK_KEYS, ACTIVITY_KEYS, activityBlockKey, activityBlockRangeOf, CF, METRIC_ID_BYTES, NAME_BLOCK_KEYS, nameBlockKey, nameBlockRangeOf, TYPE_KEYS, typeKey, V1_POSTINGS } from '../keys.js';
import type { Store, StoreBatch } from '../rocks.js';
import { ACTIVITY_BLOCK_IDS, activityRangeOf, decodeActivityBlock, encodeActivityBlock, type ActivityEntry } from './activity-blocks.js';
import { ActivityColumns } from './activity-columns.js';
import { roomFor } from '../../model/typed-arrays.js';
import { IdList } from './id-sets.js';
import { decodeNameBlock, encodeNameBlock, NAME_BLOCK_IDS, nameRangeOf, type NameEntry } from './name-blocks.js';
import { decodeNameRecord, encodeNameRecord, type NameRecordFields } from './name-record.js';
import { TermColumnsBuilder, TermCursor } from './term-columns.js';
import { NO_VALUE, TermDictionary } from './term-dictionary.js';
import type { IndexImage } from './snapshot.js';

export type IndexKind = 'numeric' | 'text' | 'histogram';

/** What the index needs to know of a metric (actors' MetricInfo has it). */
export interface IndexableMetric {
  /** 16-byte storage id. */
  id: Buffer;
  accountId: number;
  uuid: string;
  checkName: string;
  name: { canonical: string; name: string; tags: readonly { category: string; value: string | null }[] };
  /** The canonical name, when the metric has it without parsing (model/metric-info.ts `canonicalText`). */
  canonical?: string;
  /** Its UTF-8 bytes, when the metric has them (a parse lane's declaration): copied as they are. */
  canonicalBytes?: Uint8Array;
}

/** Type bits, in the order find reports types. */
export const KIND_BITS: Readonly<Record<IndexKind, number>> = { numeric: 1, histogram: 2, text: 4 };
/** `stagedNow`: the name record was written in this `stage` call (above every kind bit). */
const NAMED_NOW = 0x80;
const KIND_NAMES: readonly (readonly string[])[] = Array.from({ length: 8 }, (_, bits) => (['numeric', 'histogram', 'text'] as const).filter((k) => (bits & KIND_BITS[k]) !== 0));
const KIND_TEXTS: readonly string[] = KIND_NAMES.map((names) => names.join(','));
/** Hash slots an empty index starts with. */
const FIRST_SLOTS = 2048;

const enum State {
  Free = 0,
  /** Assigned in a batch not yet written: not searchable. */
  Pending = 1,
  Alive = 2,
  Dead = 3,
}

const EMPTY = Buffer.alloc(0);
/** JS heap one check, account or category of an index image takes while written: its object and JSON. */
const IMAGE_BYTES_PER_ENTRY = 256;
const NO_IDS: ReadonlySet<number> = new Set();
/** Ranges of names one packing writes (a million new series are a thousand ranges: packed over many checkpoints). */
export const PACK_RANGES = 16;
/** Compact posting lists once this share of indexed ids is dead. */
const COMPACT_DEAD_SHARE = 0.25;

export interface AccountIndex {
  /** Every id indexed in the account (dead ones until the next compaction). */
  readonly all: IdList;
  readonly categories: Map<string, TermDictionary>;
}

/** What one batch adds to the index, applied once the batch is written. */
export interface StagedIndex<M extends IndexableMetric = IndexableMetric> {
  /** The metrics new to the index (or pending in an unwritten batch) and their dense ids, in step (no object per metric: a backlog holds these). */
  fresh: M[];
  freshIds: number[];
  types: number[];
  /** The dense id of each record staged, in order (staged or stored: what `stagedId` answers). */
  ids: number[];
  /** What `stageWrites` puts: the kind bits of each fresh metric's name record (as `fresh`), and (id, kind bit) of each type key. */
  recordBits: number[];
  typeKeys: number[];
}

/** A check's series on one shard (by uuid; `checkName` is the first name seen). */
export interface CheckSeries {
  uuid: string;
  account: number;
  checkName: string;
  series: number;
}

export interface SeriesReport {
  /** [account, series] pairs. */
  accounts: [number, number][];
  /** The checks with the most series, most first. */
  checks: CheckSeries[];
}

export interface IndexLoadReport {
  metrics: number;
  migrated: number;
  /** Wall-clock and CPU time of the load. */
  ms: number;
  cpuMs: number;
  /** Read from the snapshot a clean stop left (storage/metric-index/snapshot.ts), not rebuilt. */
  fromSnapshot?: boolean;
}

export class MetricIndex {
  private size = 0;
  private capacity = 0;
  private storageIds = new Uint8Array(0);
  private storageIds32 = new Uint32Array(0);
  private state = new Uint8Array(0);
  private typeBits = new Uint8Array(0);
  private accountOf = new Uint32Array(0);
  private checkOfId = new Uint32Array(0);
  private nameStart = new Uint32Array(0);
  private nameLength = new Uint16Array(0);
  private names = Buffer.alloc(0);
  private namesUsed = 0;
  private table = new Int32Array(FIRST_SLOTS);
  private readonly checks: { uuid: string; checkName: string; accountId: number }[] = [];
  /** Series (pending or alive ids) per account and per check id: what series limits count. */
  private readonly accountSeries = new Map<number, number>();
  private readonly checkSeries: number[] = [];
  private readonly checkIds = new Map<string, number | number[]>();
  private readonly accounts = new Map<number, AccountIndex>();
  /** During a load ids are posted in storage id order: lists are appended to, and sorted once at the end. */
  private bulk = false;
  activity = new ActivityColumns();
  private dead = 0;
  private alive = 0;
  /** How the last load went (for /state). */
  loaded: IndexLoadReport = { metrics: 0, migrated: 0, ms: 0, cpuMs: 0 };
  /** Ids in the lookup table (pending, alive). */
  private linked = 0;
  /** Ranges of dense ids (activity-blocks.ts) in which a metric's windows changed since their block was last written. */
  private readonly activityDirty = new Set<number>();
  /**
   * By id: kind bits the name records of pending ids carry (a record rewritten by a later batch
   * keeps them). A column, not a Map: a burst of new series made a Map of every pending metric,
   * which grew by doubling into fresh memory (≈ 15 µs a page fault here) and shrank again.
   */
  private pendingTypes = new Uint8Array(0);
  /** By id, scratch of one `stage` call: the kind bits it staged, and NAMED_NOW once it wrote the name record. */
  private stagedNow = new Uint8Array(0);
  /** Ranges of dense ids whose name records are packed in a block (name-blocks.ts). */
  private readonly packed = new Set<number>();
  /** Per unwritten batch, the packed metrics it removes. */
  private readonly leaving = new WeakMap<StoreBatch, Set<number>>();

  private constructor(private readonly store: Store) {
    this.grow(1024);
  }

  /** Builds the index from the name records, type keys and activity keys on disk. */
  static async load(store: Store): Promise<{ index: MetricIndex; report: IndexLoadReport }> {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const index = new MetricIndex(store);
    index.bulk = true;
    const v1: { storageId: Buffer; fields: NameRecordFields }[] = [];
    for await (const { key, value } of store.scan(CF.metrics, { capacity: 4096 })) {
      const r = decodeNameRecord(value);
      if (r.denseId === null) v1.push({ storageId: Buffer.from(key), fields: r });
      else {
        index.restore(r.denseId, key, r, splitCanonical(r.canonical));
        index.typeBits[r.denseId] = r.typeBits;
      }
    }
    for await (const { key, value } of store.scan(CF.index, { ...NAME_BLOCK_KEYS, capacity: 256 })) {
      index.packed.add(nameBlockRangeOf(key));
      for (const { storageId, record } of decodeNameBlock(value)) {
        const r = decodeNameRecord(record);
        if (r.denseId === null) throw new Error(`BUG: a v1 name record in name block ${nameBlockRangeOf(key)}`);
        index.restore(r.denseId, storageId, r, splitCanonical(r.canonical));
        index.typeBits[r.denseId] = r.typeBits;
      }
    }
    for (const { storageId, fields } of v1) index.restore(index.size, storageId, fields, splitCanonical(fields.canonical));
    index.endBulk();
    await index.loadTypes();
    await index.loadActivity();
    if (v1.length > 0) await index.migrate(v1.map((m) => m.storageId));
    const cpu = process.cpuUsage(cpu0);
    index.loaded = { metrics: index.alive, migrated: v1.length, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
    return { index, report: index.loaded };
  }

  /**
   * About how much JS heap `image()` and writing it take: the terms are columns off the heap
   * (storage/metric-index/term-columns.ts); checks, accounts and categories are objects and
   * JSON. A shard with a small heap (`shardHeapMb`) skips its snapshot when this does not fit
   * (storage/shard-storage.ts).
   */
  imageHeapBytes(): number {
    let categories = 0;
    for (const a of this.accounts.values()) categories += a.categories.size + 1;
    return (categories + this.checks.length) * IMAGE_BYTES_PER_ENTRY;
  }

  /**
   * The whole index as plain data, live metrics only (an index snapshot); null while a batch
   * that named new metrics is unwritten (a snapshot must equal what the store says). The
   * columns are views of the index's own: write the image before the index changes again.
   */
  image(): IndexImage | null {
    const n = this.size;
    const alive = new Uint8Array(n);
    for (let id = 0; id < n; id++) {
      if (this.state[id] === State.Pending) return null;
      alive[id] = this.state[id] === State.Alive ? 1 : 0;
    }
    // Lists hold dead ids only until they are compacted: with none, each list is taken as it is.
    const keep = this.dead === 0 ? null : (id: number) => alive[id] === 1;
    const terms = new TermColumnsBuilder(this.termTotals());
    const accounts = [...this.accounts].map(([account, a]) => {
      const all = keep === null ? a.all.view() : a.all.view().filter(keep);
      return {
        account,
        allAt: terms.addList(all),
        allLength: all.length,
        categories: [...a.categories].map(([category, dict]) => ({ category, spelling: dict.spelling, terms: dict.writeTo(terms, keep) })),
      };
    });
    return {
      size: n,
      storageIds: this.storageIds.subarray(0, n * METRIC_ID_BYTES),
      alive,
      typeBits: this.typeBits.subarray(0, n),
      accountOf: this.accountOf.subarray(0, n),
      checkOfId: this.checkOfId.subarray(0, n),
      nameStart: this.nameStart.subarray(0, n),
      nameLength: this.nameLength.subarray(0, n),
      names: this.names.subarray(0, this.namesUsed),
      checks: this.checks.map((c) => [c.uuid, c.checkName, c.accountId]),
      accounts,
      terms: terms.finish(),
      activity: this.activity.image(n),
    };
  }

  /** Terms, their text bytes and their ids (with every account's all-ids list): an image's sizes. */
  private termTotals(): { terms: number; textBytes: number; postings: number } {
    const totals = { terms: 0, textBytes: 0, postings: 0 };
    for (const a of this.accounts.values()) {
      totals.postings += a.all.size;
      for (const dict of a.categories.values()) {
        totals.terms += dict.size;
        totals.textBytes += dict.textBytes;
        totals.postings += dict.postings;
      }
    }
    return totals;
  }

  /** The index an image describes (see `image`); its storage ids are linked and series counted anew. */
  static fromImage(store: Store, image: IndexImage): MetricIndex {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const index = new MetricIndex(store);
    const n = image.size;
    index.grow(Math.max(1024, n));
    // Slots for every id at once (linked one by one they would be rehashed at each doubling).
    index.rehash(slotCountFor(n));
    index.size = n;
    index.storageIds.set(image.storageIds);
    index.typeBits.set(image.typeBits);
    index.accountOf.set(image.accountOf);
    index.checkOfId.set(image.checkOfId);
    index.nameStart.set(image.nameStart);
    index.nameLength.set(image.nameLength);
    index.names = Buffer.from(image.names);
    index.namesUsed = image.names.byteLength;
    for (const [uuid, checkName, accountId] of image.checks) index.checkId(uuid, checkName, accountId);
    for (let id = 0; id < n; id++) {
      if (image.alive[id] !== 1) continue;
      index.state[id] = State.Alive;
      index.alive++;
      index.link(id);
      index.linked++;
      index.countSeries(index.accountOf[id]!, index.checkOfId[id]!, 1);
    }
    const terms = new TermCursor(image.terms);
    for (const a of image.accounts) {
      const categories = new Map<string, TermDictionary>();
      for (const c of a.categories) categories.set(c.category, TermDictionary.fromColumns(terms, c.terms, c.spelling));
      index.accounts.set(a.account, { all: IdList.of(image.terms.postings.subarray(a.allAt, a.allAt + a.allLength)), categories });
    }
    index.activity = ActivityColumns.of(image.activity);
    const cpu = process.cpuUsage(cpu0);
    index.loaded = { metrics: index.alive, migrated: 0, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, fromSnapshot: true };
    return index;
  }

  /** The dense id of a stored metric (-1: not indexed here). */
  lookup(storageId: Buffer): number {
    const id = this.find(storageId);
    return id >= 0 && this.state[id] === State.Alive ? id : -1;
  }

  /** The dense id of a metric staged or stored here, even before its batch is durable (-1: neither). */
  stagedId(storageId: Buffer): number {
    const id = this.find(storageId);
    return id >= 0 && (this.state[id] === State.Alive || this.state[id] === State.Pending) ? id : -1;
  }

  /** A metric's activity windows as the index holds them (every sample noted); undefined when the index does not know it. */
  activityOf(storageId: Buffer): readonly ActivityWindow[] | undefined {
    const id = this.lookup(storageId);
    return id < 0 ? undefined : this.activity.windows(id);
  }

  /**
   * Adds to `batch` the activity block of every range in which a window changed since its
   * block was last written; the ranges taken. A shard writes them at each checkpoint, in its
   * index queue; if the write fails, `activityUnpacked` gives them back. A range holding a metric
   * whose name is not yet written stays to be written again: its windows are not in this block.
   */
  stagePackActivity(batch: StoreBatch): number[] {
    const ranges = [...this.activityDirty];
    for (const range of ranges) {
      this.activityDirty.delete(range);
      const entries: ActivityEntry[] = [];
      for (let id = range * ACTIVITY_BLOCK_IDS; id < Math.min(this.size, (range + 1) * ACTIVITY_BLOCK_IDS); id++) {
        if (this.state[id] === State.Pending) this.activityDirty.add(range);
        if (this.state[id] !== State.Alive) continue;
        const windows = this.activity.windows(id);
        if (windows.length > 0) entries.push({ id, windows });
      }
      if (entries.length === 0) batch.delete(CF.index, activityBlockKey(range));
      else batch.put(CF.index, activityBlockKey(range), encodeActivityBlock(range, entries));
    }
    return ranges;
  }

  /** Ranges whose blocks `stagePackActivity` took but were not written. */
  activityUnpacked(ranges: readonly number[]): void {
    for (const r of ranges) this.activityDirty.add(r);
  }

  has(storageId: Buffer): boolean {
    return this.lookup(storageId) >= 0;
  }

  /**
   * Adds to `batch` what must be durable with it: the name record of each metric new to the
   * index (or still pending in a batch not yet written) and a type key for each data type a
   * metric shows for the first time. Call `apply` once the batch is written.
   */
  stage<M extends IndexableMetric>(batch: StoreBatch, records: Iterable<{ metric: M; kind: IndexKind }>): StagedIndex<M> {
    const staged = this.reserve(records);
    this.stageWrites(batch, staged);
    return staged;
  }

  /**
   * `stage` without the batch: ids are given and the index answers the names at once (pending),
   * and `stageWrites` adds their records to a batch later. A shard reserves as samples arrive and
   * writes in its index queue: through a backlog of a million new series, the records (a RocksDB
   * operation and two buffers a series) then live a moment instead of through the backlog, where
   * they were ≈ 100 MB of the shard's heap and its collections' work.
   */
  reserve<M extends IndexableMetric>(records: Iterable<{ metric: M; kind: IndexKind }>): StagedIndex<M> {
    const staged: StagedIndex<M> = { fresh: [], freshIds: [], types: [], ids: [], recordBits: [], typeKeys: [] };
    let last: M | null = null;
    let id = -1;
    try {
      for (const r of records) {
        const m = r.metric;
        if (m !== last) {
          last = m;
          // A metric's `id` may be computed when asked (actors/shard/series-table.ts): asked once per metric.
          const storageId = m.id;
          id = this.find(storageId);
          if (id < 0) id = this.assign(m, storageId);
          if (this.state[id] === State.Pending && (this.stagedNow[id]! & NAMED_NOW) === 0) {
            // The record carries the kind it is named with (no type key for it), and those of
            // earlier batches naming it that are not yet written: this record replaces theirs.
            const recordBits = this.pendingTypes[id]! | KIND_BITS[r.kind];
            this.pendingTypes[id] = recordBits;
            this.stagedNow[id] = recordBits | NAMED_NOW;
            staged.fresh.push(m);
            staged.freshIds.push(id);
            staged.recordBits.push(recordBits);
            staged.types.push(id, recordBits);
          }
        }
        staged.ids.push(id);
        const bit = KIND_BITS[r.kind];
        if ((this.typeBits[id]! & bit) !== 0 || (this.stagedNow[id]! & bit) !== 0) continue;
        this.stagedNow[id] |= bit;
        staged.typeKeys.push(id, bit);
        staged.types.push(id, bit);
      }
    } finally {
      // Every id given a bit above was pushed to `types` with it.
      for (let i = 0; i < staged.types.length; i += 2) this.stagedNow[staged.types[i]!] = 0;
    }
    return staged;
  }

  /** Adds to `batch` the name records and type keys `reserve` staged. */
  stageWrites(batch: StoreBatch, staged: StagedIndex): void {
    staged.fresh.forEach((m, i) => {
      const id = staged.freshIds[i]!;
      batch.put(CF.metrics, this.storageIdOf(id), encodeNameRecord(id, staged.recordBits[i]!, { accountId: m.accountId, uuid: m.uuid, checkName: m.checkName, canonical: this.canonicalBytes(id) }));
    });
    for (let i = 0; i < staged.typeKeys.length; i += 2) batch.put(CF.index, typeKey(this.storageIdOf(staged.typeKeys[i]!), KIND_NAMES[staged.typeKeys[i + 1]!]![0]!), EMPTY);
  }

  /** Makes what `stage` wrote searchable (its batch is durable); the metrics new to the index. */
  apply<M extends IndexableMetric>(staged: StagedIndex<M>): M[] {
    const named: M[] = [];
    for (let i = 0; i < staged.fresh.length; i++) {
      const id = staged.freshIds[i]!;
      const metric = staged.fresh[i]!;
      if (this.state[id] !== State.Pending) continue;
      this.pendingTypes[id] = 0;
      // The name as staged (canonical, as a load reads stored ones), not asked of the metric: a
      // shard metric finds its name through the series table and back here (≈ 0.7 s of a million new series).
      const name = splitCanonical(this.canonicalOf(id));
      this.post(id, metric.accountId, name.name, metric.uuid, name.tags);
      named.push(metric);
    }
    for (let i = 0; i < staged.types.length; i += 2) this.typeBits[staged.types[i]!]! |= staged.types[i + 1]!;
    return named;
  }

  /**
   * Notes each sample's timestamp in its metric's activity windows. A metric's `indexId`
   * (its dense id here, or -1 when the caller does not know it) saves the lookup.
   */
  noteActivity(samples: IngestBatch<Placed & { id: Buffer; indexId: number }>): void {
    const note = (id: number, ts: number) => {
      if (id >= 0 && this.activity.note(id, ts)) this.activityDirty.add(activityRangeOf(id));
    };
    for (const part of samples.parts.values()) {
      for (let i = 0; i < part.length; i++) note(this.idOf(part.metrics[i]!), part.ts[i]!);
      for (const r of part.others) note(this.idOf(r.metric), r.ts);
    }
  }

  private idOf(m: { id: Buffer; indexId: number }): number {
    return m.indexId >= 0 ? m.indexId : this.lookup(m.id);
  }

  setActivity(storageId: Buffer, windows: readonly ActivityWindow[]): void {
    const id = this.lookup(storageId);
    if (id < 0) return;
    this.activity.set(id, windows);
    this.activityDirty.add(activityRangeOf(id));
  }

  /** Adds the deletes of a metric's index records to `batch`; call `removed` once it is written. */
  stageRemove(batch: StoreBatch, storageId: Buffer): void {
    batch.delete(CF.metrics, storageId);
    const id = this.find(storageId);
    if (id >= 0 && this.packed.has(nameRangeOf(id))) {
      // A packed name leaves its block: the block is written again without it (and without any
      // other metric this batch removes).
      let leaving = this.leaving.get(batch);
      if (leaving === undefined) this.leaving.set(batch, (leaving = new Set()));
      leaving.add(id);
      this.stageNameBlock(batch, nameRangeOf(id), leaving);
    }
    for (const kind of Object.keys(KIND_BITS)) batch.delete(CF.index, typeKey(storageId, kind));
  }

  /**
   * Stages the packing of every range of dense ids not packed yet whose ids are all written (none
   * pending), `most` at a time: its alive metrics' name records into one block, their own records deleted. Call
   * `namesPacked` with the ranges once the batch is written. Must not run beside a `stageRemove`
   * whose batch is unwritten (the shard runs both in its index queue).
   */
  stagePackNames(batch: StoreBatch, most = PACK_RANGES, from = 0): number[] {
    const ranges: number[] = [];
    for (let range = from; (range + 1) * NAME_BLOCK_IDS <= this.size && ranges.length < most; range++) {
      if (this.packed.has(range) || !this.allWritten(range)) continue;
      this.stageNameBlock(batch, range, NO_IDS);
      ranges.push(range);
    }
    return ranges;
  }

  namesPacked(ranges: readonly number[]): void {
    for (const range of ranges) this.packed.add(range);
  }

  /** After `fromImage`, which ranges' names are packed (their block keys, read without the blocks). */
  async notePackedNames(): Promise<void> {
    for await (const { key } of this.store.scan(CF.index, { ...NAME_BLOCK_KEYS, keysOnly: true })) this.packed.add(nameBlockRangeOf(key));
  }

  private allWritten(range: number): boolean {
    for (let id = range * NAME_BLOCK_IDS; id < (range + 1) * NAME_BLOCK_IDS; id++) if (this.state[id] === State.Pending) return false;
    return true;
  }

  /**
   * Stages the block of `range` holding its alive metrics but those `without` (none left: no
   * block), and the delete of their records of their own. The block holds every alive name of the
   * range, whether packed before or not: ids past the last alive one are given again after a
   * restart, so a packed range may have gained metrics since.
   */
  private stageNameBlock(batch: StoreBatch, range: number, without: ReadonlySet<number>): void {
    const entries: NameEntry[] = [];
    for (let id = range * NAME_BLOCK_IDS; id < Math.min(this.size, (range + 1) * NAME_BLOCK_IDS); id++) {
      if (this.state[id] !== State.Alive || without.has(id)) continue;
      const storageId = this.storageIdOf(id);
      entries.push({ storageId, record: encodeNameRecord(id, this.typeBits[id]!, { accountId: this.accountOf[id]!, uuid: this.uuidOf(id), checkName: this.checkNameOf(id), canonical: this.canonicalOf(id) }) });
      batch.delete(CF.metrics, storageId);
    }
    if (entries.length === 0) batch.delete(CF.index, nameBlockKey(range));
    else batch.put(CF.index, nameBlockKey(range), encodeNameBlock(entries));
  }


  /** Forgets a metric: it leaves every search at once, and data written later starts a fresh metric. */
  removed(storageId: Buffer): void {
    const id = this.find(storageId);
    if (id < 0) return;
    if (this.state[id] === State.Alive || this.state[id] === State.Pending) this.countSeries(this.accountOf[id]!, this.checkOfId[id]!, -1);
    if (this.state[id] === State.Alive) {
      this.alive--;
      this.dead++;
    }
    this.state[id] = State.Dead;
    this.pendingTypes[id] = 0;
    this.activity.set(id, []);
    this.activityDirty.add(activityRangeOf(id));
    this.unlink(storageId);
    this.linked--;
    if (this.dead > 1000 && this.dead > COMPACT_DEAD_SHARE * (this.alive + this.dead)) this.compact();
  }

  // ---- series counts (cardinality limits, /state) ----

  /** Series of the account here, counted from the moment they are staged. */
  seriesOfAccount(accountId: number): number {
    return this.accountSeries.get(accountId) ?? 0;
  }

  /** Series of the check uuid here (under any check name). */
  seriesOfCheck(uuid: string): number {
    const ids = this.checkIds.get(uuid);
    if (ids === undefined) return 0;
    if (typeof ids === 'number') return this.checkSeries[ids] ?? 0;
    return ids.reduce((n, c) => n + (this.checkSeries[c] ?? 0), 0);
  }

  /** Series per account, and the `top` checks (by uuid) holding the most series. */
  seriesReport(top: number): SeriesReport {
    const accounts = [...this.accountSeries];
    const byUuid = new Map<string, CheckSeries>();
    this.checks.forEach((c, id) => {
      const n = this.checkSeries[id] ?? 0;
      if (n === 0) return;
      const known = byUuid.get(c.uuid);
      if (known === undefined) byUuid.set(c.uuid, { uuid: c.uuid, account: c.accountId, checkName: c.checkName, series: n });
      else known.series += n;
    });
    const checks = [...byUuid.values()].sort((a, b) => b.series - a.series || (a.uuid < b.uuid ? -1 : 1)).slice(0, top);
    return { accounts, checks };
  }

  // ---- reads for searches ----

  account(accountId: number): AccountIndex | undefined {
    return this.accounts.get(accountId);
  }

  /** Larger than every dense id. */
  get bound(): number {
    return this.size;
  }

  isAlive(id: number): boolean {
    return this.state[id] === State.Alive;
  }

  /** The data types comma-joined, as find's `type` field shows them. */
  typeTextOf(id: number): string {
    return KIND_TEXTS[this.typeBits[id]! & 7]!;
  }

  typesOf(id: number): readonly string[] {
    return KIND_NAMES[this.typeBits[id]! & 7]!;
  }

  accountIdOf(id: number): number {
    return this.accountOf[id]!;
  }

  uuidOf(id: number): string {
    return this.checks[this.checkOfId[id]!]!.uuid;
  }

  checkNameOf(id: number): string {
    return this.checks[this.checkOfId[id]!]!.checkName;
  }

  /** The canonical name of a metric staged or stored here, by storage id (null: neither). */
  canonicalOfMetric(storageId: Buffer): string | null {
    const id = this.stagedId(storageId);
    return id < 0 ? null : this.canonicalOf(id);
  }

  canonicalOf(id: number): string {
    const start = this.nameStart[id]!;
    return this.names.toString('utf8', start, start + this.nameLength[id]!);
  }

  /** The canonical name's UTF-8 bytes: a view of the index's arena, read before the next name is added. */
  canonicalBytes(id: number): Uint8Array {
    const start = this.nameStart[id]!;
    return this.names.subarray(start, start + this.nameLength[id]!);
  }

  /** The UTF-8 length of the canonical name. */
  canonicalByteLength(id: number): number {
    return this.nameLength[id]!;
  }

  /** Copies the canonical name's UTF-8 bytes into `target` at `at`; returns the bytes copied. */
  copyCanonical(id: number, target: Buffer, at: number): number {
    const start = this.nameStart[id]!;
    return this.names.copy(target, at, start, start + this.nameLength[id]!);
  }

  /** The check (uuid and check name) of `id`, as a small integer shared by the check's metrics. */
  checkOf(id: number): number {
    return this.checkOfId[id]!;
  }

  storageIdOf(id: number): Buffer {
    return Buffer.from(this.storageIds.subarray(id * METRIC_ID_BYTES, (id + 1) * METRIC_ID_BYTES));
  }

  /** For /state: metrics searchable, bytes of the per-id columns (posting lists not included), the last load. */
  report(): Record<string, number> {
    const columnBytes =
      this.storageIds.byteLength + this.state.byteLength + this.typeBits.byteLength + this.accountOf.byteLength + this.checkOfId.byteLength + this.nameStart.byteLength + this.nameLength.byteLength + this.names.byteLength + this.table.byteLength + this.activity.bytes;
    return { metrics: this.alive, dead: this.dead, accounts: this.accounts.size, column_bytes: columnBytes, load_ms: Math.round(this.loaded.ms), load_cpu_ms: Math.round(this.loaded.cpuMs), loaded_metrics: this.loaded.metrics, loaded_from_snapshot: this.loaded.fromSnapshot === true ? 1 : 0, name_blocks: this.packed.size };
  }

  // ---- internals ----

  /** A new pending dense id for `m`. */
  private assign(m: IndexableMetric, storageId: Buffer): number {
    const id = this.size;
    this.place(id, storageId, m.accountId, m.uuid, m.checkName, m.canonicalBytes ?? canonicalText(m));
    this.state[id] = State.Pending;
    return id;
  }

  /** Fills the columns of `id` and links its storage id. */
  private place(id: number, storageId: Uint8Array, accountId: number, uuid: string, checkName: string, canonical: string | Uint8Array): void {
    if (id >= this.capacity) this.grow(roomFor(this.capacity, id + 1));
    // Ids restored from disk come in storage id order, not dense id order.
    if (id >= this.size) this.size = id + 1;
    this.storageIds.set(storageId.subarray(0, METRIC_ID_BYTES), id * METRIC_ID_BYTES);
    this.accountOf[id] = accountId;
    const check = this.checkId(uuid, checkName, accountId);
    this.checkOfId[id] = check;
    this.countSeries(accountId, check, 1);
    this.appendName(id, canonical);
    this.link(id);
    this.linked++;
  }

  private restore(id: number, storageId: Uint8Array, r: NameRecordFields, split: Pick<CanonicalName, 'name' | 'tags'>): void {
    if (id < this.size && this.state[id] !== State.Free) throw new Error(`BUG: dense id ${id} is in two name records`);
    this.place(id, storageId, r.accountId, r.uuid, r.checkName, r.canonical);
    this.post(id, r.accountId, split.name, r.uuid, split.tags);
  }

  /** Makes `id` searchable under its name, check and stream tags. */
  private post(id: number, accountId: number, name: string, uuid: string, tags: readonly { category: string; value: string | null }[]): void {
    const account = this.accountIndex(accountId);
    this.addTo(account.all, id);
    dictionary(account, '__name').add(name, id, null, this.bulk);
    dictionary(account, '__check_uuid').add(uuid, id, null, this.bulk);
    for (const tag of tags) {
      const category = searchText(tag.category);
      const dict = dictionary(account, category);
      if (category !== tag.category) dict.spelling = tag.category;
      const key = tag.value === null ? NO_VALUE : searchText(tag.value);
      dict.add(key, id, tag.value !== null && key !== tag.value ? tag.value : null, this.bulk);
    }
    this.state[id] = State.Alive;
    this.alive++;
  }

  private endBulk(): void {
    this.bulk = false;
    for (const account of this.accounts.values()) {
      account.all.sortUnique();
      for (const dict of account.categories.values()) dict.endBulk();
    }
  }

  private addTo(list: IdList, id: number): void {
    if (this.bulk) list.push(id);
    else list.add(id);
  }

  private accountIndex(accountId: number): AccountIndex {
    let a = this.accounts.get(accountId);
    if (a === undefined) this.accounts.set(accountId, (a = { all: new IdList(), categories: new Map() }));
    return a;
  }

  private countSeries(accountId: number, check: number, by: 1 | -1): void {
    const n = (this.accountSeries.get(accountId) ?? 0) + by;
    if (n === 0) this.accountSeries.delete(accountId);
    else this.accountSeries.set(accountId, n);
    this.checkSeries[check] = (this.checkSeries[check] ?? 0) + by;
  }

  private checkId(uuid: string, checkName: string, accountId: number): number {
    const last = this.checks[this.checks.length - 1];
    if (last !== undefined && last.uuid === uuid && last.checkName === checkName) return this.checks.length - 1;
    // By uuid (a check almost always has one name, kept as a bare number), then by name.
    const same = this.checkIds.get(uuid);
    const known = same === undefined ? [] : typeof same === 'number' ? [same] : same;
    for (const c of known) if (this.checks[c]!.checkName === checkName) return c;
    const c = this.checks.length;
    this.checks.push({ uuid, checkName, accountId });
    this.checkIds.set(uuid, known.length === 0 ? c : [...known, c]);
    return c;
  }

  /** Keeps a name (text, or its UTF-8 bytes as they are) in the names arena. */
  private appendName(id: number, canonical: string | Uint8Array): void {
    const bytes = typeof canonical === 'string' ? Buffer.byteLength(canonical, 'utf8') : canonical.length;
    if (this.namesUsed + bytes > this.names.length) {
      const next = Buffer.allocUnsafe(Math.max(roomFor(this.names.length, this.namesUsed + bytes), 64 * 1024));
      this.names.copy(next, 0, 0, this.namesUsed);
      this.names = next;
    }
    this.nameStart[id] = this.namesUsed;
    this.nameLength[id] = bytes;
    if (typeof canonical === 'string') this.names.write(canonical, this.namesUsed, 'utf8');
    else this.names.set(canonical, this.namesUsed);
    this.namesUsed += bytes;
  }

  // Open addressing (linear probing) over the storage ids: slot → dense id + 1 (0 = empty).

  /** The dense id of the storage id at `offset` of `key` (-1: none). */
  private find(key: Buffer, offset = 0): number {
    const mask = this.table.length - 1;
    for (let slot = key.readUInt32LE(offset) & mask; ; slot = (slot + 1) & mask) {
      const v = this.table[slot]!;
      if (v === 0) return -1;
      if (this.sameStorageId(v - 1, key, offset)) return v - 1;
    }
  }

  private sameStorageId(id: number, key: Buffer, offset = 0): boolean {
    const at = id * 4;
    const ids = this.storageIds32;
    return ids[at] === key.readUInt32LE(offset) && ids[at + 1] === key.readUInt32LE(offset + 4) && ids[at + 2] === key.readUInt32LE(offset + 8) && ids[at + 3] === key.readUInt32LE(offset + 12);
  }

  /** Like lookup, for the storage id inside an index key (`t` or `a`, right after the tag byte). */
  private lookupInKey(key: Buffer): number {
    const id = this.find(key, 1);
    return id >= 0 && this.state[id] === State.Alive ? id : -1;
  }

  private link(id: number): void {
    if ((this.linked + 1) * 2 > this.table.length) this.rehash(this.table.length * 2);
    const mask = this.table.length - 1;
    let slot = this.storageIds32[id * 4]! & mask;
    while (this.table[slot] !== 0) slot = (slot + 1) & mask;
    this.table[slot] = id + 1;
  }

  private unlink(storageId: Buffer): void {
    const mask = this.table.length - 1;
    let slot = storageId.readUInt32LE(0) & mask;
    while (this.table[slot] !== 0 && !this.sameStorageId(this.table[slot]! - 1, storageId)) slot = (slot + 1) & mask;
    if (this.table[slot] === 0) return;
    // Backward-shift deletion: later entries of the probe run move up so lookups still find them.
    let hole = slot;
    for (let next = (hole + 1) & mask; this.table[next] !== 0; next = (next + 1) & mask) {
      const home = this.storageIds32[(this.table[next]! - 1) * 4]! & mask;
      const movable = hole <= next ? home <= hole || home > next : home <= hole && home > next;
      if (!movable) continue;
      this.table[hole] = this.table[next]!;
      hole = next;
    }
    this.table[hole] = 0;
  }

  private rehash(slots: number): void {
    const old = this.table;
    this.table = new Int32Array(slots);
    const mask = slots - 1;
    for (const v of old) {
      if (v === 0) continue;
      let slot = this.storageIds32[(v - 1) * 4]! & mask;
      while (this.table[slot] !== 0) slot = (slot + 1) & mask;
      this.table[slot] = v;
    }
  }

  private grow(capacity: number): void {
    const copy = <T extends Uint8Array | Uint16Array | Uint32Array>(old: T, make: (n: number) => T, per = 1): T => {
      const next = make(capacity * per);
      next.set(old as never);
      return next;
    };
    this.storageIds = copy(this.storageIds, (n) => new Uint8Array(n), METRIC_ID_BYTES);
    this.storageIds32 = new Uint32Array(this.storageIds.buffer);
    this.state = copy(this.state, (n) => new Uint8Array(n));
    this.typeBits = copy(this.typeBits, (n) => new Uint8Array(n));
    this.pendingTypes = copy(this.pendingTypes, (n) => new Uint8Array(n));
    this.stagedNow = copy(this.stagedNow, (n) => new Uint8Array(n));
    this.accountOf = copy(this.accountOf, (n) => new Uint32Array(n));
    this.checkOfId = copy(this.checkOfId, (n) => new Uint32Array(n));
    this.nameStart = copy(this.nameStart, (n) => new Uint32Array(n));
    this.nameLength = copy(this.nameLength, (n) => new Uint16Array(n));
    this.capacity = capacity;
    // The slots grow with the ids linked (`link`), not with the room: room is not resident, slots are.
  }

  /** Drops dead ids from every posting list, and terms left empty. */
  private compact(): void {
    const keep = (id: number) => this.state[id] === State.Alive;
    for (const account of this.accounts.values()) {
      account.all.compact(keep);
      for (const dict of account.categories.values()) dict.compact(keep);
    }
    this.dead = 0;
  }

  private async loadTypes(): Promise<void> {
    // The kinds differ in their first letter: numeric, histogram, text.
    const bits: Record<number, number> = { 0x6e: KIND_BITS.numeric, 0x68: KIND_BITS.histogram, 0x74: KIND_BITS.text };
    for await (const { key } of this.store.scan(CF.index, { ...TYPE_KEYS, capacity: 4096 })) {
      const id = this.lookupInKey(key);
      const bit = bits[key[1 + METRIC_ID_BYTES]!];
      if (id >= 0 && bit !== undefined) this.typeBits[id]! |= bit;
    }
  }

  private async loadActivity(): Promise<void> {
    for await (const { key, value } of this.store.scan(CF.index, { ...ACTIVITY_BLOCK_KEYS, capacity: 256 })) {
      const range = activityBlockRangeOf(key);
      for (const { id, windows } of decodeActivityBlock(range, value)) if (id < this.size && this.state[id] === State.Alive) this.activity.set(id, windows);
    }
  }

  /**
   * Packs the windows of `a` keys (one per metric: a data dir written before activity blocks,
   * a shard split, a metric the index did not know) into the activity blocks, merged with what
   * the index holds, and deletes the keys, in one batch. The number of keys packed.
   */
  async packLegacyActivity(): Promise<number> {
    let found = 0;
    for await (const { key, value } of this.store.scan(CF.index, { ...ACTIVITY_KEYS, capacity: 4096 })) {
      found++;
      const id = this.lookupInKey(key);
      if (id < 0) continue;
      this.activity.set(id, unionActivity(this.activity.windows(id), decodeActivityWindows(value)));
      this.activityDirty.add(activityRangeOf(id));
    }
    if (found === 0) return 0;
    const batch = this.store.batch();
    try {
      this.stagePackActivity(batch);
      batch.deleteRange(CF.index, ACTIVITY_KEYS.gte, ACTIVITY_KEYS.lt);
      await batch.write();
    } finally {
      batch.discard();
    }
    return found;
  }

  /** Rewrites v1 name records with their new dense ids and drops the v1 posting keys. */
  private async migrate(storageIds: Buffer[]): Promise<void> {
    for (let i = 0; i < storageIds.length; i += 10_000) {
      const batch = this.store.batch();
      for (const storageId of storageIds.slice(i, i + 10_000)) {
        const id = this.lookup(storageId);
        batch.put(CF.metrics, storageId, encodeNameRecord(id, this.typeBits[id]!, { accountId: this.accountOf[id]!, uuid: this.uuidOf(id), checkName: this.checkNameOf(id), canonical: this.canonicalOf(id) }));
      }
      await batch.write();
    }
    await this.store.batch().deleteRange(CF.index, V1_POSTINGS.gte, V1_POSTINGS.lt).write();
  }
}

function dictionary(account: AccountIndex, category: string): TermDictionary {
  let d = account.categories.get(category);
  if (d === undefined) account.categories.set(category, (d = new TermDictionary()));
  return d;
}

/** Hash slots for `ids` linked storage ids: a power of two, at most half full. */
function slotCountFor(ids: number): number {
  let slots = FIRST_SLOTS;
  while (slots < ids * 2) slots *= 2;
  return slots;
}

function searchText(text: string): string {
  return text.startsWith('b"') ? tagSearchText(text) : text;
}
