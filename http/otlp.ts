// OpenTelemetry metrics over OTLP/HTTP: `POST /v1/metrics` (the protocol's path) and
// `POST /api/v1/otlp/v1/metrics` (Prometheus'). Protobuf or JSON, gzip or not; account and
// check from x-svc-account-id / x-svc-check-uuid, else `defaultAccount` / `defaultCheckUuid`.
// Points become samples (model/otlp/samples.ts) stored durably before the 200, whose body is
// an ExportMetricsServiceResponse with `partial_success` naming what was rejected.
import { gunzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import type { MetricInfo } from '../model/metric-info.js';
import { ferr } from '../model/errors.js';
import type { IngestRecord, RecordError } from '../model/ingest-record.js';
import { decodeRequest, encodeResponse, type OtlpEncoding, type PartialSuccess } from '../model/otlp/codec.js';
import { CumulativeExponentials } from '../model/otlp/cumulative.js';
import { pointItems, type OtlpSample, type PointItem } from '../model/otlp/samples.js';
import { OtlpFormatError } from '../model/otlp/types.js';
import { spelledRecord, type TaggedContext } from '../model/tagged-sample.js';
import { mediaType } from './headers.js';
import { requireSomething, withinLimits } from './ingest-reply.js';
import { JSON_BODY, TAG } from './schemas.js';
import { defaultScope, taggedContext } from './tagged-ingest.js';

const MEDIA: Record<string, OtlpEncoding> = { 'application/x-protobuf': 'protobuf', 'application/protobuf': 'protobuf', 'application/json': 'json' };
/** Distinct rejection reasons quoted in `partial_success.error_message` (all are counted). */
const MAX_REASONS = 10;

export async function otlpRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  const cumulative = new CumulativeExponentials(Date.now());

  const handler = async (req: FastifyRequest) => {
    const encoding = MEDIA[mediaType(req)];
    if (encoding === undefined) throw ferr('FER_ERR_UNSUPPORTED_MEDIA_TYPE', `'${req.headers['content-type'] ?? ''}' (OTLP/HTTP bodies are application/x-protobuf or application/json)`);
    const scope = defaultScope(node, req);
    let resources;
    try {
      resources = decodeRequest(plainBody(req, node.config.bodyLimitBytes), encoding);
    } catch (error) {
      if (error instanceof OtlpFormatError) throw ferr('FER_ERR_BAD_BODY', error.message);
      throw error;
    }
    const remember: (() => void)[] = [];
    const items = pointItems(resources, (series, p) => {
      const d = cumulative.delta(`${scope.account}/${scope.uuid}/${series}`, p);
      remember.push(d.remember);
      return d.counts;
    });
    const { records, errors, admission } = await withinLimits(node, pointRecords(items, taggedContext(node, scope), `${scope.account}/${scope.uuid}`));
    try {
      if (items.length > 0 && errors.length === items.length) requireSomething(0, errors, 'item');
      if (records.length > 0) await node.ingest(records, admission);
    } finally {
      admission?.release();
    }
    for (const r of remember) r();
    if (errors.length > 0) req.log.warn({ rejectedPoints: errors.length, first: errors[0] }, 'OTLP: some data points were not stored');
    return { encoding, body: encodeResponse(partialSuccess(errors), encoding) };
  };

  const schema = { tags: [TAG.ingest], summary: 'OpenTelemetry metrics (OTLP/HTTP ExportMetricsServiceRequest); account and check from x-svc-account-id / x-svc-check-uuid or the defaults' };
  const rawBody = {
    description: 'An ExportMetricsServiceRequest, gzip or not (Content-Encoding). Reply: an ExportMetricsServiceResponse in the same encoding, with partial_success when points were rejected.',
    types: { 'application/x-protobuf': 'protobuf (model/otlp/metrics.proto)', [JSON_BODY]: 'the OTLP JSON mapping' },
  };
  for (const url of ['/v1/metrics', '/api/v1/otlp/v1/metrics']) {
    app.post(url, { schema, config: { rawBody } }, async (req, reply) => {
      const { encoding, body } = await handler(req);
      return reply.type(encoding === 'json' ? 'application/json' : 'application/x-protobuf').send(body);
    });
  }
}

/** The body with its Content-Encoding (gzip or none) undone, at most `limit` bytes. */
function plainBody(req: FastifyRequest, limit: number): Buffer {
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (coding === 'identity' || coding === '') return body;
  if (coding !== 'gzip') throw ferr('FER_ERR_UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${coding} (OTLP/HTTP bodies are gzip or not encoded)`);
  try {
    return gunzipSync(body, { maxOutputLength: limit });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw ferr('FER_ERR_BODY_TOO_LARGE', limit);
    throw ferr('FER_ERR_BAD_BODY', `Content-Encoding gzip, but the body is not gzip: ${(error as Error).message}`);
  }
}

/** Each point's records, or its error (`at` = the point's index in the request); a point is stored whole or not at all. */
function pointRecords(items: readonly PointItem[], ctx: TaggedContext<MetricInfo>, check: string): { records: IngestRecord<MetricInfo>[]; errors: RecordError[]; itemOf: number[] } {
  // A series remembers what it resolved to in the last check, sparing the registry's lookup by spelling.
  const record = (s: OtlpSample) => spelledRecord(s.name, s.series.spelling, s.ts, s.value, ctx, () => s.series.resolvedIn(check, ctx.resolve));
  const records: IngestRecord<MetricInfo>[] = [];
  const errors: RecordError[] = [];
  const itemOf: number[] = [];
  items.forEach((item, at) => {
    if (typeof item === 'string') return errors.push({ at, reason: item });
    const mine = item.map(record);
    const problem = mine.find((r): r is string => typeof r === 'string');
    if (problem !== undefined) return errors.push({ at, reason: problem });
    for (const r of mine as IngestRecord<MetricInfo>[]) {
      records.push(r);
      itemOf.push(at);
    }
    return undefined;
  });
  return { records, errors, itemOf };
}

function partialSuccess(errors: readonly RecordError[]): PartialSuccess | null {
  if (errors.length === 0) return null;
  const reasons = [...new Set(errors.map((e) => e.reason))];
  const shown = reasons.slice(0, MAX_REASONS).join('; ');
  const more = reasons.length > MAX_REASONS ? ` (and ${reasons.length - MAX_REASONS} more reasons)` : '';
  return { rejectedDataPoints: errors.length, errorMessage: `${errors.length} data points rejected: ${shown}${more}` };
}
