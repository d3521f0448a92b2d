// One partition's data: open buffers per metric, sealing them into compressed blocks,
// and reading a metric back from blocks plus buffers. Only the partition's mailbox
// (actors/shard/partition.ts) calls this, one task at a time, so nothing here races with itself.
import type { RollupLevels } from './messages.js';
import { sampleCombiner, type SampleCombiner } from '../../model/conflict.js';
import type { FerriteConfig } from '../../model/config.js';
import type { SampleColumns } from '../../model/ingest-batch.js';
import type { DataKind, IngestRecord } from '../../model/ingest-record.js';
import { concatSeries, normalizeLastWins, normalizeNumeric, sliceSeries, type Series } from '../../model/series.js';
import type { BufferValue, NumericValue } from '../../model/types.js';
import type { ActivityTracker } from '../../storage/activity.js';
import type { BlockStore } from '../../storage/blocks.js';
import type { HistogramRow, HistogramStore } from '../../storage/histograms.js';
import type { RawSource, RollupEngine, RollupSlots, RollupStore } from '../../storage/rollups.js';
import type { Tombstone, Tombstones } from '../../storage/tombstones.js';
import type { RollupAccumulator } from '../../model/rollup/accumulator.js';
import type { FieldSpec } from '../../model/rollup/fields.js';
import type { MetricInfo, MetricRef } from '../../model/metric-info.js';
import { OpenBuffers, type BufferId, type SeriesLookup } from './open-buffers.js';
import type { BufferTable } from './window-buffer.js';
import { BlockMerges } from './block-merges.js';
import { ACTIVITY_SLICE_S, activitySlice } from '../../model/activity.js';
import { decodeNumericBlock } from '../../model/codec/numeric-block.js';
import { denseOf, denseOfParts, denseRange, emptyDense, type DenseSeries } from '../../model/dense-series.js';

/** A partition's stores (storage/), opened by its shard. */
export interface PartitionDeps {
  index: number;
  config: FerriteConfig;
  blocks: BlockStore;
  histograms: HistogramStore;
  rollups: RollupStore;
  activity: ActivityTracker;
  /** Shared by the shard's partitions (one JS thread); see storage/tombstones.ts. */
  tombstones: Tombstones;
  now: () => number;
  /** The shard's metrics (actors/shard/series-table.ts). */
  series?: SeriesLookup;
}

/** Most scheduled buffers one checkpoint seals (full ones are always sealed). */
const SEAL_CHUNK = 20_000;

export class PartitionCore {
  private readonly open: OpenBuffers;
  private readonly combine: SampleCombiner;
  readonly activity: ActivityTracker;
  /** Windows sealed into more than once, merged a few per checkpoint (actors/shard/block-merges.ts). */
  private readonly merges = new BlockMerges();

  constructor(private readonly deps: PartitionDeps) {
    this.activity = deps.activity;
    this.combine = sampleCombiner(deps.config.conflictResolver);
    const c = deps.config;
    this.open = new OpenBuffers({ spanMs: c.blockSpanMs, maxBlockSamples: c.maxBlockSamples, sealQuietMs: c.sealQuietMs, maxBufferAgeMs: c.maxBufferAgeMs }, deps.series);
  }

  /**
   * Whether a numeric read of the metric up to `end` reads sealed data only (no open buffer of
   * a window before `end`): what it answers then changes only with a store write.
   */
  settledUntil(metric: MetricRef, end: number): boolean {
    return this.open.numericWindows(metric).every((w) => w >= end);
  }

  get span(): number {
    return this.deps.config.blockSpanMs;
  }

  /** Appends a journaled request's samples; returns true when a buffer filled up. */
  apply(seq: number, samples: SampleColumns<MetricInfo>): boolean {
    const now = this.deps.now();
    const span = this.span;
    const max = this.deps.config.maxBlockSamples;
    const stones = this.deps.tombstones;
    let full = false;
    const { metrics, ts, values } = samples;
    const table = this.open.table;
    for (let i = 0; i < samples.length; i++) {
      const t = ts[i]!;
      const m = metrics[i]!;
      if (stones.mayDrop(seq) && stones.drops(m.idHex, 'numeric', t, seq)) continue;
      this.noteActivity(m, t);
      const buffer = this.open.bufferFor(m, 'numeric', t - (t % span), seq, now);
      table.append(buffer, t, values[i]!, now, 0);
      if (table.size(buffer) === max) {
        this.open.filled(buffer);
        full = true;
      }
    }
    for (const r of samples.others) if (this.applyRecord(seq, r, now)) full = true;
    return full;
  }

