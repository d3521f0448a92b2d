// A shard: a fixed set of partitions with everything they own — their RocksDB directory,
// series, slice of the metric index, rollups, tombstones and retention — run in a worker
// thread of its own (actors/shard/main.ts). The node hands it journaled samples in columns
// and asks it questions (actors/shard/messages.ts); nothing here is shared with another thread.
import { randomUUID } from 'node:crypto';
import type { ActivityWindow } from '../../model/activity.js';
import type { FerriteConfig } from '../../model/config.js';
import { NUMERIC_TRANSFORMS } from '../../model/fetch/numeric.js';
import { CellSums } from '../../model/fetch/reduce.js';
import { serializeHistogram } from '../../model/histogram/index.js';
import { IngestBatch, SampleColumns } from '../../model/ingest-batch.js';
import type { DataKind, IngestRecord } from '../../model/ingest-record.js';
import { numberJson } from '../../model/json-out.js';
import { metricKey, placeMetric } from '../../model/metric-key.js';
import { canonicalizeMetricName } from '../../model/metric-name.js';
import type { RollupAccumulator } from '../../model/rollup/accumulator.js';
import { rollupTuplesJson, rollupTypeColumns, type RollupField, type RollupType } from '../../model/rollup/types.js';
import { FIELD_SPECS, fieldColumn } from '../../model/rollup/fields.js';
import type { Series } from '../../model/series.js';
import type { TextReadOptions, TextRow } from '../../model/text-read.js';
import { buildRing, ownersOf, type Ring } from '../../model/topology/ring.js';
import type { Topology } from '../../model/topology/topology.js';
import type { AccountId, MetricKey } from '../../model/types.js';
import type { ShardFigures } from '../../storage/figures.js';
import { PACK_RANGES, type MetricIndex, type SeriesReport } from '../../storage/metric-index/metric-index.js';
import { ShardStorage } from '../../storage/shard-storage.js';
import { shardDir } from '../../storage/shard-layout.js';
import { unpackDeclarations, type Declarations, type WirePart } from '../ingest/wire.js';
import type { MetricInfo, MetricRef, ReadMetric, WireMetric } from '../../model/metric-info.js';
import { rebuildActivity } from './activity-rebuild.js';
import { shardFind, shardSearch, type FindPart, type FoundMetric, type ShardFindRequest, type ShardSearch } from './find.js';
import type { EpochTaken, FoldStream, ListedMetric, NumericStream, RollupLevels, SampleNames, SeriesAnswer, SeriesQuestion, ShardSetup, SlotGeometry, WireHistogramRow, WireSums } from './messages.js';
import { Partition, type PartitionHooks } from './partition.js';
import type { DeleteOutcome, DeleteTarget } from '../../model/delete.js';
import type { RollupEngine } from '../../storage/rollups.js';
import type { Tombstones } from '../../storage/tombstones.js';
import { inLanes } from './lanes.js';
import { SeriesTable, ShardMetric } from './series-table.js';
import { withRoom } from '../../model/typed-arrays.js';
import type { BufferValue } from './window-buffer.js';
import { setImmediate as turn } from 'node:timers/promises';

const DATA_KINDS: readonly DataKind[] = ['numeric', 'text', 'histogram'];
/** "Before the end of time" for full deletes (JSON-safe, unlike Infinity). */
const FOREVER = Number.MAX_SAFE_INTEGER;

/** What a shard tells the node without being asked. */
export interface ShardEvents {
  /** Samples handed to partitions, whatever the outcome (load shedding counts what waits). */
  applied(records: number): void;
  /** A partition failed to store data (it stays in the journal; the node refuses writes). */
  fault(partition: number, error: unknown): void;
}

/**
 * A parse lane's sids, for the epoch they were declared in. A declared metric joins the
 * series table only when samples of it arrive: a series refused by a limit does not (its
 * declaration stays until the lane's next epoch, as it may be admitted after a delete).
 */
interface Lane {
  epoch: number;
  declared: (WireMetric | undefined)[];
  /** By sid: the adopted metric's row + 1 in the series table (0: not adopted yet). */
  rows: Int32Array;
}

