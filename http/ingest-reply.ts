// The reply every ingest endpoint gives (interface §4.6): counts, plus the first few
// rejected lines or items described. Sent only after the accepted records are durable.
import type { FerriteNode, Samples } from '../actors/node/node.js';
import type { MetricInfo } from '../model/metric-info.js';
import type { ParsedBody } from '../actors/ingest/raw-bodies.js';
import { ferr } from '../model/errors.js';
import type { IngestRecord, RecordError } from '../model/ingest-record.js';

/** How many rejected lines or items are described in a reply (all are counted). */
const MAX_ERROR_DETAILS = 10;

export interface Accepted {
  records: IngestRecord<MetricInfo>[];
  errors: RecordError[];
  /** Lines or items submitted. */
  submitted: number;
}

/**
 * Stores what was accepted and builds the reply; a submission with nothing valid is a
 * 400 naming the first problem. `unit` names what `at` counts: 'line' (1-based) or 'item' (0-based).
 */
export async function ingestAndReply(node: FerriteNode, a: Accepted, unit: 'line' | 'item'): Promise<Record<string, unknown>> {
  requireSomething(a.records.length, a.errors, unit);
  await node.ingest(a.records);
  return summarize(a.submitted, a.records.length, a.errors, unit);
}

/** As ingestAndReply, for a body parsed into a batch and journaled as it arrived (`rawEntry`). */
export async function ingestParsed(node: FerriteNode, p: ParsedBody<Samples>, rawEntry: Buffer, unit: 'line' | 'item'): Promise<Record<string, unknown>> {
  requireSomething(p.batch.size, p.errors, unit);
  await node.ingestBatch(p.batch, rawEntry);
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
