// The thirteen DELETE endpoints (interface §2.3, §3, §4.1): single metric, pattern, tag
// query and check deletes of raw, text and histogram data, and full deletes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkQueryText, deleteSelected, select, selectPattern, storedElsewhere, type DataDelete, type Selection } from '../actors/coordinators/delete.js';
import { parseQuery } from '../actors/coordinators/find.js';
import type { FerriteNode } from '../actors/node/node.js';
import { ferr } from '../model/errors.js';
import type { DataKind } from '../model/ingest-record.js';
import { globTest } from '../model/tag-query/index.js';
import type { AccountId } from '../model/types.js';
import { accountHeader, svcHeader } from './headers.js';
import { advisoryLimit } from './request.js';
import { metricFromPath } from './metric-param.js';
import { fields, metricPath, str, svcHeaders, TAG, uuidParam } from './schemas.js';

/** Path word → data kind. */
const KINDS = { raw: 'numeric', text: 'text', histogram: 'histogram' } as const satisfies Record<string, DataKind>;
type PathKind = keyof typeof KINDS;
/** The full tag-query delete's default advisory limit. */
const FULL_DELETE_LIMIT = 100_000;

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
    const action = (req: FastifyRequest): DataDelete => ({ kind, before: deleteTime(req), confirm: confirmed(req), periods: deleteRollups(node, req, kind) });
    app.delete(`/${word}/tags`, { schema: deleteSchema(`Delete the ${kind} data of metrics matching a tag query`, { querystring: tagQueryParam }) }, async (req, reply) => {
      const act = action(req);
      const account = requiredAccount(req);
      const query = tagQueryText(req);
      const selection = await select(node, account, query, advisoryLimit(req, null));
      return sendResults(reply, selection, await deleteSelected(node, selection, act, await storedElsewhere(node, account, query, selection)));
    });
    const single = deleteSchema(`Delete the ${kind} data of one metric, or of the check's metrics matching a \`*\` pattern`, { params: metricPath });
    app.delete(`/${word}/:uuid/*`, { schema: single }, async (req, reply) => {
      const { uuid, '*': name } = req.params as { uuid: string; '*': string };
      const act = action(req);
      const everywhere = word !== 'raw' && fullDeleteFlag(req);
      if (!name.includes('*')) {
        const metric = metricFromPath(node, uuid, name);
        if (everywhere) await node.journalDelete(metric, kind, act.before, act.periods);
        if (!node.routing.owns(metric)) {
          if (everywhere) return reply.send([]);
          return reply.send([{ metric_name: metric.name.canonical, delete_result: 'not local', payload: '' }]);
        }
        if (!(await node.knows(metric))) throw ferr('FER_ERR_METRIC_NOT_FOUND', metric.name.canonical);
        await node.deleteData(metric, kind, act.before, true, act.periods);
        return reply.send([]);
      }
      const account = requiredAccount(req);
      const selection = await selectPattern(node, account, uuid, name, advisoryLimit(req, null));
      const elsewhere = (await storedElsewhere(node, account, checkQueryText(uuid), selection)).filter((r) => globTest(name)(r.metric_name));
      return sendResults(reply, selection, await deleteSelected(node, selection, act, elsewhere));
    });
    if (word === 'raw') continue;
    app.delete(`/${word}/:uuid`, { schema: deleteSchema(`Delete the ${kind} data of every metric of a check`, { params: checkPath }) }, async (req, reply) => {
      const act = action(req);
      const account = requiredAccount(req);
      const query = checkQueryText((req.params as { uuid: string }).uuid);
      const selection = await select(node, account, query, null);
      return sendResults(reply, selection, await deleteSelected(node, selection, act, await storedElsewhere(node, account, query, selection)));
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
    const selection = await select(node, requiredAccount(req), tagQueryText(req), advisoryLimit(req, FULL_DELETE_LIMIT));
    return sendResults(reply, selection, await deleteSelected(node, selection, { kind: null, confirm: confirmed(req) }));
  });
}

function sendResults(reply: FastifyReply, selection: Selection, results: unknown[]): FastifyReply {
  void reply.header('x-svc-incomplete-results', String(selection.incomplete)).header('x-snowth-incomplete-results', String(selection.incomplete));
  return reply.send(results);
}

/** The `query` parameter, validated as a tag query (400 naming the problem). */
function tagQueryText(req: FastifyRequest): string {
  const text = (req.query as Record<string, string | undefined>).query;
  parseQuery(text);
  return text!;
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