export class Shard {
  private readonly series = new SeriesTable((id) => this.index.canonicalOfMetric(id));
  private readonly lanes = new Map<number, Lane>();
  /** Index writes in the order applies made them; finds and lookups wait for the last. */
  private indexTail: Promise<void> = Promise.resolve();
  private readonly owners = new Map<string, string[]>();
  private ring: Ring;

  private readonly index: MetricIndex;
  private readonly partitions = new Map<number, Partition>();
  /** Names this process in read epochs (`settledEpoch`). */
  private readonly incarnation = randomUUID();

  private constructor(
    private readonly setup: ShardSetup,
    private readonly storage: ShardStorage,
    private readonly events: ShardEvents,
  ) {
    this.ring = buildRing(setup.topology);
    this.index = storage.index;
    const hooks: PartitionHooks = { onFault: (p, e) => events.fault(p, e) };
    for (const [p, stores] of storage.partitions) {
      this.partitions.set(p, new Partition(p, { index: p, config: setup.config, ...stores, tombstones: storage.tombstones, now: Date.now, series: this.series }, hooks));
    }
  }

  static async open(setup: ShardSetup, events: ShardEvents): Promise<Shard> {
    return new Shard(setup, await ShardStorage.open(setup.dir, setup.partitions, setup.config), events);
  }

  get config(): FerriteConfig {
    return this.setup.config;
  }

  // ---- ingest ----

  /** Metrics a parse lane names for the first time; a new epoch replaces the lane's table. */
  declare(lane: number, epoch: number, fresh: Declarations): void {
    const table = this.lane(lane, epoch);
    for (const m of unpackDeclarations(fresh)) table.declared[m.sid] = m;
  }


  /**
   * Journaled samples: new metrics and types are indexed (written before any partition
   * takes the samples, so no block exists of a metric the index does not know), then each
   * partition's columns are queued to it.
   */
  apply(seq: number, names: SampleNames, parts: readonly WirePart[]): void {
    const table = 'list' in names ? names.list.map((m) => this.series.adopt(m)) : this.declared(names.lane, names.epoch);
    // Sids this shard never had declared (sent to the worker this one replaced): the node replays them from the journal.
    if (table === null) return this.events.applied(parts.reduce((n, p) => n + p.sids.length + p.others.length, 0));
    const batch = new IngestBatch<MetricInfo>();
    for (const p of parts) batch.adoptPart(p.partition, columnsOf(p, table));
    const ready = this.indexSamples(surviving(batch, seq, this.storage.tombstones));
    const applied = [...batch.parts].map(([p, samples]) => this.partition(p).apply(seq, samples, ready));
    void Promise.all(applied).then(() => this.events.applied(batch.size));
  }

  /** A lane's sid → metric, adopting declared metrics on their first sample. */
  private declared(lane: number, epoch: number): SidTable | null {
    const l = this.lanes.get(lane);
    if (l === undefined || l.epoch !== epoch) return null;
    return (sid) => {
      const row = sid < l.rows.length ? l.rows[sid]! - 1 : -1;
      return row >= 0 ? this.series.metricAt(row) : this.adoptDeclared(l, sid);
    };
  }

  private adoptDeclared(l: Lane, sid: number): MetricInfo {
    const m = l.declared[sid];
    if (m === undefined) throw new Error(`BUG: sid ${sid} was never declared in this epoch`);
    l.declared[sid] = undefined;
    const metric = this.series.adopt(m);
    l.rows = withRoom(l.rows, sid + 1);
    l.rows[sid] = metric.row + 1;
    return metric;
  }

  private lane(lane: number, epoch: number): Lane {
    let l = this.lanes.get(lane);
    if (l === undefined || l.epoch !== epoch) this.lanes.set(lane, (l = { epoch, declared: [], rows: new Int32Array(1024) }));
    return l;
  }

