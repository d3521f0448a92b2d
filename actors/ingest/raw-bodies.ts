// Request bodies journaled as they arrived (model/journal-entry.ts `raw` entries) are parsed
// the same way at ingest and at replay, with the context stored beside them, so replay
// yields exactly the samples that were acknowledged.
import { IngestBatch } from '../../model/ingest-batch.js';
import type { MetricResolution, RecordError } from '../../model/ingest-record.js';
import type { RawContext } from '../../model/journal-entry.js';
import { decodeMetricList } from '../../model/metric-list/decode.js';
import { metricListRecords } from '../../model/metric-list/records.js';
import { parseTsvInto } from '../../model/tsv.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { MetricRegistry } from '../node/metric-registry.js';
import { refusing } from '../node/series-limits.js';

/** Series limits applied to each resolved metric (actors/node/series-limits.ts). */
export type Screen = (r: MetricResolution<MetricInfo>) => MetricResolution<MetricInfo>;

/** The screen to parse with: the one given, else one refusing what the journaled context lists. */
function screenFor(ctx: RawContext, screen: Screen | undefined): Screen | null {
  if (screen !== undefined) return screen;
  return ctx.limited !== undefined && ctx.limited.length > 0 ? refusing(ctx.limited) : null;
}

export interface ParsedBody<B = IngestBatch<MetricInfo>> {
  /** The accepted samples: a batch of the node's metrics, or a parse lane's columns (actors/ingest/pool.ts). */
  batch: B;
  errors: RecordError[];
  /** Lines (TSV) or samples (MetricList) submitted. */
  submitted: number;
}

export function parseTsvBody(registry: MetricRegistry, body: Buffer, ctx: RawContext, screen?: Screen): ParsedBody {
  const batch = new IngestBatch<MetricInfo>();
  const resolver = registry.resolver(ctx.headerAccount);
  const s = screenFor(ctx, screen);
  const resolve = s === null ? resolver : (check: string, name: string) => s(resolver(check, name));
  const { errors, lines } = parseTsvInto(body, { resolve, latestAllowed: ctx.latestAllowed, textSizeLimit: ctx.textSizeLimit }, batch);
  return { batch, errors, submitted: lines };
}

/** Throws MetricListFormatError when the body is not a MetricList. */
export function parseMetricListBody(registry: MetricRegistry, body: Buffer, ctx: RawContext, screen?: Screen): ParsedBody {
  const list = decodeMetricList(body);
  const s = screenFor(ctx, screen);
  const { records, errors } = metricListRecords(list, {
    resolve: s === null ? (account, uuid, checkName, name) => registry.intern(account, uuid, checkName, name) : (account, uuid, checkName, name) => s(registry.intern(account, uuid, checkName, name)),
    latestAllowed: ctx.latestAllowed,
    textSizeLimit: ctx.textSizeLimit,
  });
  return { batch: IngestBatch.of(records), errors, submitted: list.samples.length + list.skipped.length };
}
