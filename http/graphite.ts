// The Graphite API (irondb-reference §4.6): carbon plaintext ingest, metrics/find, tags/find,
// series and series_multi, each under `/graphite/<account>[/<prefix>]`, with and without the
// trailing slash graphite-irondb sends. JSON answers carry exactly `application/json` (the
// finder compares the content type as a string); FlatBuffer answers when the Accept header
// asks for them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findMetrics, findTagged, readSeries, type GraphiteScope, type SeriesName } from '../actors/coordinators/sources/graphite.js';
import type { MetricInfo } from '../model/metric-info.js';
import type { FerriteNode } from '../actors/node/node.js';
import { normalizeUuid, parseAccountId } from '../model/check-field.js';
import { ferr } from '../model/errors.js';
import { encodeFindResults, encodeGetResult, FIND_RESULT_TYPE, GET_RESULT_TYPE, type FindResult, type GetResult } from '../model/graphite/flatbuffers.js';
import { GlobError } from '../model/graphite/glob.js';
import { parseCarbonLine } from '../model/graphite/plaintext.js';
import { TagExprError } from '../model/graphite/tag-expr.js';
import type { IngestRecord, RecordError } from '../model/ingest-record.js';
import { MAX_CELLS, MAX_EPOCH_S, MAX_PERIODS } from '../model/fetch/request.js';
import type { AccountId } from '../model/types.js';
import { parseQuery } from '../actors/coordinators/find.js';
import { advisoryLimit } from './request.js';
import { ingestAndReply } from './ingest-reply.js';
import { bodyText } from './request.js';

type Query = Record<string, string | undefined>;
/** IRONdb's default result limit for Graphite queries (graphite-rendering docs). */
const DEFAULT_LIMIT = 10_000;
/** Without a `step`, the finest rollup period giving at most this many points per series. */
const TARGET_POINTS = 1440;

export async function graphiteRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.route({ method: ['POST', 'PUT'], url: '/graphite/:account/:uuid/:check', handler: async (req, reply) => reply.send(await ingest(node, req)) });

  for (const base of ['/graphite/:account', '/graphite/:account/:prefix']) {
    for (const slash of ['', '/']) {
      app.get(`${base}/metrics/find${slash}`, async (req, reply) => {
        const q = req.query as Query;
        const filter = q.irondb_tag_filter === undefined || q.irondb_tag_filter === '' ? null : q.irondb_tag_filter;
        if (filter !== null) parseQuery(filter); // 400 for a malformed filter
        const results = await graphiteQuery(() => findMetrics(node, scope(req), required(q, 'query'), filter));
        return sendFind(req, reply, results);
      });
      app.get(`${base}/tags/find${slash}`, async (req, reply) => {
        const results = await graphiteQuery(() => findTagged(node, scope(req), required(req.query as Query, 'query')));
        return sendFind(req, reply, results);
      });
      app.get(`${base}/series${slash}`, async (req, reply) => {
        const q = req.query as Query;
        const range = timeRange(node, q.start, q.end, q.step);
        return sendSeries(req, reply, await readSeries(node, scope(req), [required(q, 'name')], range.start, range.end, range.step));
      });
      app.post(`${base}/series_multi${slash}`, async (req, reply) => {
        const doc = jsonBody(bodyText(req));
        const names = seriesNames(doc.names);
        const range = timeRange(node, doc.start, doc.end, doc.step);
        if (names.length * ((range.end - range.start) / range.step) > MAX_CELLS) throw ferr('FER_ERR_BAD_PARAM', 'step', `asks for more than ${MAX_CELLS} values`);
        return sendSeries(req, reply, await readSeries(node, scope(req), names, range.start, range.end, range.step));
      });
    }
  }
}

/** Carbon plaintext lines for one check, stored as `graphite.<check>.<name>`; per-line errors like /raw. */
async function ingest(node: FerriteNode, req: FastifyRequest): Promise<Record<string, unknown>> {
  const p = req.params as { account: string; uuid: string; check: string };
  const account = accountOf(p.account);
  const uuid = normalizeUuid(p.uuid);
  if (uuid === null) throw ferr('FER_ERR_BAD_UUID', `'${p.uuid}'`);
  const latestAllowed = Date.now() + node.config.maxClockSkewMs;
  const records: IngestRecord<MetricInfo>[] = [];
  const errors: RecordError[] = [];
  const itemOf: number[] = [];
  let submitted = 0;
  bodyText(req).split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    submitted++;
    const record = carbonRecord(node, line, { account, uuid, check: p.check, latestAllowed });
    if (typeof record === 'string') errors.push({ at: i + 1, reason: record });
    else {
      records.push(record);
      itemOf.push(i + 1);
    }
  });
  return ingestAndReply(node, { records, errors, submitted, itemOf }, 'line');
}

function carbonRecord(node: FerriteNode, line: string, c: { account: AccountId; uuid: string; check: string; latestAllowed: number }): IngestRecord<MetricInfo> | string {
  const sample = parseCarbonLine(line, c.check);
  if (typeof sample === 'string') return sample;
  if (sample.ts > c.latestAllowed) return 'the timestamp is further in the future than the allowed clock skew';
  const resolved = node.registry.intern(c.account, c.uuid, c.check, sample.metricName);
  return resolved.ok ? { kind: 'numeric', metric: resolved.metric, ts: sample.ts, value: sample.value } : resolved.reason;
}