  /** Indexes what the index may not know of `batch` and notes its activity; resolves once durable. */
  private indexSamples(batch: IngestBatch<MetricInfo>): Promise<void> {
    const entries = indexEntries(batch);
    if (entries.length === 0) {
      this.index.noteActivity(batch);
      return this.indexTail;
    }
    // Ids now, records when the queue gets to them (MetricIndex.reserve): a backlog holds ids.
    const staged = this.index.reserve(entries);
    // Marked at once, so samples arriving before the write is durable do not stage the metric again.
    entries.forEach((e, i) => e.kind === 'numeric' && (e.metric.indexId = staged.ids[i]!));
    // The index answers staged names (pending or stored): the series table's copies go now, so
    // through a backlog of new series it holds one batch's names, not the backlog's.
    for (const e of entries) if (e.metric instanceof ShardMetric) e.metric.indexed();
    return this.inIndexQueue(async () => {
      const writes = this.storage.batch();
      try {
        this.index.stageWrites(writes, staged);
      } catch (error) {
        writes.discard();
        throw error;
      }
      await writes.write();
      // A metric new to the index has no sealed block anywhere: its reads skip looking for one.
      for (const m of this.index.apply(staged)) m.unsealed = true;
      this.index.noteActivity(batch);
    });
  }

  // ---- series counts ----

  /**
   * For series limits (actors/node/series-limits.ts): which of `q.ids` this shard already
   * holds (staged or stored), and its series of `q.accounts` and `q.checks`. Answered at once,
   * not after pending index writes, so it counts exactly the applies sent before it.
   */
  seriesAdmission(q: SeriesQuestion): SeriesAnswer {
    return {
      known: q.ids.map((hex) => this.index.stagedId(Buffer.from(hex, 'hex')) >= 0),
      accounts: q.accounts.map((a) => this.index.seriesOfAccount(a)),
      checks: q.checks.map((uuid) => this.index.seriesOfCheck(uuid)),
    };
  }

  /** Series per account and the `top` checks with the most series, on this shard. */
  seriesReport(top: number): SeriesReport {
    return this.index.seriesReport(top);
  }

  // ---- reads ----

  /**
   * Whether the index holds the metric. One it holds already is answered at once; only one it
   * does not is asked again after the index writes queued before this (an acknowledged write
   * of a new metric may still be on its way there). Every stream of a read asks: waiting for
   * the queue each time held reads behind name packing and its writes (50–140 ms reads in the
   * minute after a million new series).
   */
  async knows(m: ReadMetric): Promise<boolean> {
    const id = Buffer.from(m.idHex, 'hex');
    if (this.index.has(id)) return true;
    await this.indexTail;
    return this.index.has(id);
  }

  read(m: WireMetric, kind: DataKind, start: number, end: number): Promise<Series<BufferValue>> {
    return this.partition(m.partition).read(this.series.resolve(m), kind, start, end);
  }

  readText(m: WireMetric, options: TextReadOptions): Promise<TextRow[]> {
    return this.partition(m.partition).readText(this.series.resolve(m), options);
  }

  async rollupJson(m: WireMetric, spanMs: number, start: number, end: number, engine: RollupEngine, type: RollupType): Promise<string> {
    const slots = await this.partition(m.partition).readRollups(this.series.resolve(m), spanMs, start, end, engine, rollupTypeColumns(type));
    return rollupTuplesJson(slots, type);
  }

  /** One field per slot (NaN: none) of a rollup read: the node writes the tuples (model/rollup/types.ts). */
  async rollupValues(m: WireMetric, spanMs: number, start: number, end: number, engine: RollupEngine, type: RollupField): Promise<Float64Array> {
    const slots = await this.partition(m.partition).readRollups(this.series.resolve(m), spanMs, start, end, engine, rollupTypeColumns(type));
    return fieldColumn(slots, FIELD_SPECS[type]);
  }

  /** One stream's cells for a transform (NaN: none), read as `numericCellsMany` reads each; null when never stored here. */
  async numericCells(m: ReadMetric, g: SlotGeometry, transform: string): Promise<Float64Array | null> {
    const ref = await this.knownRef(m);
    if (ref === null) return null;
    const out = new Float64Array(g.count);
    await this.partition(m.partition).readFieldsEach([ref], g.periodMs, g.startMs, g.startMs + g.count * g.periodMs, NUMERIC_TRANSFORMS[transform]!, () => out);
    return out;
  }

  /** What a read finds the metric by; null when the index never held it. */
  private async knownRef(m: ReadMetric): Promise<MetricRef | null> {
    const ref = this.series.ref(m);
    // A metric this process took samples of and staged in the index is known: no index lookup.
    if (ref instanceof ShardMetric && ref.indexId >= 0) return ref;
    return (await this.knows(m)) ? ref : null;
  }