  /** One record that is not a plain double; true when its buffer filled up. */
  private applyRecord(seq: number, r: IngestRecord<MetricInfo>, now: number): boolean {
    if (this.deps.tombstones.mayDrop(seq) && this.deps.tombstones.drops(r.metric.idHex, r.kind, r.ts, seq)) return false;
    if (r.kind === 'histogram') {
      this.activity.note(r.metric, r.ts);
      if (r.set === true) return this.deps.histograms.setPeriod(r.metric, r.ts, r.value, seq);
      return this.deps.histograms.apply(r.metric, r.ts, r.value, seq, r.cumulative === true);
    }
    this.noteActivity(r.metric, r.ts);
    const buffer = this.open.bufferFor(r.metric, r.kind, r.ts - (r.ts % this.span), seq, now);
    this.open.table.append(buffer, r.ts, r.value as BufferValue, now, r.kind === 'numeric' ? (r.generation ?? 0) : 0);
    if (this.open.table.size(buffer) !== this.deps.config.maxBlockSamples) return false;
    this.open.filled(buffer);
    return true;
  }

  /**
   * Activity is noted once per metric and 5-minute slice, not once per sample (a slice
   * noted once is in the stored windows after the next flush, so noting it again adds nothing).
   */
  private noteActivity(metric: MetricInfo, ts: number): void {
    // Kept as the slice's number, not its epoch second: a small integer V8 need not box.
    const slice = activitySlice(ts) / ACTIVITY_SLICE_S;
    if (slice === metric.lastSlice) return;
    metric.lastSlice = slice;
    this.activity.note(metric, ts);
  }

  /** Seals the buffers that are due (full, window ended and quiet, or too old). */
  async sealDue(): Promise<void> {
    await this.seal(this.open.due(this.deps.now(), SEAL_CHUNK));
    await this.deps.histograms.seal();
    await this.activity.flush();
  }

  /**
   * Seals every open buffer (a graceful stop), SEAL_CHUNK to a batch: one batch of every buffer
   * held each block's write and its intermediate arrays at once, and a shard worker with a small
   * heap (`shardHeapMb`) ran out of memory stopping with a few hundred thousand open series.
   */
  async sealAll(): Promise<void> {
    const all = this.open.all();
    for (let from = 0; from < all.length; from += SEAL_CHUNK) await this.seal(all.slice(from, from + SEAL_CHUNK), false);
    await this.deps.histograms.seal();
    await this.activity.flushAll();
  }

  /** Rolls up quiet legacy numeric windows (storage/rollups.ts), and histogram periods the journal (cut below `journalCut`) can no longer replay. */
  async rollUp(journalCut: number): Promise<void> {
    await this.deps.rollups.rollUp(this.raw, this.deps.now());
    await this.deps.histograms.rollUp(journalCut, this.deps.now());
  }

  /**
   * Ages the metrics' sealed numeric data stamped before `to` (window-aligned) into rollups:
   * per metric, its rollup and the delete of its raw blocks in one batch, so a crash leaves
   * a sample either raw or rolled up, never both or neither. Returns samples aged.
   */
  async age(metrics: readonly MetricInfo[], to: number): Promise<number> {
    let aged = 0;
    const failed: string[] = [];
    for (const metric of metrics) {
      try {
        aged += await this.ageOne(metric, to);
      } catch (error) {
        // One unreadable metric must not keep the others raw: it stays raw and is tried next sweep.
        failed.push(`metric ${metric.idHex}: ${(error as Error).message}`);
      }
    }
    if (failed.length > 0) throw new Error(`ageing failed for ${failed.length} metric(s) (${aged} samples of the others aged); ${failed.slice(0, 3).join('; ')}`);
    return aged;
  }

