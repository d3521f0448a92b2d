// The partitions as one facade (DESIGN.md "Next shape"): the actor system, one actor per
// partition, and every question a caller can ask them. Callers hold a metric and get a
// promise; which actor answers, and how long to wait for it, is decided here.
import nact from 'nact';
import type { ActivityWindow } from '../../model/activity.js';
import { ferr } from '../../model/errors.js';
import type { IngestBatch } from '../../model/ingest-batch.js';
import type { DataKind } from '../../model/ingest-record.js';
import type { RollupAccumulator } from '../../model/rollup/accumulator.js';
import type { Series } from '../../model/series.js';
import type { TextReadOptions, TextRow } from '../../model/text-read.js';
import type { HistogramRow } from './histogram-store.js';
import type { DeleteOutcome, LatestValues, PartitionMsg, Reply } from './messages.js';
import type { MetricInfo } from '../metric-info.js';
import { spawnPartition, type PartitionHooks, type PartitionRef } from './partition.js';
import type { PartitionDeps } from './partition-core.js';
import type { RollupEngine, RollupSlots } from './rollup-store.js';
import type { BufferValue } from './window-buffer.js';

/** Partition queries wait this long; a partition slower than this is overloaded. */
const QUERY_TIMEOUT_MS = 60_000;
/** A checkpoint waits this long for a partition before calling it failed: in practice, wedged. */
const CHECKPOINT_PATIENCE_MS = 3_600_000;

export class Partitions {
  private readonly system: any = nact.start();
  private readonly refs: PartitionRef[] = [];

  /**
   * `deps[p]` builds partition p's core; `journalSeq` is the journal sequence a delete is
   * ordered after (replay of older entries must not resurrect what it deleted).
   */
  constructor(deps: readonly PartitionDeps[], hooks: PartitionHooks, private readonly journalSeq: () => number) {
    for (const d of deps) this.refs.push(spawnPartition(this.system, d, hooks));
  }

  get count(): number {
    return this.refs.length;
  }

  /** Hands each partition its share of a journaled batch (no reply: faults go to the hooks). */
  apply(seq: number, samples: IngestBatch<MetricInfo>): void {
    for (const [p, part] of samples.parts) nact.dispatch(this.refs[p]!, { type: 'apply', seq, samples: part });
  }

  read(metric: MetricInfo, kind: DataKind, start: number, end: number): Promise<Series<BufferValue>> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'read', metric, kind, start, end, replyTo }));
  }

  readText(metric: MetricInfo, options: TextReadOptions): Promise<TextRow[]> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'readText', metric, options, replyTo }));
  }

  /** The two most recent samples of each kind (histograms excepted). */
  latest(metric: MetricInfo, kinds: DataKind[]): Promise<LatestValues> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'latest', metric, kinds, replyTo }));
  }

  /**
   * Deletes the metric's `kind` data stamped before `before` ms (histograms: in the given
   * rollup periods, null = all), or with `confirm` false only reports whether there is any.
   */
  deleteData(metric: MetricInfo, kind: DataKind, before: number, confirm: boolean, periods: number[] | null = null): Promise<DeleteOutcome> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'delete', metric, kind, before, seq: this.journalSeq(), confirm, periods, replyTo }));
  }

  /** Drops what the partition keeps of a metric in memory (after a full delete of its data). */
  forget(metric: MetricInfo): Promise<void> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'forget', metric, replyTo }));
  }

  /** Activity windows of each metric (unflushed activity included), in the order given. */
  async activityOf(metrics: MetricInfo[]): Promise<ActivityWindow[][]> {
    const byPartition = new Map<number, number[]>();
    metrics.forEach((m, i) => {
      const list = byPartition.get(m.partition) ?? [];
      list.push(i);
      byPartition.set(m.partition, list);
    });
    const out = new Array<ActivityWindow[]>(metrics.length);
    await Promise.all(
      [...byPartition].map(async ([p, indexes]) => {
        const windows = await this.ask<ActivityWindow[][]>(p, (replyTo) => ({ type: 'activity', metrics: indexes.map((i) => metrics[i]!), replyTo }));
        indexes.forEach((i, k) => (out[i] = windows[k]!));
      }),
    );
    return out;
  }

  /** Replaces the metric's persisted activity windows. */
  setActivity(metric: MetricInfo, windows: ActivityWindow[]): Promise<void> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'setActivity', metric, windows, replyTo }));
  }

  /** Numeric rollups per `spanMs` for period starts in [start, end) ms; `columns` (model/rollup/chunk.ts ids) are those the caller uses, default all. */
  readRollups(metric: MetricInfo, spanMs: number, start: number, end: number, engine: RollupEngine, columns?: readonly number[]): Promise<RollupSlots> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'readRollups', metric, spanMs, start, end, engine, columns, replyTo }));
  }

  /** Stores rollup records (from /write/nnt) durably, then rebuilds the coarser levels. */
  writeRollups(metric: MetricInfo, records: [number, RollupAccumulator][]): Promise<void> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'writeRollups', metric, records, replyTo }));
  }

  /** Histograms per `period` s for period starts in [start, end] ms (inclusive). */
  readHistograms(metric: MetricInfo, period: number, start: number, end: number): Promise<HistogramRow[]> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'readHistograms', metric, period, start, end, replyTo }));
  }

  /** Seals every open buffer; each partition's journal low water mark. */
  sealAll(): Promise<number[]> {
    return Promise.all(this.refs.map((_, p) => this.ask<number>(p, (replyTo) => ({ type: 'sealAll', replyTo }))));
  }

  /** Seals what is due and rolls up what is quiet; each partition's journal low water mark. */
  checkpoint(journalCut: number): Promise<number[]> {
    return Promise.all(
      this.refs.map((_, p) =>
        // A checkpoint waits for a busy partition as long as it takes (a timeout would only
        // queue another checkpoint behind it); /state shows how long one has been running.
        this.ask<number>(p, (replyTo) => ({ type: 'checkpoint', journalCut, replyTo }), CHECKPOINT_PATIENCE_MS).catch((error: unknown) => {
          throw new Error(`partition ${p}: ${(error as Error).message}`, { cause: error });
        }),
      ),
    );
  }

  stop(): void {
    nact.stop(this.system);
  }

  private ask<T>(partition: number, build: (replyTo: any) => PartitionMsg, timeoutMs = QUERY_TIMEOUT_MS): Promise<T> {
    return (nact.query(this.refs[partition]!, build, timeoutMs) as Promise<Reply<T>>).then(
      (reply) => {
        if (reply.ok) return reply.value;
        throw reply.error;
      },
      (error: unknown) => {
        throw ferr('FER_ERR_OVERLOADED', `partition ${partition} did not answer: ${String(error)}`);
      },
    );
  }
}