  /**
   * Each stream's cells written into one array as its read ends. A partition reads its streams
   * of one transform in one turn of its mailbox, several side by side (partition.ts
   * `readFieldsEach`); a stream's slots are gone once its cells are written.
   */
  async numericCellsMany(streams: NumericStream[], g: SlotGeometry): Promise<Float64Array> {
    const out = new Float64Array(streams.length * g.count).fill(NaN);
    const groups = new Map<string, number[]>();
    streams.forEach((s, k) => {
      const key = `${s.metric.partition}\u0000${s.transform}`;
      const group = groups.get(key);
      if (group === undefined) groups.set(key, [k]);
      else group.push(k);
    });
    const end = g.startMs + g.count * g.periodMs;
    const readGroup = async (ks: number[]): Promise<void> => {
      const { metric, transform } = streams[ks[0]!]!;
      const refs = await Promise.all(ks.map((k) => this.knownRef(streams[k]!.metric)));
      const known = ks.filter((_, i) => refs[i] !== null);
      const cellsOf = (i: number) => out.subarray(known[i]! * g.count, (known[i]! + 1) * g.count);
      await this.partition(metric.partition).readFieldsEach(refs.filter((r) => r !== null), g.periodMs, g.startMs, end, NUMERIC_TRANSFORMS[transform]!, cellsOf);
    };
    await Promise.all([...groups.values()].map(readGroup));
    return out;
  }

  async foldNumeric(streams: FoldStream[], g: SlotGeometry, groups: number): Promise<WireSums> {
    const sums = new CellSums(groups, g.count);
    // Read side by side, added in stream order, so the sums are repeatable (NaN cells add nothing).
    const cells = await this.numericCellsMany(streams, g);
    streams.forEach((s, k) => sums.add(s.group, cells.subarray(k * g.count, (k + 1) * g.count)));
    return { sum: sums.sum, n: sums.n };
  }

  /**
   * What a whole-fetch answer over `metrics` up to `end` is current at (actors/coordinators/
   * fetch-answers.ts), once every question queued before this one is answered: null while one
   * of them has an open buffer before `end` (its reads change as samples arrive; a late sample
   * into a sealed window opens one). The epoch moves with every write of blocks (a seal, a merge,
   * ageing, a delete), rollups or the index (tombstones, a full delete); it names this process,
   * as a restarted shard counts from 0.
   */
  async settledEpoch(metrics: ReadMetric[], end: number, taken: EpochTaken): Promise<string | null> {
    // `arrival`: before the reads the node sends right behind this question run, so a write that
    // lands after it moves the epoch past the answer's stamp (an epoch taken later could name a
    // write the read missed). `settled`: after every write queued before it (an acknowledged
    // delete included), so a kept answer is never taken for current across one.
    const arrived = this.readEpoch();
    const byPartition = new Map<number, MetricRef[]>();
    for (const m of metrics) {
      let list = byPartition.get(m.partition);
      if (list === undefined) byPartition.set(m.partition, (list = []));
      list.push(this.series.ref(m));
    }
    const settled = await Promise.all([...byPartition].map(([p, list]) => this.partition(p).settledUntil(list, end)));
    await this.indexTail;
    if (!settled.every(Boolean)) return null;
    return taken === 'arrival' ? arrived : this.readEpoch();
  }

  private readEpoch(): string {
    return `${this.incarnation}.${this.storage.numericReadGeneration()}`;
  }

  async histograms(m: WireMetric, period: number, start: number, end: number): Promise<WireHistogramRow[]> {
    const rows = await this.partition(m.partition).readHistograms(this.series.resolve(m), period, start, end);
    return rows.map(([ts, h]) => [ts, serializeHistogram(h)]);
  }

  async find(r: ShardFindRequest): Promise<FindPart> {
    await this.indexTail;
    return shardFind({ index: this.index, latest: this, owners: (m) => this.ownersOf(m.key), identity: this.setup.identity }, r);
  }

  adoptTopology(topology: Topology): void {
    this.ring = buildRing(topology);
    this.owners.clear();
  }