  /** The partition's histogram store (its ageing walk is begun and ended by the partition). */
  get histograms(): HistogramStore {
    return this.deps.histograms;
  }

  /** Writes the aged coarse histogram periods of `metrics` (storage/histograms.ts `age`); periods written. */
  async ageHistograms(metrics: readonly MetricInfo[]): Promise<number> {
    let written = 0;
    for (const metric of metrics) written += await this.deps.histograms.age(metric);
    return written;
  }

  private async ageOne(metric: MetricInfo, to: number): Promise<number> {
    if (!(await this.deps.blocks.anyWindowBefore(metric, 'numeric', to))) return 0;
    const batch = this.deps.blocks.batch();
    try {
      const aged = await this.deps.rollups.stageAgeing(batch, this.raw, metric, to);
      await this.deps.blocks.stageDeleteBefore(batch, metric, 'numeric', to, this.span);
      await batch.write();
      return aged;
    } finally {
      batch.discard();
    }
  }

  readRollups(metric: MetricRef, spanMs: number, start: number, end: number, engine: RollupEngine, columns?: readonly number[]): Promise<RollupSlots> {
    return this.deps.rollups.read(this.raw, metric, spanMs, start, end, engine, columns);
  }

  readFieldInto(metric: MetricRef, spanMs: number, start: number, end: number, spec: FieldSpec, out: Float64Array): Promise<void> {
    return this.deps.rollups.readFieldInto(this.raw, metric, spanMs, start, end, 'dispatch', spec, out);
  }

  writeRollups(metric: MetricRef, records: [number, RollupAccumulator][]): Promise<void> {
    return this.deps.rollups.write(metric, records);
  }

  rollupLevels(metric: MetricRef): Promise<RollupLevels> {
    return this.deps.rollups.levelRecords(metric);
  }

  setRollupLevels(metric: MetricRef, levels: RollupLevels): Promise<void> {
    return this.deps.rollups.setLevels(metric, levels);
  }

  /** Raw numeric data as the rollup store needs it. */
  private readonly raw: RawSource = {
    read: (metric, start, end) => this.readDense(metric, start, end, false),
    readSealed: (metric, start, end) => this.readDense(metric, start, end, true),
    before: async (metric, before, n) => {
      const enough = (s: Series<BufferValue>) => s.values.filter((v) => v !== null).length >= n;
      const same = await this.read(metric, 'numeric', before - (before % this.span), before);
      if (enough(same)) return denseOf(same as Series<NumericValue>);
      const older = await this.readBackwards(metric, 'numeric', before, (s) => enough(concatSeries([s, same])));
      return denseOf(concatSeries([older, same]) as Series<NumericValue>);
    },
    openWindows: (metric) => this.open.numericWindows(metric),
    sealedWindows: (metric, start, end) => this.deps.blocks.windowRange(metric, 'numeric', start, end, this.span),
  };

  /**
   * Numeric samples in [start, end) as rollup math reads them (model/dense-series.ts); with
   * `sealedOnly`, of sealed blocks only (what ageing deletes). Blocks decode straight into typed
   * arrays unless a stamp repeats, which the general read's conflict resolution settles.
   */
  private async readDense(metric: MetricRef, start: number, end: number, sealedOnly: boolean): Promise<DenseSeries> {
    if (end <= start) return emptyDense();
    const blocks = await this.deps.blocks.readEncoded(metric, 'numeric', start, end, this.span);
    const buffers = sealedOnly ? [] : this.open.overlapping(metric, 'numeric', start, end);
    const dense = denseOfParts(blocks, buffers.map((b) => this.open.table.denseSource(b)));
    if (dense !== null) return denseRange(dense, start, end);
    const parts: Series<BufferValue>[] = [...blocks.map((b) => decodeNumericBlock(b)), ...buffers.map((b) => this.open.table.series(b))];
    return denseOf(sliceSeries(this.normalize('numeric', concatSeries(parts)), start, end) as Series<NumericValue>);
  }

  readHistograms(metric: MetricInfo, periodSecs: number, start: number, end: number): Promise<HistogramRow[]> {
    return this.deps.histograms.read(metric, periodSecs, start, end);
  }

