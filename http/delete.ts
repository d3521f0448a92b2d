// The thirteen DELETE endpoints (interface §2.3, §3, §4.1): single metric, pattern, tag
// query and check deletes of raw, text and histogram data, and full deletes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { searchMetrics, type Found } from '../actors/shard/search.js';
import type { MetricInfo } from '../actors/metric-info.js';
import type { DeleteOutcome } from '../actors/shard/messages.js';
import type { FerriteNode } from '../actors/node/node.js';
import { normalizeUuid } from '../model/check-field.js';
import { ferr } from '../model/errors.js';
import type { DataKind } from '../model/ingest-record.js';
import { globTest, parseTagQuery, type TagQuery } from '../model/tag-query/index.js';
import type { AccountId } from '../model/types.js';
import { advisoryLimit, tagQuery } from './find.js';
import { find } from '../actors/coordinators/find.js';
import { accountHeader, svcHeader } from './headers.js';
import { metricFromPath } from './metric-param.js';
import { fields, metricPath, str, svcHeaders, TAG, uuidParam } from './schemas.js';

/** Path word → data kind. */
const KINDS = { raw: 'numeric', text: 'text', histogram: 'histogram' } as const satisfies Record<string, DataKind>;
type PathKind = keyof typeof KINDS;
/** The full tag-query delete's default advisory limit. */
const FULL_DELETE_LIMIT = 100_000;

interface DeleteResult {
  metric_name: string;
  /** `not local`: only other nodes store the metric (deletes act on the receiving node). */
  delete_result: DeleteOutcome | 'not local';
  payload: string;
}

type Query = Record<string, string | undefined>;
type Selection = { found: Found[]; incomplete: boolean };

const deleteHeaders = fields(
  svcHeaders({
    'account-id': 'account id (required by the tag, pattern and check forms)',
    'delete-time': 'epoch seconds: data stamped before this is deleted (required by the raw, text and histogram forms)',
    'confirm-delete': '1: delete; otherwise only report what matches',
    'delete-rollups': 'histograms: only these rollup periods, comma-separated seconds',
    'full-delete': 'text/histogram single metric: 1 also journals the delete to its other owners',
    'advisory-limit': 'most metrics acted on; -1 or none for no limit',
  }),
);
const tagQueryParam = fields({ query: str('tag query selecting the metrics') }, ['query']);
const checkPath = fields({ uuid: uuidParam }, ['uuid']);

function deleteSchema(summary: string, parts: { params?: object; querystring?: object }) {
  return { tags: [TAG.delete], summary, headers: deleteHeaders, ...parts };
}