  async listMetrics(from: number, limit: number): Promise<{ metrics: ListedMetric[]; next: number | null }> {
    await this.indexTail;
    const metrics: ListedMetric[] = [];
    const index = this.index;
    let id = from;
    for (; id < index.bound && metrics.length < limit; id++) {
      if (!index.isAlive(id)) continue;
      metrics.push({ accountId: index.accountIdOf(id), uuid: index.uuidOf(id), checkName: index.checkNameOf(id), canonical: index.canonicalOf(id), types: [...index.typesOf(id)] });
    }
    return { metrics, next: id < index.bound ? id : null };
  }

  async search(r: ShardSearch): Promise<FoundMetric[]> {
    await this.indexTail;
    return shardSearch(this.index, r);
  }

  /** A found metric's latest values as find's `latest` JSON (turning tracking on for latest=2). */
  async latestJson(index: MetricIndex, id: number, latest: number): Promise<string> {
    const named = canonicalizeMetricName(index.canonicalOf(id));
    if (!named.ok) return '{}';
    const metric = this.series.resolve(this.describe(index.accountIdOf(id) as AccountId, index.uuidOf(id), index.checkNameOf(id), named.value));
    const tracked = this.config.implicitLatest || (await this.storage.latest.tracked(metric.id));
    if (latest === 1 && !tracked) return '{}';
    if (latest === 2 && !tracked) await this.storage.latest.track(metric.id);
    const values = await this.partition(metric.partition).latest(metric, index.typesOf(id) as DataKind[]);
    const parts = Object.entries(values).map(([kind, rows]) => {
      const cells = rows!.map(([ts, v]) => `[${ts},${typeof v === 'string' ? JSON.stringify(v) : numberJson(v)}]`);
      return `${JSON.stringify(kind)}:[${cells.join(',')}]`;
    });
    return `{${parts.join(',')}}`;
  }

  // ---- writes other than samples ----

  /** Stores rollup records (/write/nnt, or journaled from another owner), indexing the metric first. */
  async writeRollups(m: WireMetric, records: [number, RollupAccumulator][]): Promise<void> {
    await this.partition(m.partition).writeRollups(await this.adoptNumeric(m), records);
  }

  /** The metric adopted and indexed as numeric, durably. */
  private async adoptNumeric(m: WireMetric): Promise<ShardMetric> {
    const metric = this.series.adopt(m);
    const writes = this.storage.batch();
    const staged = this.index.stage(writes, [{ kind: 'numeric', metric }]);
    await writes.write();
    this.index.apply(staged);
    metric.indexed();
    return metric;
  }

  async rollupLevels(m: WireMetric): Promise<RollupLevels> {
    if (!(await this.knows(m))) return [];
    return this.partition(m.partition).rollupLevels(this.series.resolve(m));
  }

  /** Sets rollup periods as a relocation copied them, indexing the metric first (as writeRollups). */
  async setRollupLevels(m: WireMetric, levels: RollupLevels): Promise<void> {
    await this.partition(m.partition).setRollupLevels(await this.adoptNumeric(m), levels);
  }

  /** A metric this shard does not index (fully deleted since it was selected, say) is `not found`. */
  async deleteData(m: WireMetric, target: DeleteTarget, before: number, seq: number, confirm: boolean, periods: number[] | null): Promise<DeleteOutcome> {
    if (!(await this.knows(m))) return 'not found';
    return this.partition(m.partition).deleteData(this.series.resolve(m), target, before, seq, confirm, periods);
  }

  /**
   * Full delete: every data type at every time and rollup, then the name record, postings,
   * types, activity and latest flag. Tombstones keep journal replay from resurrecting it;
   * data written afterwards starts a fresh metric.
   */
  async fullDelete(m: WireMetric, seq: number, confirm: boolean): Promise<DeleteOutcome> {
    if (!(await this.knows(m))) return 'not found';
    if (!confirm) return 'found';
    const metric = this.series.resolve(m);
    const partition = this.partition(m.partition);
    for (const kind of DATA_KINDS) await partition.deleteData(metric, kind, FOREVER, seq, true, null);
    await partition.forget(metric);
    // In the index queue: a packing of names (`packNames`) must not see the metric alive while this batch is unwritten.
    await this.inIndexQueue(async () => {
      const batch = this.storage.batch();
      this.storage.latest.stageForget(batch, metric.id);
      this.index.stageRemove(batch, metric.id);
      await batch.write();
      // Forgotten before the index lets go of the name, which the metric keeps for whoever still holds it.
      this.series.forget(m.idHex);
      this.index.removed(metric.id);
    });
    metric.indexId = -1;
    return 'deleted';
  }