  /** The oldest journal sequence any open buffer still depends on (Infinity when none). */
  lowWater(): number {
    return Math.min(this.deps.histograms.lowWater(), this.open.lowWater());
  }

  /** Every sample of `kind` with start <= ts < end, one per timestamp, in time order. */
  async read(metric: MetricRef, kind: DataKind, start: number, end: number): Promise<Series<BufferValue>> {
    if (end <= start) return { ts: [], values: [] }; // a carry's read up to a window start: no scan
    const parts = await this.deps.blocks.read(metric, kind, start, end, this.span);
    for (const b of this.open.overlapping(metric, kind, start, end)) parts.push(this.open.table.series(b));
    return sliceSeries(this.normalize(kind, concatSeries(parts)), start, end);
  }

  /**
   * Reads whole windows before `before`'s window, newest first, until `enough` says the
   * samples gathered so far suffice. Used by the text lead, which looks back an unknown
   * distance. Open buffers join in window order, so the gathered samples never have a gap.
   */
  async readBackwards(
    metric: MetricRef,
    kind: DataKind,
    before: number,
    enough: (s: Series<BufferValue>) => boolean,
  ): Promise<Series<BufferValue>> {
    const limit = before - (before % this.span);
    const open = this.open.overlapping(metric, kind, 0, limit).reverse();
    const windows: Series<BufferValue>[] = [];
    let upper = limit;
    // Adds everything from window `from` up to the last one added, and says if that suffices.
    const addDownTo = (from: number, sealed: Series<BufferValue>[]): boolean => {
      const parts = [...sealed];
      while (open.length > 0 && this.open.table.windowStart(open[0]!) >= from) parts.push(this.open.table.series(open.shift()!));
      upper = from;
      if (parts.length > 0) windows.unshift(this.normalize(kind, concatSeries(parts)));
      return enough(this.normalize(kind, concatSeries(windows)));
    };
    let done = false;
    for await (const { window, blocks } of this.deps.blocks.windowsBefore(metric, kind, limit)) {
      if (addDownTo(window, blocks)) {
        done = true;
        break;
      }
    }
    if (!done && upper > 0) addDownTo(0, []);
    return this.normalize(kind, concatSeries(windows));
  }

  /** True when a numeric rollup level (of `periods`, null = all) has a period of the metric starting before `before`. */
  hasRollupsBefore(metric: MetricRef, before: number, periods: readonly number[] | null): Promise<boolean> {
    return this.deps.rollups.hasBefore(this.raw, metric, before, periods);
  }

  /** Deletes the metric's numeric rollup periods starting before `before` (of `periods`, null = all levels). */
  deleteRollupsBefore(metric: MetricRef, before: number, periods: readonly number[] | null): Promise<void> {
    return this.deps.rollups.deleteBefore(metric, before, periods);
  }

  /** True when the metric has `kind` data stamped before `before` (histograms: in the given levels). */
  async hasDataBefore(metric: MetricInfo, kind: DataKind, before: number, periods: readonly number[] | null): Promise<boolean> {
    if (kind === 'histogram') return this.deps.histograms.hasDataBefore(metric, before, periods);
    if (this.open.overlapping(metric, kind, 0, before).some((b) => this.open.table.hasBefore(b, before))) return true;
    return this.deps.blocks.anyBefore(metric, kind, before, this.span);
  }

  /**
   * Deletes the metric's `kind` data stamped before `before`: whole windows by one range
   * delete, the window holding `before` rewritten without the older samples, open buffers
   * trimmed, and a tombstone so a journal replay cannot bring the samples back.
   */
  async deleteBefore(metric: MetricInfo, kind: DataKind, before: number, stone: Tombstone, periods: readonly number[] | null): Promise<void> {
    const batch = this.deps.blocks.batch();
    const rewritten = kind === 'histogram' ? null : await this.deleteBlocksBefore(batch, metric, kind, before);
    if (kind === 'histogram') this.deps.histograms.deleteBefore(batch, metric, before, periods);
    this.deps.tombstones.add(batch, metric.idHex, kind, stone);
    await batch.write();
    if (kind === 'numeric') this.deps.rollups.rawChanged(metric.idHex);
    if (rewritten !== null) this.deps.blocks.committed(rewritten);
    for (const b of this.open.overlapping(metric, kind, 0, before)) {
      this.open.table.dropBefore(b, before);
      if (this.open.table.size(b) === 0) this.open.close(b);
    }
  }

