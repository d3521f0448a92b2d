// Messages the partition actors understand, and the reply envelope of their queries.
import type { Ref } from 'nact';
import type { ActivityWindow } from '../../model/activity.js';
import type { SampleColumns } from '../../model/ingest-batch.js';
import type { DataKind } from '../../model/ingest-record.js';
import type { Series } from '../../model/series.js';
import type { TextReadOptions, TextRow } from '../../model/text-read.js';
import type { RollupAccumulator } from '../../model/rollup/accumulator.js';
import type { HistogramRow } from './histogram-store.js';
import type { RollupEngine, RollupSlots } from './rollup-store.js';
import type { MetricInfo } from '../metric-info.js';
import type { BufferValue } from './window-buffer.js';

/** Up to the two most recent samples per data type, oldest first: [epoch ms, value]. */
export type LatestValues = Partial<Record<DataKind, [number, BufferValue | null][]>>;

/** What a delete did (or, unconfirmed, would do) for one metric; interface §2.3 words. */
export type DeleteOutcome = 'deleted' | 'found' | 'no content';

export type Reply<T> = { ok: true; value: T } | { ok: false; error: unknown };

export type PartitionMsg =
  /** Journaled samples to buffer; fire and forget (the journal already made them durable). */
  | { type: 'apply'; seq: number; samples: SampleColumns<MetricInfo> }
  /** Seal what is due; replies with the lowest journal sequence still needed. */
  | { type: 'checkpoint'; journalCut: number; replyTo: Ref<Reply<number>> }
  /** Seal every open buffer (shutdown, or an operator's explicit flush). */
  | { type: 'sealAll'; replyTo: Ref<Reply<number>> }
  | { type: 'read'; metric: MetricInfo; kind: DataKind; start: number; end: number; replyTo: Ref<Reply<Series<BufferValue>>> }
  | { type: 'readHistograms'; metric: MetricInfo; period: number; start: number; end: number; replyTo: Ref<Reply<HistogramRow[]>> }
  | { type: 'activity'; metrics: MetricInfo[]; replyTo: Ref<Reply<ActivityWindow[][]>> }
  /** Replaces a metric's activity windows (POST /surrogate/activity_rebuild). */
  | { type: 'setActivity'; metric: MetricInfo; windows: ActivityWindow[]; replyTo: Ref<Reply<void>> }
  | { type: 'latest'; metric: MetricInfo; kinds: DataKind[]; replyTo: Ref<Reply<LatestValues>> }
  /** Deletes (or, unconfirmed, only looks for) `kind` data before `before`; `seq` is the journal's next sequence. */
  | { type: 'delete'; metric: MetricInfo; kind: DataKind; before: number; seq: number; confirm: boolean; periods: number[] | null; replyTo: Ref<Reply<DeleteOutcome>> }
  /** Drops the in-memory state of a fully deleted metric. */
  | { type: 'forget'; metric: MetricInfo; replyTo: Ref<Reply<void>> }
  | { type: 'readRollups'; metric: MetricInfo; spanMs: number; start: number; end: number; engine: RollupEngine; columns?: readonly number[]; replyTo: Ref<Reply<RollupSlots>> }
  | { type: 'writeRollups'; metric: MetricInfo; records: [number, RollupAccumulator][]; replyTo: Ref<Reply<void>> }
  | { type: 'readText'; metric: MetricInfo; options: TextReadOptions; replyTo: Ref<Reply<TextRow[]>> };