  /** Packs the name records of ranges of dense ids all written (storage/metric-index/name-blocks.ts). */
  packNames(): Promise<void> {
    return this.inIndexQueue(async () => {
      const batch = this.storage.batch();
      try {
        const ranges: number[] = [];
        for (let from = 0; ranges.length < PACK_RANGES; ) {
          const [range] = this.index.stagePackNames(batch, 1, from);
          if (range === undefined) break;
          ranges.push(range);
          from = range + 1;
          // A range is ≈ 2–7 ms of this thread (a thousand name records, compressed); sixteen at
          // once held every read behind them for up to 120 ms, once a checkpoint, for the minute
          // after a million new series. Reads come in between ranges.
          await turn();
        }
        if (ranges.length === 0) return;
        await batch.write();
        this.index.namesPacked(ranges);
      } finally {
        batch.discard();
      }
    });
  }

  /**
   * Writes the activity blocks of the ranges of dense ids in which a window changed
   * (storage/metric-index/activity-blocks.ts); in the index queue, so no two writes of one
   * block pass each other.
   */
  packActivity(): Promise<void> {
    return this.inIndexQueue(async () => {
      const batch = this.storage.batch();
      let ranges: number[] = [];
      try {
        ranges = this.index.stagePackActivity(batch);
        if (ranges.length > 0) await batch.write();
      } catch (error) {
        this.index.activityUnpacked(ranges);
        throw error;
      } finally {
        batch.discard();
      }
    });
  }

  /** Runs `work` after the index writes queued before it, and before any queued after. */
  private inIndexQueue(work: () => Promise<void>): Promise<void> {
    const done = this.indexTail.then(work);
    this.indexTail = done.catch(() => {});
    return done;
  }

  /** Replaces the metric's activity windows by what its stored data says. */
  async rebuildActivity(m: WireMetric): Promise<ActivityWindow[]> {
    const metric = this.series.resolve(m);
    const partition = this.partition(m.partition);
    const windows = await rebuildActivity({ read: (x, kind, start, end) => partition.read(x, kind, start, end), storedPeriodStarts: (x) => this.storage.storedPeriodStarts(x) }, metric);
    await partition.setActivity(metric, windows);
    this.index.setActivity(metric.id, windows);
    await this.packActivity();
    return windows;
  }

  // ---- upkeep ----

  /** Seals what is due and rolls up what is quiet; the lowest journal sequence still needed. */
  async checkpoint(journalCut: number): Promise<number> {
    const lows = await inLanes([...this.partitions.values()], (p) =>
      p.checkpoint(journalCut).catch((error: unknown) => {
        throw new Error(`partition ${p.index}: ${(error as Error).message}`, { cause: error });
      }),
    );
    // Tombstones below the cut can no longer meet a replayed entry.
    const batch = this.storage.batch();
    this.storage.tombstones.prune(batch, journalCut);
    await batch.write();
    await this.packNames();
    // Before the journal is cut below the samples that noted them.
    await this.packActivity();
    return Math.min(...lows);
  }

  backup(root: string): Promise<number> {
    return this.storage.copySnapshotTo(shardDir(root, this.setup.shard));
  }

  async sealAll(): Promise<number> {
    const low = Math.min(...(await inLanes([...this.partitions.values()], (p) => p.sealAll())));
    await this.packActivity();
    return low;
  }

  /** Ages raw numeric data and histogram levels past the raw retention into rollups, then drops what passed its retention. */
  async sweepRetention(now: number): Promise<void> {
    await this.ageRaw(now);
    await this.ageHistograms(now);
    await this.storage.sweepRetention(now);
  }

