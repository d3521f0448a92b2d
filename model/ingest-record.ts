import type { CanonicalName } from './metric-name.js';
import type { AccountId, EpochMs, MetricKey, NumericValue } from './types.js';

/** Who a metric is: resolved once per (check, name) and shared by its records. */
export interface MetricIdentity {
  key: MetricKey;
  accountId: AccountId;
  uuid: string;
  checkName: string;
  name: CanonicalName;
}

/** One accepted measurement, after validation; the unit of journaling and storage. */
export type IngestRecord<M = MetricIdentity> =
  /** `generation`: MetricList generation, for the `last_*` conflict resolvers (absent = 0). */
  | { kind: 'numeric'; metric: M; ts: EpochMs; value: NumericValue; generation?: number }
  | { kind: 'text'; metric: M; ts: EpochMs; value: string | null }
  /**
   * `value` is the base64 serialized circllhist as submitted; `cumulative` (TSV `H2`, MetricList
   * `Histogram.cumulative`): its counts are running totals (model/histogram/cumulative.ts).
   * `set` (never from clients: a relocation or rebuild copy, actors/cluster/relocation.ts): the
   * histogram *is* the finest period starting at `ts`, replacing what the period held before it
   * in this node's journal order, instead of being added (storage/histograms.ts).
   */
  | { kind: 'histogram'; metric: M; ts: EpochMs; value: string; cumulative?: boolean; set?: boolean };

export type DataKind = IngestRecord['kind'];

/** A rejected line or item, reported back to the client. */
export interface RecordError {
  /** 1-based line number (TSV) or 0-based item index (JSON writers). */
  at: number;
  reason: string;
}

export type MetricResolution<M> = { ok: true; metric: M } | { ok: false; reason: string };

/** Turns a check field and a submitted metric name into a metric (normally cached). */
export type MetricResolver<M> = (checkField: string, name: string) => MetricResolution<M>;
