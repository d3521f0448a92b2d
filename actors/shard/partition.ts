// One partition (DESIGN.md "A metric and its partition"): its core and its mailbox. Every
// question goes through the mailbox (actors/shard/serial-queue.ts), so no two writers ever
// race on a metric, and a read sees every write applied before it was asked.
import type { RollupLevels } from './messages.js';
import type { ActivityWindow } from '../../model/activity.js';
import type { SampleColumns } from '../../model/ingest-batch.js';
import type { DataKind } from '../../model/ingest-record.js';
import type { DeleteOutcome, DeleteTarget } from '../../model/delete.js';
import type { RollupAccumulator } from '../../model/rollup/accumulator.js';
import type { FieldSpec } from '../../model/rollup/fields.js';
import { concatSeries, type Series } from '../../model/series.js';
import { leadRunComplete, selectTextRows, type TextReadOptions, type TextRow } from '../../model/text-read.js';
import type { MetricInfo, MetricRef } from '../../model/metric-info.js';
import type { HistogramRow } from '../../storage/histograms.js';
import { PartitionCore, type PartitionDeps } from './partition-core.js';
import type { RollupEngine, RollupSlots } from '../../storage/rollups.js';
import { SerialQueue } from './serial-queue.js';
import { inLanes } from './lanes.js';
import type { BufferValue } from './window-buffer.js';

/** Up to the two most recent samples per data type, oldest first: [epoch ms, value]. */
export type LatestValues = Partial<Record<DataKind, [number, BufferValue | null][]>>;

/** What a delete did (or, unconfirmed, would do) for one metric; interface §2.3 words. */
export type { DeleteOutcome } from '../../model/delete.js';

export interface PartitionHooks {
  /** Called when applying or sealing fails: the node logs it and stops acknowledging writes. */
  onFault(partition: number, error: unknown): void;
}

/** Reads back from the newest data (far past any real timestamp) until two samples are in hand. */
const LATEST_HORIZON = 2 ** 52;

/** A partition's rollup reads of one question that run side by side (`readFieldsEach`). */
const READS_SIDE_BY_SIDE = 8;

export class Partition {
  private readonly core: PartitionCore;
  private readonly queue = new SerialQueue();

  constructor(
    readonly index: number,
    deps: PartitionDeps,
    private readonly hooks: PartitionHooks,
  ) {
    this.core = new PartitionCore(deps);
  }

  /**
   * Queues journaled samples; resolves once they are taken, whatever the outcome (faults go
   * to the hooks). `ready` is what must happen first (the index records of new metrics made durable).
   */
  apply(seq: number, samples: SampleColumns<MetricInfo>, ready: Promise<void>): Promise<void> {
    return this.queue.run(async () => {
      try {
        await ready;
        if (this.core.apply(seq, samples)) await this.core.sealDue();
      } catch (error) {
        this.hooks.onFault(this.index, error);
      }
    });
  }

  /** Seals what is due and rolls up what is quiet; the journal low water mark. */
  checkpoint(journalCut: number): Promise<number> {
    return this.queue.run(async () => {
      await this.core.sealDue();
      await this.core.rollUp(journalCut);
      await this.core.mergeBlocks();
      return this.core.lowWater();
    });
  }

  /** Ages the metrics' raw numeric data before `to` into rollups (one mailbox turn for the lot); samples aged. */
  age(metrics: readonly MetricInfo[], to: number): Promise<number> {
    return this.queue.run(() => this.core.age(metrics, to));
  }

  /**
   * A histogram ageing walk to `to`: begun (false: nothing to do; from now on this partition's
   * rollups write what the walk writes), each group of metrics aged in one turn, then finished
   * (the cut moves) or abandoned (it stays).
   */
  beginHistogramAgeing(to: number): boolean {
    return this.core.histograms.beginAgeing(to);
  }

  ageHistograms(metrics: readonly MetricInfo[]): Promise<number> {
    return this.queue.run(() => this.core.ageHistograms(metrics));
  }

  finishHistogramAgeing(to: number): Promise<void> {
    return this.queue.run(() => this.core.histograms.finishAgeing(to));
  }

  abandonHistogramAgeing(): void {
    this.core.histograms.abandonAgeing();
  }

  /** Coarse histogram periods ending by this (ms) are stored (0: none aged). */
  get histogramsAgedTo(): number {
    return this.core.histograms.agedTo;
  }

  /** Windows whose blocks this partition merged since start. */
  get openBuffers(): PartitionCore['openBuffers'] {
    return this.core.openBuffers;
  }

  get blocksMerged(): number {
    return this.core.blocksMerged;
  }

  /** After every question queued before it: whether numeric reads of `metrics` up to `end` read sealed data only. */
  settledUntil(metrics: readonly MetricRef[], end: number): Promise<boolean> {
    return this.queue.run(() => metrics.every((m) => this.core.settledUntil(m, end)));
  }

  /** Seals every open buffer; the journal low water mark. */
  sealAll(): Promise<number> {
    return this.queue.run(async () => {
      await this.core.sealAll();
      return this.core.lowWater();
    });
  }

  read(metric: MetricRef, kind: DataKind, start: number, end: number): Promise<Series<BufferValue>> {
    return this.queue.run(() => this.core.read(metric, kind, start, end));
  }