  /**
   * Hands every numeric metric to its partition to age the raw windows that ended before the
   * raw retention's horizon (storage/rollups.ts), AGE_GROUP metrics per partition turn so
   * reads and writes interleave. Returns samples aged.
   */
  async ageRaw(now: number): Promise<number> {
    const c = this.config;
    const horizon = now - c.rawRetention * 1000;
    const to = horizon - (horizon % c.blockSpanMs);
    if (c.rawRetention <= 0 || to <= 0) return 0;
    return this.walkMetrics('numeric', this.partitions, (p, metrics) => p.age(metrics, to));
  }

  /**
   * Writes the coarse histogram periods that ended before the raw retention's horizon
   * (storage/histograms.ts), every histogram metric of each partition that has a walk to do;
   * a partition's new cut holds only once all its metrics are written. Returns periods written.
   */
  async ageHistograms(now: number): Promise<number> {
    const c = this.config;
    const horizon = now - c.rawRetention * 1000;
    const to = horizon - (horizon % (c.histogramRollups[0]!.period * 1000));
    if (c.rawRetention <= 0 || to <= 0) return 0;
    const walking = new Map([...this.partitions].filter(([, p]) => p.beginHistogramAgeing(to)));
    if (walking.size === 0) return 0;
    try {
      const written = await this.walkMetrics('histogram', walking, (p, metrics) => p.ageHistograms(metrics));
      await Promise.all([...walking.values()].map((p) => p.finishHistogramAgeing(to)));
      return written;
    } catch (error) {
      for (const p of walking.values()) p.abandonHistogramAgeing();
      throw error;
    }
  }

  /**
   * Hands every live metric of `kind` to its partition among `partitions` (others are skipped),
   * AGE_GROUP metrics per partition turn so reads and writes interleave; sums what `visit`
   * returns. One partition's failure does not stop the others; all are reported at the end.
   */
  private async walkMetrics(kind: DataKind, partitions: ReadonlyMap<number, Partition>, visit: (p: Partition, metrics: MetricInfo[]) => Promise<number>): Promise<number> {
    await this.indexTail;
    const index = this.index;
    let done = 0;
    let groups = new Map<number, MetricInfo[]>();
    let pending = 0;
    const failures: string[] = [];
    const flush = async () => {
      for (const r of await Promise.allSettled([...groups].map(([p, metrics]) => visit(partitions.get(p)!, metrics)))) {
        if (r.status === 'fulfilled') done += r.value;
        else failures.push((r.reason as Error).message);
      }
      groups = new Map();
      pending = 0;
    };
    for (let id = 0; id < index.bound; id++) {
      if (!index.isAlive(id) || !index.typesOf(id).includes(kind)) continue;
      const named = canonicalizeMetricName(index.canonicalOf(id));
      if (!named.ok) continue;
      const metric = this.series.resolve(this.describe(index.accountIdOf(id) as AccountId, index.uuidOf(id), index.checkNameOf(id), named.value));
      if (!partitions.has(metric.partition)) continue;
      const group = groups.get(metric.partition);
      if (group === undefined) groups.set(metric.partition, [metric]);
      else group.push(metric);
      if (++pending >= AGE_GROUP) await flush();
    }
    await flush();
    if (failures.length > 0) throw new Error(`${failures.join(' | ')} (${done} done)`);
    return done;
  }

  async figures(): Promise<ShardFigures> {
    const partitions = [...this.partitions.values()];
    const memory = process.memoryUsage();
    const openBuffers = { buffers: 0, bytes: { allocated: 0, used: 0 } };
    for (const { openBuffers: o } of partitions) {
      openBuffers.buffers += o.buffers;
      openBuffers.bytes.allocated += o.bytes.allocated;
      openBuffers.bytes.used += o.bytes.used;
    }
    const agedTo = Math.min(...partitions.map((p) => p.histogramsAgedTo));
    return {
      ...(await this.storage.figures(this.setup.partitions)),
      index: this.index.report(),
      series: this.series.size,
      blocksMerged: partitions.reduce((n, p) => n + p.blocksMerged, 0),
      heapUsed: memory.heapUsed,
      heapCommitted: memory.heapTotal,
      arrayBuffers: memory.arrayBuffers,
      openBuffers,
      histogramsAgedTo: agedTo > 0 && agedTo !== Infinity ? agedTo : null,
    };
  }

