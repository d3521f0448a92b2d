// The DELETE endpoints (interface §2.3, §3, §4.1; IRONdb's data-deletion docs): single
// metric, pattern, tag query and check deletes of raw, numeric rollup (`/nnt`), text and
// histogram data, and full deletes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkQueryText, deleteSelected, select, selectPattern, storedElsewhere, type DataDelete, type DeleteAction, type Selection } from '../actors/coordinators/delete.js';
import { parseQuery } from '../actors/coordinators/find.js';
import type { FerriteNode } from '../actors/node/node.js';
import { deleteProblem, DeleteProblem, type DeleteTarget } from '../model/delete.js';
import { ferr } from '../model/errors.js';
import { globTest } from '../model/tag-query/index.js';
import type { AccountId } from '../model/types.js';
import { accountHeader, svcHeader } from './headers.js';
import { advisoryLimit } from './request.js';
import { metricFromPath } from './metric-param.js';
import { fields, metricPath, str, svcHeaders, TAG, uuidParam } from './schemas.js';

/** Path word → what it deletes (`raw` is raw numeric samples, `nnt` numeric rollups). */
const TARGETS = { raw: 'numeric', nnt: 'nnt', text: 'text', histogram: 'histogram' } as const satisfies Record<string, DeleteTarget>;
type PathWord = keyof typeof TARGETS;
/** The full tag-query delete's default advisory limit. */
const FULL_DELETE_LIMIT = 100_000;

const deleteHeaders = fields(
  svcHeaders({
    'account-id': 'account id (required by the tag, pattern and check forms)',
    'delete-time': 'epoch seconds: data stamped before this is deleted (required by the raw, nnt, text and histogram forms)',
    'confirm-delete': '1: delete; otherwise only report what matches',
    'delete-rollups': 'nnt and histogram: only these rollup periods, comma-separated seconds',
    'full-delete': 'nnt/text/histogram single metric: 1 also journals the delete to its other owners',
    'advisory-limit': 'most metrics acted on; -1 or none for no limit',
  }),
);
const tagQueryParam = fields({ query: str('tag query selecting the metrics') }, ['query']);
const checkPath = fields({ uuid: uuidParam }, ['uuid']);

function deleteSchema(summary: string, parts: { params?: object; querystring?: object }) {
  return { tags: [TAG.delete], summary, headers: deleteHeaders, ...parts };
}

const WHAT: Record<PathWord, string> = { raw: 'raw numeric', nnt: 'numeric rollup', text: 'text', histogram: 'histogram' };

export async function deleteRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  for (const word of Object.keys(TARGETS) as PathWord[]) {
    const target = TARGETS[word];
    /** A multi-metric delete reports an argument problem per metric (interface §4.1 rule 2). */
    const action = (req: FastifyRequest): DeleteAction => {
      const act = dataDelete(node, req, target);
      return act instanceof DeleteProblem ? { kind: target, problem: act } : act;
    };
    app.delete(`/${word}/tags`, { schema: deleteSchema(`Delete the ${WHAT[word]} data of metrics matching a tag query`, { querystring: tagQueryParam }) }, async (req, reply) => {
      const act = action(req);
      const account = requiredAccount(req);
      const query = tagQueryText(req);
      const selection = await select(node, account, query, advisoryLimit(req, null));
      return sendResults(reply, selection, await deleteSelected(node, selection, act, await storedElsewhere(node, account, query, selection)));
    });
    const single = deleteSchema(`Delete the ${WHAT[word]} data of one metric, or of the check's metrics matching a \`*\` pattern`, { params: metricPath });
    app.delete(`/${word}/:uuid/*`, { schema: single }, async (req, reply) => {
      const { uuid, '*': name } = req.params as { uuid: string; '*': string };
      if (!name.includes('*')) return reply.send(await deleteOneMetric(node, req, word, uuid, name));
      const act = action(req);
      const account = requiredAccount(req);
      const selection = await selectPattern(node, account, uuid, name, advisoryLimit(req, null));
      const elsewhere = (await storedElsewhere(node, account, checkQueryText(uuid), selection)).filter((r) => globTest(name)(r.metric_name));
      return sendResults(reply, selection, await deleteSelected(node, selection, act, elsewhere));
    });
    if (word === 'raw') continue;
    app.delete(`/${word}/:uuid`, { schema: deleteSchema(`Delete the ${WHAT[word]} data of every metric of a check`, { params: checkPath }) }, async (req, reply) => {
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
    const account = requiredAccount(req);
    const query = tagQueryText(req);
    const selection = await select(node, account, query, advisoryLimit(req, FULL_DELETE_LIMIT));
    return sendResults(reply, selection, await deleteSelected(node, selection, { kind: null, confirm: confirmed(req) }, await storedElsewhere(node, account, query, selection)));
  });
}