export async function deleteRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  for (const word of Object.keys(KINDS) as PathKind[]) {
    const kind = KINDS[word];
    app.delete(`/${word}/tags`, { schema: deleteSchema(`Delete the ${kind} data of metrics matching a tag query`, { querystring: tagQueryParam }) }, async (req, reply) => {
      const before = deleteTime(req);
      const periods = deleteRollups(node, req, kind);
      const account = requiredAccount(req);
      const text = (req.query as Query).query;
      const selection = await select(node, account, tagQuery(text), advisoryLimit(req, null));
      const elsewhere = await storedElsewhere(node, account, text!, selection);
      return sendResults(reply, selection, (m) => node.partitions.deleteData(m, kind, before, confirmed(req), periods), kind, elsewhere);
    });
    const single = deleteSchema(`Delete the ${kind} data of one metric, or of the check's metrics matching a \`*\` pattern`, { params: metricPath });
    app.delete(`/${word}/:uuid/*`, { schema: single }, async (req, reply) => {
      const { uuid, '*': name } = req.params as { uuid: string; '*': string };
      const before = deleteTime(req);
      const periods = deleteRollups(node, req, kind);
      const everywhere = word !== 'raw' && fullDeleteFlag(req);
      if (!name.includes('*')) {
        const metric = metricFromPath(node, uuid, name);
        if (everywhere) await node.journalDelete(metric, kind, before, periods);
        if (!node.routing.owns(metric)) {
          if (everywhere) return reply.send([]);
          return reply.send([{ metric_name: metric.name.canonical, delete_result: 'not local', payload: '' }]);
        }
        if (!(await node.knows(metric))) throw ferr('FER_ERR_METRIC_NOT_FOUND', metric.name.canonical);
        await node.partitions.deleteData(metric, kind, before, true, periods);
        return reply.send([]);
      }
      const account = requiredAccount(req);
      const selection = await selectPattern(node, account, uuid, name, advisoryLimit(req, null));
      const elsewhere = (await storedElsewhere(node, account, checkQueryText(uuid), selection)).filter((r) => globTest(name)(r.metric_name));
      return sendResults(reply, selection, (m) => node.partitions.deleteData(m, kind, before, confirmed(req), periods), kind, elsewhere);
    });
    if (word === 'raw') continue;
    app.delete(`/${word}/:uuid`, { schema: deleteSchema(`Delete the ${kind} data of every metric of a check`, { params: checkPath }) }, async (req, reply) => {
      const before = deleteTime(req);
      const periods = deleteRollups(node, req, kind);
      const account = requiredAccount(req);
      const uuid = (req.params as { uuid: string }).uuid;
      const selection = await select(node, account, checkQuery(uuid), null);
      const elsewhere = await storedElsewhere(node, account, checkQueryText(uuid), selection);
      return sendResults(reply, selection, (m) => node.partitions.deleteData(m, kind, before, confirmed(req), periods), kind, elsewhere);
    });
  }

  app.delete('/full/canonical/:uuid/*', { schema: deleteSchema('Delete one metric entirely: every data type, rollup and index record', { params: metricPath }) }, async (req, reply) => {
    const { uuid, '*': name } = req.params as { uuid: string; '*': string };
    requiredAccount(req);
    const metric = metricFromPath(node, uuid, name);
    if (!(await node.knows(metric))) return reply.status(404).send({ status: 'not found', error: `metric ${metric.name.canonical} not found` });
    await node.fullDelete(metric, true);
    return reply.send({ status: 'succeeded' });
  });

  app.delete('/full/tags', { schema: deleteSchema('Delete the metrics matching a tag query entirely', { querystring: tagQueryParam }) }, async (req, reply) => {
    const selection = await select(node, requiredAccount(req), tagQuery((req.query as Query).query), advisoryLimit(req, FULL_DELETE_LIMIT));
    return sendResults(reply, selection, (m) => node.fullDelete(m, confirmed(req)), null);
  });
}

async function sendResults(
  reply: FastifyReply,
  selection: Selection,
  act: (m: MetricInfo) => Promise<DeleteOutcome>,
  kind: DataKind | null,
  elsewhere: Elsewhere[] = [],
): Promise<FastifyReply> {
  const results: DeleteResult[] = [];
  for (const f of selection.found) {
    if (kind !== null && !f.types.includes(kind)) continue;
    results.push({ metric_name: f.record.metric_name, delete_result: await act(f.metric), payload: '' });
  }
  for (const e of elsewhere) {
    if (kind === null || e.types.includes(kind)) results.push({ metric_name: e.metric_name, delete_result: 'not local', payload: '' });
  }
  void reply.header('x-svc-incomplete-results', String(selection.incomplete)).header('x-snowth-incomplete-results', String(selection.incomplete));
  return reply.send(results);
}

/** A matching metric that other nodes store and this one does not. */
interface Elsewhere {
  metric_name: string;
  types: string[];
}

/**
 * In a cluster, the metrics matching the query that only other nodes store: a delete
 * reports them `not local` (it acts on the receiving node only, interface §2.3).
 */