function scope(req: FastifyRequest): GraphiteScope {
  const p = req.params as { account: string; prefix?: string };
  const q = req.query as Query;
  return {
    account: accountOf(p.account),
    prefix: p.prefix ?? '',
    activityStart: optionalSeconds(q, 'activity_start_secs'),
    activityEnd: optionalSeconds(q, 'activity_end_secs'),
    limit: advisoryLimit(req, DEFAULT_LIMIT),
  };
}

function accountOf(raw: string): AccountId {
  const account = parseAccountId(raw);
  if (account === null) throw ferr('FER_ERR_BAD_PARAM', 'account_id', `'${raw}' is not a non-negative integer`);
  return account;
}

function required(q: Query, name: string): string {
  const v = q[name];
  if (v === undefined || v === '') throw ferr('FER_ERR_MISSING_PARAM', name);
  return v;
}

function optionalSeconds(q: Query, name: string): number | null {
  const v = q[name];
  if (v === undefined || v === '') return null;
  if (!/^\d+(\.\d+)?$/.test(v)) throw ferr('FER_ERR_BAD_PARAM', name, `'${v}' is not epoch seconds`);
  return Math.floor(Number(v));
}

async function graphiteQuery<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof GlobError || error instanceof TagExprError) throw ferr('FER_ERR_BAD_GRAPHITE_QUERY', error.message);
    throw error;
  }
}

/**
 * `start`/`end` epoch seconds (numbers or numeric strings) and an optional positive `step`;
 * without one, the finest rollup period that gives at most TARGET_POINTS points.
 */
function timeRange(node: FerriteNode, startRaw: unknown, endRaw: unknown, stepRaw: unknown): { start: number; end: number; step: number } {
  const start = seconds(startRaw, 'start');
  const end = seconds(endRaw, 'end');
  if (end <= start) throw ferr('FER_ERR_BAD_PARAM', 'end', `${end} is not after start ${start}`);
  const step = stepRaw !== undefined && stepRaw !== null && stepRaw !== '' ? seconds(stepRaw, 'step') : defaultStep(node, end - start);
  if (step <= 0) throw ferr('FER_ERR_BAD_PARAM', 'step', 'must be a positive number of seconds');
  // As /fetch: a series of millions of points takes minutes to build (issue 17's fuzzers: 0 to now at 60 s ran 147 s, then 500).
  const points = Math.ceil((end - start) / step);
  if (points > MAX_PERIODS) throw ferr('FER_ERR_BAD_PARAM', 'step', `${points} points per series exceeds the limit of ${MAX_PERIODS}; ask for a larger step or a shorter range`);
  return { start, end, step };
}

function defaultStep(node: FerriteNode, rangeS: number): number {
  const periods = node.config.rollups.map((l) => l.period);
  return periods.find((p) => rangeS / p <= TARGET_POINTS) ?? periods[periods.length - 1]!;
}

function seconds(raw: unknown, name: string): number {
  if (raw === undefined || raw === null || raw === '') throw ferr('FER_ERR_MISSING_PARAM', name);
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > MAX_EPOCH_S) throw ferr('FER_ERR_BAD_PARAM', name, `${JSON.stringify(raw)} is not epoch seconds (0 to ${MAX_EPOCH_S})`);
  return Math.floor(n);
}

function jsonBody(text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw ferr('FER_ERR_BAD_BODY', `the body is not JSON: ${(error as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw ferr('FER_ERR_BAD_BODY', 'the body must be {"start", "end", "names": [...], "step"?}');
  return doc as Record<string, unknown>;
}

/** Names as strings (gosnowth, the docs) or graphite-irondb's `{leaf_name, leaf_data}`. */
function seriesNames(raw: unknown): SeriesName[] {
  if (!Array.isArray(raw)) throw ferr('FER_ERR_BAD_BODY', "'names' must be an array");
  return raw.map((n, i) => {
    if (typeof n === 'string' && n.length > 0) return n;
    const o = n as { leaf_name?: unknown; leaf_data?: { uuid?: unknown; name?: unknown; metric_name?: unknown } } | null;
    const data = o?.leaf_data;
    const name = data?.name ?? data?.metric_name;
    if (typeof o?.leaf_name === 'string' && typeof data?.uuid === 'string' && normalizeUuid(data.uuid) !== null && typeof name === 'string') {
      return { leaf_name: o.leaf_name, leaf_data: { uuid: normalizeUuid(data.uuid)!, name } };
    }
    throw ferr('FER_ERR_BAD_BODY', `names[${i}] must be a name or {"leaf_name", "leaf_data": {"uuid", "name"}}`);
  });
}

function wants(req: FastifyRequest, type: string): boolean {
  return (req.headers.accept ?? '').toLowerCase().includes(type);
}

function sendFind(req: FastifyRequest, reply: FastifyReply, results: FindResult[]): FastifyReply {
  if (wants(req, FIND_RESULT_TYPE)) return reply.type(FIND_RESULT_TYPE).send(Buffer.from(encodeFindResults(results)));
  const json = results.map((r) => (r.leaf_data === undefined ? r : { ...r, leaf_data: { ...r.leaf_data, metric_name: r.leaf_data.name } }));
  return sendJson(reply, json);
}

function sendSeries(req: FastifyRequest, reply: FastifyReply, result: GetResult): FastifyReply {
  if (wants(req, GET_RESULT_TYPE)) return reply.type(GET_RESULT_TYPE).send(Buffer.from(encodeGetResult(result)));
  return sendJson(reply, result);
}

/** Bytes, so Fastify adds no `; charset=utf-8` to the type graphite-irondb compares exactly. */
function sendJson(reply: FastifyReply, doc: unknown): FastifyReply {
  return reply.header('content-type', 'application/json').send(Buffer.from(JSON.stringify(doc)));
}