  /**
   * Stages the delete of whole windows before `before`'s and the rewrite of that window without
   * the older samples; the seal sequence the rewrite took (null: none).
   */
  private async deleteBlocksBefore(batch: ReturnType<BlockStore['batch']>, metric: MetricInfo, kind: Exclude<DataKind, 'histogram'>, before: number): Promise<number | null> {
    const cut = Math.min(before, Number.MAX_SAFE_INTEGER - this.span);
    const parts = await this.deps.blocks.stageDeleteBefore(batch, metric, kind, cut, this.span);
    if (parts.length === 0) return null;
    const window = cut - (cut % this.span);
    const kept = sliceSeries(this.normalize(kind, concatSeries(parts)), cut, Number.MAX_SAFE_INTEGER);
    if (kept.ts.length === 0) return null;
    metric.unsealed = false;
    const [seq] = this.deps.blocks.nextSeqs(1) as [number];
    this.deps.blocks.stageBlock(batch, metric, kind, window, seq, kept);
    this.deps.blocks.stageSealSeq(batch, seq);
    return seq;
  }

  /** Forgets everything about a metric that its data deletes left: rollups, buffers, activity (full delete). */
  async forget(metric: MetricInfo): Promise<void> {
    const batch = this.deps.blocks.batch();
    this.deps.rollups.deleteAll(batch, metric);
    this.deps.histograms.forgetCumulative(batch, metric);
    await batch.write();
    this.open.drop(metric);
    await this.activity.drop(metric.id, metric.idHex);
  }

  private normalize(kind: DataKind, s: Series<BufferValue>): Series<BufferValue> {
    if (kind === 'numeric') return normalizeNumeric(s as Series<NumericValue>, this.combine) as Series<BufferValue>;
    return normalizeLastWins(s);
  }

  /** Open buffers and the bytes of their pooled samples. */
  get openBuffers(): BufferTable['figures'] {
    return this.open.table.figures;
  }

  /** Windows whose blocks were merged since start. */
  get blocksMerged(): number {
    return this.merges.total;
  }

  /** Merges a few windows that were sealed into more than once (bounded work; issue 31). */
  async mergeBlocks(): Promise<number> {
    return this.merges.step(this.deps.blocks, this.span, (s) => this.normalize('numeric', s));
  }

  /**
   * Writes each buffer as a block, in one batch, then closes them. `noteMerges`: windows sealed
   * into again are noted for a merge (not at a stop: the notes live in this process only).
   */
  private async seal(buffers: BufferId[], noteMerges = true): Promise<void> {
    if (buffers.length === 0) return;
    const t = this.open.table;
    if (noteMerges) for (const b of buffers) if (t.kind(b) === 'numeric') await this.merges.noteSeal(this.deps.blocks, t.owner(b), t.windowStart(b), this.span);
    const batch = this.deps.blocks.batch();
    const seqs = this.deps.blocks.nextSeqs(buffers.length);
    try {
      buffers.forEach((b, i) => {
        const metric = t.owner(b);
        const kind = t.kind(b);
        const samples = this.normalize(kind, t.series(b));
        metric.unsealed = false; // before the block exists: a read must look for it from now on
        this.deps.blocks.stageBlock(batch, metric, kind, t.windowStart(b), seqs[i]!, samples);
        if (kind === 'numeric') this.deps.rollups.markSealed(batch, metric, t.windowStart(b));
      });
      this.deps.blocks.stageSealSeq(batch, seqs[seqs.length - 1]!);
    } catch (error) {
      batch.discard();
      throw error;
    }
    await batch.write();
    this.deps.blocks.committed(seqs[seqs.length - 1]!);
    for (const b of buffers) {
      const numeric = t.kind(b) === 'numeric';
      const owner = t.owner(b);
      const window = t.windowStart(b);
      this.open.close(b);
      if (numeric) this.deps.rollups.note(owner, window);
    }
  }
}
