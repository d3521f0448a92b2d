// Tag search (interface §4.2): `/find/<account>/tags|tag_cats|tag_vals`, and the
// header forms `/find/tags|tag_cats|tag_vals` with x-svc-account-id.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_FIND_LIMIT, find, parseQuery, type FindAnswer, type FindKind, type FindRequest } from '../actors/coordinators/find.js';
import type { FerriteNode } from '../actors/node/node.js';
import { parseAccountId } from '../model/check-field.js';
import { ferr } from '../model/errors.js';
import { ACTIVITY_SLICE_S } from '../model/activity.js';
import { MAX_PERIODS } from '../model/fetch/request.js';
import { parseRelativeTime } from '../model/relative-time.js';
import type { AccountId } from '../model/types.js';
import { accountHeader, requestDeadline, svcHeader } from './headers.js';
import { advisoryLimit } from './request.js';
import { accountHeaders, fields, str, svcHeaders, TAG } from './schemas.js';

type Query = Record<string, string | undefined>;

/** active_count without a query counts every metric of the account. */
const EVERY_METRIC = 'and(__name:*)';
/** active_count without activity_start_secs looks back a day (IRONdb's docs give no default). */
const ACTIVE_COUNT_LOOKBACK_S = 86_400;

const flagParam = (description: string, max: number) => str(description, { enum: ['', ...Array.from({ length: max + 1 }, (_, i) => String(i))] });
const searchQuery = {
  query: str('tag query (docs/tag-query.md), e.g. `and(__name:cpu*,host:web*)`'),
  activity_start_secs: str('only metrics active after this: epoch seconds or a relative time such as now-1h'),
  activity_end_secs: str('only metrics active before this: epoch seconds or a relative time'),
  explain: flagParam('1: an x-svc-find-<node> (and x-snowth-find-<node>) header per node with the query as it parsed it', 1),
};
const searchHeaders = {
  ...accountHeaders,
  ...svcHeaders({
    'advisory-limit': 'most results (default 10000); -1 or none for no limit',
    proxied: '1: answer from this node alone',
    'verify-owner': 'true: only metrics this node owns',
  }),
};

/** The path forms carry the account; the header forms take it from x-svc-account-id. */
function searchSchema(prefix: string, summary: string, extra: Record<string, Record<string, unknown>>) {
  return {
    tags: [TAG.search],
    summary,
    ...(prefix.includes(':account') ? { params: fields({ account: str('account id') }, ['account']) } : {}),
    querystring: fields({ ...searchQuery, ...extra }, ['query']),
    headers: fields(searchHeaders),
  };
}

export async function findRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  for (const prefix of ['/find/:account', '/find']) {
    const tagsQuery = {
      count_only: flagParam('1: only {count, estimate}', 1),
      activity: flagParam('0: leave activity windows out of the records (default 1)', 1),
      latest: flagParam('1: include the latest values when tracked; 2: also start tracking them', 2),
    };
    const tags = { schema: searchSchema(prefix, 'Metrics matching a tag query: [{uuid, check_name, metric_name, category, type, account_id, activity?, latest?}]', tagsQuery) };
    const cats = { schema: searchSchema(prefix, 'Tag categories of the matching metrics', {}) };
    const vals = { schema: searchSchema(prefix, 'Tag values of the matching metrics', { category: str('only values of this category') }) };
    app.get(`${prefix}/tags`, tags, async (req, reply) => {
      const countOnly = flag(req.query as Query, 'count_only', 0, 1) === 1;
      const answer = await answerFor(node, req, countOnly ? 'count' : 'tags', reply);
      if (countOnly) return reply.send({ count: answer.count, estimate: answer.unanswered.length > 0 });
      // The total number of matches, also when the advisory limit cut the rows (gosnowth reads it
      // as the count); an estimate when a node did not answer.
      const estimate = String(answer.unanswered.length > 0);
      for (const prefix of ['x-svc-', 'x-snowth-']) {
        void reply.header(`${prefix}search-result-count`, String(answer.count)).header(`${prefix}search-result-count-is-estimate`, estimate);
      }
      const body = answer.body === undefined ? `[${answer.rows.map((r) => r.json).join(',')}]` : Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
      return reply.type('application/json').send(body);
    });
    app.get(`${prefix}/tag_cats`, cats, async (req, reply) => reply.send((await answerFor(node, req, 'tag_cats', reply)).values));
    app.get(`${prefix}/tag_vals`, vals, async (req, reply) => reply.send((await answerFor(node, req, 'tag_vals', reply)).values));
    const active = { schema: { ...searchSchema(prefix, 'Active metrics per 5-minute slice: {account_id, activity_start, estimate, period_counts}', {}), querystring: fields(searchQuery) } };
    app.get(`${prefix}/active_count`, active, async (req, reply) => {
      const answer = await answerFor(node, req, 'active_count', reply);
      return reply.send({ account_id: answer.account, activity_start: answer.slices.first, estimate: answer.unanswered.length > 0, period_counts: answer.periodCounts ?? [] });
    });
  }
}

