// Messages the partition actors understand, and the reply envelope of their queries.
import type { Ref } from 'nact';
import type { DataKind, IngestRecord } from '../model/ingest-record.js';
import type { Series } from '../model/series.js';
import type { TextReadOptions, TextRow } from '../model/text-read.js';
import type { MetricInfo } from './metric-info.js';
import type { BufferValue } from './window-buffer.js';

export type Reply<T> = { ok: true; value: T } | { ok: false; error: unknown };

export type PartitionMsg =
  /** Journaled records to buffer; fire and forget (the journal already made them durable). */
  | { type: 'apply'; seq: number; records: IngestRecord<MetricInfo>[] }
  /** Seal what is due; replies with the lowest journal sequence still needed. */
  | { type: 'checkpoint'; replyTo: Ref<Reply<number>> }
  /** Seal every open buffer (shutdown, or an operator's explicit flush). */
  | { type: 'sealAll'; replyTo: Ref<Reply<number>> }
  | { type: 'read'; metric: MetricInfo; kind: DataKind; start: number; end: number; replyTo: Ref<Reply<Series<BufferValue>>> }
  | { type: 'readText'; metric: MetricInfo; options: TextReadOptions; replyTo: Ref<Reply<TextRow[]>> };