  /** Seals every buffer, leaves only SST files behind, and closes the store. */
  async stop(): Promise<void> {
    let sealed = false;
    try {
      await this.sealAll();
      sealed = true;
    } finally {
      await this.storage.close(sealed);
    }
  }

  /** Closes the store without sealing (after a failure: what is unsealed is in the node's journal). */
  close(): Promise<void> {
    return this.storage.close(false);
  }

  private partition(p: number): Partition {
    const partition = this.partitions.get(p);
    if (partition === undefined) throw new Error(`BUG: partition ${p} is not in shard ${this.setup.shard}`);
    return partition;
  }

  private ownersOf(key: MetricKey): string[] {
    let ids = this.owners.get(key);
    if (ids === undefined) {
      ids = ownersOf(this.ring, key).map((n) => n.id);
      this.owners.set(key, ids);
    }
    return ids;
  }

  /** A metric named by its parts, placed as the node places it. */
  private describe(accountId: AccountId, uuid: string, checkName: string, name: WireMetric['name']): WireMetric {
    const key = metricKey(uuid, name.canonical);
    const { idHex, partition } = placeMetric(key, this.config.partitions);
    return { key, accountId, uuid, checkName, name, idHex, partition };
  }
}

/** Metrics one ageing turn hands the partitions (the walk's unit of interleaving with other work). */
const AGE_GROUP = 256;

/** Who a sid is. */
type SidTable = ((sid: number) => MetricInfo) | readonly MetricInfo[];

/** A partition's columns with each sid replaced by the shard's metric. */
function columnsOf(p: WirePart, table: SidTable): SampleColumns<MetricInfo> {
  const of = typeof table === 'function' ? table : (sid: number) => table[sid]!;
  const part = new SampleColumns<MetricInfo>(0); // its columns are the part's own
  const metrics = new Array<MetricInfo>(p.sids.length);
  for (let i = 0; i < p.sids.length; i++) metrics[i] = of(p.sids[i]!);
  part.metrics = metrics;
  part.ts = p.ts;
  part.values = p.values;
  part.length = p.sids.length;
  for (const o of p.others) part.others.push({ ...o, metric: of(o.metric.sid) } as IngestRecord<MetricInfo>);
  return part;
}

/**
 * What the index may not know yet of a write: each metric of the numeric columns not
 * marked indexed (once per run of its samples), and every other record. The mark makes a
 * known metric's sample cost a bit test, not a lookup.
 */
/**
 * The samples of `batch` (journal `seq`) no delete tombstone drops: what may name a metric and note
 * its activity. A journal replayed after a crash holds the samples that first named a metric
 * deleted since; the partitions drop them, and so must the index, or the deleted metric would be
 * found again.
 */
function surviving(batch: IngestBatch<MetricInfo>, seq: number, stones: Tombstones): IngestBatch<MetricInfo> {
  if (!stones.mayDrop(seq)) return batch;
  const out = new IngestBatch<MetricInfo>();
  for (const part of batch.parts.values()) {
    for (let i = 0; i < part.length; i++) {
      const m = part.metrics[i]!;
      if (!stones.drops(m.idHex, 'numeric', part.ts[i]!, seq)) out.addNumeric(m, part.ts[i]!, part.values[i]!);
    }
    for (const r of part.others) if (!stones.drops(r.metric.idHex, r.kind, r.ts, seq)) out.add(r);
  }
  return out;
}

/** Whether two of the shard's metrics are one (views of one series-table row are made per use). */
function sameMetric(a: MetricInfo, b: MetricInfo): boolean {
  return a === b || (a instanceof ShardMetric && b instanceof ShardMetric && a.row === b.row);
}

function indexEntries(samples: IngestBatch<MetricInfo>): { metric: MetricInfo; kind: DataKind }[] {
  const entries: { metric: MetricInfo; kind: DataKind }[] = [];
  for (const part of samples.parts.values()) {
    let last: MetricInfo | null = null;
    for (const m of part.metrics) {
      if (m.indexId >= 0 || (last !== null && sameMetric(m, last))) continue;
      last = m;
      entries.push({ metric: m, kind: 'numeric' });
    }
    for (const r of part.others) entries.push(r);
  }
  return entries;
}