/**
 * `DELETE /<word>/<uuid>/<metric>`: `[]` on success, an error object otherwise (interface
 * §4.1 rule 1). A node that does not own the metric answers 421 naming its owners, unless
 * x-svc-full-delete: 1 journals the delete to them (nnt, text, histogram).
 */
async function deleteOneMetric(node: FerriteNode, req: FastifyRequest, word: PathWord, uuid: string, name: string): Promise<[]> {
  const act = dataDelete(node, req, TARGETS[word]);
  if (act instanceof DeleteProblem) throw act.error;
  const everywhere = word !== 'raw' && fullDeleteFlag(req);
  const metric = metricFromPath(node, uuid, name);
  if (everywhere) await node.journalDelete(metric, act.kind, act.before, act.periods);
  if (!node.routing.owns(metric)) {
    if (everywhere) return [];
    throw ferr('FER_ERR_NOT_LOCAL', metric.name.canonical, node.routing.ownersOf(metric).map((o) => o.id).join(', '));
  }
  if (!(await node.knows(metric))) throw ferr('FER_ERR_METRIC_NOT_FOUND', metric.name.canonical);
  await node.deleteData(metric, act.kind, act.before, true, act.periods);
  return [];
}

/** The request's data delete, or the argument problem that makes it impossible. */
function dataDelete(node: FerriteNode, req: FastifyRequest, target: DeleteTarget): DataDelete | DeleteProblem {
  const before = deleteTime(req);
  if (before instanceof DeleteProblem) return before;
  const periods = deleteRollups(node, req, target);
  if (periods instanceof DeleteProblem) return periods;
  return { kind: target, before, confirm: confirmed(req), periods };
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
function deleteTime(req: FastifyRequest): number | DeleteProblem {
  const raw = svcHeader(req, 'delete-time')?.trim();
  if (raw === undefined || raw === '') return deleteProblem('bad request', 'FER_ERR_MISSING_HEADER', 'x-svc-delete-time');
  if (!/^\d+$/.test(raw)) return deleteProblem('bad request', 'FER_ERR_BAD_HEADER', 'x-svc-delete-time', `'${raw}' is not epoch seconds`);
  if (!Number.isSafeInteger(Number(raw) * 1000)) return deleteProblem('invalid range', 'FER_ERR_BAD_HEADER', 'x-svc-delete-time', `${raw} is past the largest time ferrite stores`);
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

/**
 * `x-svc-delete-rollups`: comma-separated periods (seconds) of the target's rollup levels
 * (numeric for nnt, histogram for histogram); default all. Raw and text data have no levels:
 * a level-restricted delete of them is `not implemented`.
 */
function deleteRollups(node: FerriteNode, req: FastifyRequest, target: DeleteTarget): number[] | null | DeleteProblem {
  const raw = svcHeader(req, 'delete-rollups')?.trim();
  if (raw === undefined || raw === '') return null;
  if (target !== 'nnt' && target !== 'histogram') return deleteProblem('not implemented', 'FER_ERR_NOT_IMPLEMENTED', `x-svc-delete-rollups on a ${target === 'numeric' ? 'raw' : target} delete: only numeric rollups (/nnt) and histograms have rollup levels`);
  const known = (target === 'nnt' ? node.config.rollups : node.config.histogramRollups).map((l) => l.period);
  const periods: number[] = [];
  for (const part of raw.split(',').map((p) => p.trim())) {
    if (!/^\d{1,9}$/.test(part)) return deleteProblem('bad request', 'FER_ERR_BAD_HEADER', 'x-svc-delete-rollups', `'${part}' is not a number of seconds`);
    if (!known.includes(Number(part))) return deleteProblem('invalid range', 'FER_ERR_BAD_HEADER', 'x-svc-delete-rollups', `${part} is not a ${target === 'nnt' ? 'numeric' : 'histogram'} rollup period (${known.join(', ')})`);
    periods.push(Number(part));
  }
  return periods;
}