async function storedElsewhere(node: FerriteNode, account: AccountId, query: string, here: Selection): Promise<Elsewhere[]> {
  if (node.rpc === null) return [];
  const local = new Set(here.found.map((f) => `${f.record.uuid}\u0000${f.record.metric_name}`));
  const answer = await find(node, { kind: 'tags', account, query, activityStart: null, activityEnd: null, limit: null, activity: false, latest: 0, down: [], verifyOwner: false }, false);
  return answer.rows
    .filter((r) => !local.has(`${r.uuid}\u0000${r.name}`))
    .map((r) => ({ metric_name: r.name, types: r.types }));
}

/** Matches up to `limit` metrics (null = all), saying whether the limit cut the list short. */
async function select(node: FerriteNode, account: AccountId, query: TagQuery, limit: number | null): Promise<Selection> {
  const found = await searchMetrics(node, { account, query, activityStart: null, activityEnd: null, limit: limit === null ? null : limit + 1 });
  const incomplete = limit !== null && found.length > limit;
  return { found: incomplete ? found.slice(0, limit!) : found, incomplete };
}

/** Metrics of the check whose canonical name matches a `*` wildcard pattern. */
async function selectPattern(node: FerriteNode, account: AccountId, uuid: string, pattern: string, limit: number | null): Promise<Selection> {
  const matchesPattern = globTest(pattern);
  const all = await select(node, account, checkQuery(uuid), null);
  const found = all.found.filter((f) => matchesPattern(f.record.metric_name));
  const incomplete = limit !== null && found.length > limit;
  return { found: incomplete ? found.slice(0, limit!) : found, incomplete };
}


function checkQueryText(uuidParam: string): string {
  const uuid = normalizeUuid(uuidParam);
  if (uuid === null) throw ferr('FER_ERR_BAD_UUID', `'${uuidParam}'`);
  return `and(__check_uuid:${uuid})`;
}

function checkQuery(uuidParam: string): TagQuery {
  return parseTagQuery(checkQueryText(uuidParam));
}


function requiredAccount(req: FastifyRequest): AccountId {
  const account = accountHeader(req);
  if (account === null) throw ferr('FER_ERR_MISSING_HEADER', 'x-svc-account-id');
  return account;
}

/** `x-svc-delete-time`: required epoch seconds; returned in ms. */
function deleteTime(req: FastifyRequest): number {
  const raw = svcHeader(req, 'delete-time')?.trim();
  if (raw === undefined || raw === '') throw ferr('FER_ERR_MISSING_HEADER', 'x-svc-delete-time');
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw) * 1000)) throw ferr('FER_ERR_BAD_HEADER', 'x-svc-delete-time', `'${raw}' is not epoch seconds`);
  return Number(raw) * 1000;
}

function confirmed(req: FastifyRequest): boolean {
  return svcHeader(req, 'confirm-delete')?.trim() === '1';
}

/** `x-svc-full-delete`: 0 (this node only) or 1 (journaled to every owner as well). */
function fullDeleteFlag(req: FastifyRequest): boolean {
  const raw = svcHeader(req, 'full-delete')?.trim();
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw ferr('FER_ERR_BAD_HEADER', 'x-svc-full-delete', `'${raw}' must be 0 or 1`);
}

/** `x-svc-delete-rollups`: configured histogram periods (seconds), comma-separated; default all. */
function deleteRollups(node: FerriteNode, req: FastifyRequest, kind: DataKind): number[] | null {
  const raw = svcHeader(req, 'delete-rollups')?.trim();
  if (raw === undefined || raw === '' || kind !== 'histogram') return null;
  const known = node.config.histogramRollups.map((l) => l.period);
  return raw.split(',').map((part) => {
    const p = Number(part.trim());
    if (!known.includes(p)) throw ferr('FER_ERR_BAD_HEADER', 'x-svc-delete-rollups', `'${part.trim()}' is not a histogram rollup period (${known.join(', ')})`);
    return p;
  });
}
