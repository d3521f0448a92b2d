// The reply every ingest endpoint gives (interface §4.6): counts, plus the first few
// rejected lines or items described. Sent only after the accepted records are durable.
import type { FerriteNode, RawParse } from '../actors/node/node.js';
import type { Admission } from '../actors/node/series-limits.js';
import type { MetricInfo } from '../model/metric-info.js';
import { ferr } from '../model/errors.js';
import type { IngestRecord, RecordError } from '../model/ingest-record.js';

/** How many rejected lines or items are described in a reply (all are counted). */
const MAX_ERROR_DETAILS = 10;

export interface Accepted {
  records: IngestRecord<MetricInfo>[];
  errors: RecordError[];
  /** Lines or items submitted. */
  submitted: number;
  /** The line or item of each record (`at` of its error if its series is refused). */
  itemOf: readonly number[];
}

/**
 * Stores what was accepted and builds the reply; a submission with nothing valid is a
 * 400 naming the first problem. `unit` names what `at` counts: 'line' (1-based) or 'item' (0-based).
 */
export async function ingestAndReply(node: FerriteNode, a: Accepted, unit: 'line' | 'item'): Promise<Record<string, unknown>> {
  const limited = await withinLimits(node, a);
  try {
    requireSomething(limited.records.length, limited.errors, unit);
    await node.ingest(limited.records, limited.admission);
  } finally {
    limited.admission?.release();
  }
  return summarize(a.submitted, limited.records.length, limited.errors, unit);
}

/**
 * The records with those of series a limit refuses left out: a line or item with any such
 * record is rejected whole, its error naming the limit. Release `admission` once stored.
 */
export async function withinLimits<R extends { metric: MetricInfo }>(node: FerriteNode, a: { records: R[]; errors: RecordError[]; itemOf: readonly number[] }): Promise<{ records: R[]; errors: RecordError[]; admission: Admission | null }> {
  const { refused, admission } = await node.screenRecords(a.records);
  const rejected = new Map<number, string>();
  refused.forEach((why, i) => why !== undefined && !rejected.has(a.itemOf[i]!) && rejected.set(a.itemOf[i]!, why));
  if (rejected.size === 0) return { records: a.records, errors: a.errors, admission };
  const records = a.records.filter((_, i) => !rejected.has(a.itemOf[i]!));
  const errors = [...a.errors, ...[...rejected].map(([at, reason]) => ({ at, reason }))].sort((x, y) => x.at - y.at);
  return { records, errors, admission };
}

/** As ingestAndReply, for a body parsed into a batch and journaled as it arrived (`rawEntry`). */
export async function ingestParsed(node: FerriteNode, p: RawParse, rawEntry: Buffer, unit: 'line' | 'item'): Promise<Record<string, unknown>> {
  try {
    requireSomething(p.batch.size, p.errors, unit);
    await node.ingestBatch(p.batch, rawEntry, p.admission);
  } finally {
    p.admission?.release();
  }
  return summarize(p.submitted, p.batch.size, p.errors, unit);
}

/** A submission with nothing valid is a 400 naming the first problem. */
export function requireSomething(stored: number, errors: RecordError[], unit: 'line' | 'item'): void {
  if (stored > 0) return;
  const why = errors.length === 0 ? 'the body is empty' : `${unit} ${errors[0]!.at}: ${errors[0]!.reason}`;
  throw ferr('FER_ERR_NO_VALID_RECORDS', why);
}

export function summarize(submitted: number, stored: number, errors: RecordError[], unit: 'line' | 'item'): Record<string, unknown> {
  const summary: Record<string, unknown> = { records: submitted, updated: stored, misdirected: 0, discarded: 0, errors: errors.length };
  if (errors.length > 0) summary.error_details = errors.slice(0, MAX_ERROR_DETAILS).map((e) => ({ [unit]: e.at, reason: e.reason }));
  return summary;
}