/**
 * active_count's slices (irondb-reference §2.6): 5-minute slices from activity_start_secs
 * rounded down to a slice boundary (so `activity_start` in the reply may be earlier than asked)
 * up to activity_end_secs (default now), at least one.
 */
function activeSlices(q: Query, now: number): { first: number; count: number } {
  const end = findTime(q, 'activity_end_secs', now) ?? now;
  const start = findTime(q, 'activity_start_secs', now) ?? end - ACTIVE_COUNT_LOOKBACK_S;
  if (start > end) throw ferr('FER_ERR_BAD_PARAM', 'activity_start_secs', `${start} is after activity_end_secs ${end}`);
  const first = start - (start % ACTIVITY_SLICE_S);
  const count = Math.max(1, Math.ceil((end - first) / ACTIVITY_SLICE_S));
  if (count > MAX_PERIODS) throw ferr('FER_ERR_BAD_PARAM', 'activity_start_secs', `${count} 5-minute slices exceeds the limit of ${MAX_PERIODS} per request`);
  return { first, count };
}

/**
 * Runs the search across the cluster; nodes that did not answer are named in a header, and
 * with explain=1 each node's reading of the query is in an x-svc-find-<node> header.
 */
async function answerFor(node: FerriteNode, req: FastifyRequest, kind: FindKind, reply: FastifyReply): Promise<FindAnswer & { account: AccountId; slices: { first: number; count: number } }> {
  const q = req.query as Query;
  const now = Math.floor(Date.now() / 1000);
  const query = kind === 'active_count' && (q.query === undefined || q.query.trim() === '') ? EVERY_METRIC : q.query;
  parseQuery(query); // a malformed query is a 400 here, before any node is asked
  const explain = flag(q, 'explain', 0, 1) === 1;
  // active_count counts the metrics active in its slices; the search keeps only those.
  const slices = kind === 'active_count' ? activeSlices(q, now) : { first: 0, count: 0 };
  const range = kind === 'active_count' ? { activityStart: slices.first, activityEnd: slices.first + slices.count * ACTIVITY_SLICE_S } : { activityStart: findTime(q, 'activity_start_secs', now), activityEnd: findTime(q, 'activity_end_secs', now) };
  const request: FindRequest = {
    kind,
    account: account(req),
    query: query!,
    ...range,
    limit: advisoryLimit(req, DEFAULT_FIND_LIMIT),
    activity: flag(q, 'activity', 1, 1) === 1,
    latest: flag(q, 'latest', 0, 2),
    down: [],
    verifyOwner: svcHeader(req, 'verify-owner')?.trim().toLowerCase() === 'true',
    deadline: requestDeadline(req),
    encode: kind === 'tags',
    ...(q.category === undefined ? {} : { category: q.category }),
    ...(kind === 'active_count' ? { slices } : {}),
    ...(explain ? { explain } : {}),
  };
  // x-svc-proxied: 1 (a peer, or a client that routes itself) asks this node alone.
  const answer = await find(node, request, svcHeader(req, 'proxied')?.trim() === '1');
  if (answer.unanswered.length > 0) void reply.header('x-svc-unanswered-nodes', answer.unanswered.join(','));
  // IRONdb's explain (irondb-reference §2.2): one X-Snowth-Find-<node> header per node asked.
  for (const [id, text] of answer.explained) for (const prefix of ['x-svc-find-', 'x-snowth-find-']) void reply.header(`${prefix}${id}`, explainHeader(text));
  return { ...answer, account: request.account, slices };
}

/**
 * Clients refuse response heads over 16 KiB (undici's default), and a query may take most of
 * a URL: a longer reading is cut, and says so.
 */
const MAX_EXPLAIN_CHARS = 6_000;
const explainHeader = (text: string): string => (text.length <= MAX_EXPLAIN_CHARS ? text : `${text.slice(0, MAX_EXPLAIN_CHARS)}... (${text.length} characters)`);

function account(req: FastifyRequest): AccountId {
  const raw = (req.params as { account?: string }).account;
  if (raw === undefined) {
    const fromHeader = accountHeader(req);
    if (fromHeader === null) throw ferr('FER_ERR_MISSING_HEADER', 'x-svc-account-id');
    return fromHeader;
  }
  const id = parseAccountId(raw);
  if (id === null) throw ferr('FER_ERR_BAD_PARAM', 'account_id', `'${raw}' is not a non-negative integer`);
  return id;
}

/** A `query` parameter as a tag query: 400 when missing or malformed. */

function findTime(q: Query, name: string, now: number): number | null {
  const raw = q[name];
  if (raw === undefined || raw === '') return null;
  const t = parseRelativeTime(raw, now);
  if (t === null) throw ferr('FER_ERR_BAD_PARAM', name, `'${raw}' is not epoch seconds or a relative time such as now-1h`);
  return t;
}

function flag(q: Query, name: string, fallback: number, max: number): number {
  const raw = q[name];
  if (raw === undefined || raw === '') return fallback;
  const n = /^\d$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 0 && n <= max)) throw ferr('FER_ERR_BAD_PARAM', name, `'${raw}' must be an integer from 0 to ${max}`);
  return n;
}