  readHistograms(metric: MetricInfo, period: number, start: number, end: number): Promise<HistogramRow[]> {
    return this.queue.run(() => this.core.readHistograms(metric, period, start, end));
  }

  readRollups(metric: MetricRef, spanMs: number, start: number, end: number, engine: RollupEngine, columns?: readonly number[]): Promise<RollupSlots> {
    return this.queue.run(() => this.core.readRollups(metric, spanMs, start, end, engine, columns));
  }

  /**
   * Field reads of several metrics over one span in one turn of the mailbox, up to
   * READS_SIDE_BY_SIDE at once: their RocksDB iterators overlap instead of each waiting for the
   * last (a hundred iterators one after another took 22–25 ms, side by side 9). Each writes one
   * field per slot into its own `outOf(i)` as its read ends, so a read holds a few metrics'
   * periods at a time, not all of them.
   */
  readFieldsEach(metrics: readonly MetricRef[], spanMs: number, start: number, end: number, spec: FieldSpec, outOf: (i: number) => Float64Array): Promise<void> {
    const indexes = metrics.map((_, i) => i);
    return this.queue.run(async () => {
      await inLanes(indexes, (i) => this.core.readFieldInto(metrics[i]!, spanMs, start, end, spec, outOf(i)), READS_SIDE_BY_SIDE);
    });
  }


  writeRollups(metric: MetricRef, records: [number, RollupAccumulator][]): Promise<void> {
    return this.queue.run(() => this.core.writeRollups(metric, records));
  }

  rollupLevels(metric: MetricRef): Promise<RollupLevels> {
    return this.queue.run(() => this.core.rollupLevels(metric));
  }

  setRollupLevels(metric: MetricRef, levels: RollupLevels): Promise<void> {
    return this.queue.run(() => this.core.setRollupLevels(metric, levels));
  }

  activity(metrics: MetricInfo[]): Promise<ActivityWindow[][]> {
    return this.queue.run(() => this.core.activity.windows(metrics));
  }

  setActivity(metric: MetricInfo, windows: ActivityWindow[]): Promise<void> {
    return this.queue.run(() => this.core.activity.replace(metric.id, metric.idHex, windows));
  }

  /**
   * Deletes the metric's `target` data stamped before `before` ms (histograms and numeric
   * rollups: in the given rollup periods, null = all), or with `confirm` false only reports
   * whether there is any. `seq` is the journal's next sequence: replayed entries below it
   * cannot bring raw data back.
   */
  deleteData(metric: MetricInfo, target: DeleteTarget, before: number, seq: number, confirm: boolean, periods: readonly number[] | null): Promise<DeleteOutcome> {
    return this.queue.run(async () => {
      const has = target === 'nnt' ? this.core.hasRollupsBefore(metric, before, periods) : this.core.hasDataBefore(metric, target, before, periods);
      if (!(await has)) return 'no content' as const;
      if (!confirm) return 'found' as const;
      if (target === 'nnt') await this.core.deleteRollupsBefore(metric, before, periods);
      else await this.core.deleteBefore(metric, target, before, { before, seq }, periods);
      return 'deleted' as const;
    });
  }

  /** Drops what the partition keeps of a metric (after a full delete of its data). */
  forget(metric: MetricInfo): Promise<void> {
    return this.queue.run(() => this.core.forget(metric));
  }

  /** The two most recent samples of each kind (histograms excepted). */
  latest(metric: MetricInfo, kinds: readonly DataKind[]): Promise<LatestValues> {
    return this.queue.run(async () => {
      const out: LatestValues = {};
      for (const kind of kinds) {
        // Histograms are not stored as samples; their latest values are not tracked.
        if (kind === 'histogram') continue;
        const s = await this.core.readBackwards(metric, kind, LATEST_HORIZON, (got) => got.ts.length >= 2);
        const from = Math.max(0, s.ts.length - 2);
        out[kind] = s.ts.slice(from).map((ts, i) => [ts, s.values[from + i]!] as [number, BufferValue | null]);
      }
      return out;
    });
  }

  readText(metric: MetricRef, options: TextReadOptions): Promise<TextRow[]> {
    return this.queue.run(() => readText(this.core, metric, options));
  }
}

async function readText(core: PartitionCore, metric: MetricRef, options: TextReadOptions): Promise<TextRow[]> {
  const inRange = (await core.read(metric, 'text', options.start, options.end)) as Series<string | null>;
  if (options.specificRange || !options.lead || inRange.ts[0] === options.start) return selectTextRows(inRange, options);
  // The lead row is the first sample of the run in force at start: look back (first
  // within start's window, then window by window) until the run's beginning is in hand.
  const windowStart = options.start - (options.start % core.span);
  const sameWindow = (await core.read(metric, 'text', windowStart, options.start)) as Series<string | null>;
  const complete = (s: Series<string | null>) => leadRunComplete(s, options.start);
  const older = complete(sameWindow)
    ? { ts: [], values: [] }
    : ((await core.readBackwards(metric, 'text', options.start, (s) => complete(concatSeries([s as Series<string | null>, sameWindow])))) as Series<string | null>);
  return selectTextRows(concatSeries<string | null>([older, sameWindow, inRange]), options);
}
