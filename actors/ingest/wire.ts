// What an ingest worker (actors/ingest/worker.ts) sends back for one body: the samples in
// columns, with metrics as the worker's small integer ids ("sids"); the first time a worker
// uses a sid it also sends who the metric is, and the main thread interns it once.
import type { RawFormat, RawContext } from '../../model/journal-entry.js';
import type { IngestRecord, RecordError } from '../../model/ingest-record.js';
import type { WireMetric } from '../../model/metric-info.js';

export interface ParseJob {
  id: number;
  /** `forget`: no body to parse; the worker forgets its metrics and starts a new sid epoch. */
  format: RawFormat | 'forget';
  ctx: RawContext;
  /** The body; transferred to the worker and back. */
  body: Uint8Array;
}

/** A metric the worker names for the first time: sid → who it is, canonicalised and placed. */
export interface NewMetric extends WireMetric {
  sid: number;
}

export interface WirePart {
  partition: number;
  sids: Uint32Array;
  ts: Float64Array;
  values: Float64Array;
  /** Records that are not plain doubles, each naming its metric by sid. */
  others: (Omit<IngestRecord, 'metric'> & { metric: { sid: number } })[];
}

export interface ParseResult {
  id: number;
  /** Sid numbering restarts when the worker forgets its metrics; sids of older epochs are stale. */
  epoch: number;
  fresh: NewMetric[];
  parts: WirePart[];
  errors: RecordError[];
  submitted: number;
  body: Uint8Array;
  /** Set when the body could not be parsed at all (a malformed MetricList). */
  fatal?: string;
}
