// The reply every ingest endpoint gives (interface §4.6): counts, plus the first few
// rejected lines or items described. Sent only after the accepted records are durable.
import type { FerriteNode } from '../actors/node.js';
import type { MetricInfo } from '../actors/metric-info.js';
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
  if (a.records.length === 0) {
    const why = a.errors.length === 0 ? 'the body is empty' : `${unit} ${a.errors[0]!.at}: ${a.errors[0]!.reason}`;
    throw ferr('FER_ERR_NO_VALID_RECORDS', why);
  }
  await node.ingest(a.records);
  const summary: Record<string, unknown> = {
    records: a.submitted,
    updated: a.records.length,
    misdirected: 0,
    discarded: 0,
    errors: a.errors.length,
  };
  if (a.errors.length > 0) summary.error_details = a.errors.slice(0, MAX_ERROR_DETAILS).map((e) => ({ [unit]: e.at, reason: e.reason }));
  return summary;
}
