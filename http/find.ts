// Tag search (interface §4.2): `/find/<account>/tags|tag_cats|tag_vals`, and the
// header forms `/find/tags|tag_cats|tag_vals` with x-svc-account-id.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { searchMetrics, type Found } from '../actors/metric-search.js';
import type { FerriteNode } from '../actors/node.js';
import { parseAccountId } from '../model/check-field.js';
import { ferr } from '../model/errors.js';
import { parseRelativeTime } from '../model/relative-time.js';
import { parseTagQuery, TagQueryError, type TagQuery } from '../model/tag-query/index.js';
import type { AccountId } from '../model/types.js';
import { accountHeader, svcHeader } from './headers.js';
import { numberJson } from './json-out.js';

/** IRONdb's default advisory limit for finds. */
const DEFAULT_FIND_LIMIT = 10_000;

type Query = Record<string, string | undefined>;

export async function findRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  for (const prefix of ['/find/:account', '/find']) {
    app.get(`${prefix}/tags`, async (req, reply) => {
      const q = req.query as Query;
      const found = await search(node, req);
      if (flag(q, 'count_only', 0, 1) === 1) return reply.send({ count: found.length, estimate: false });
      const activity = flag(q, 'activity', 1, 1) === 1;
      const latest = flag(q, 'latest', 0, 2);
      const rows = await Promise.all(found.map((f) => findRecord(node, f, activity, latest)));
      void reply.header('x-svc-search-result-count', String(found.length)).header('x-snowth-search-result-count', String(found.length));
      return reply.type('application/json').send(`[${rows.join(',')}]`);
    });
    app.get(`${prefix}/tag_cats`, async (req, reply) => {
      const cats = new Set<string>();
      for (const f of await search(node, req)) for (const t of f.metric.name.tags) cats.add(t.category);
      return reply.send([...cats].sort());
    });
    app.get(`${prefix}/tag_vals`, async (req, reply) => {
      const category = (req.query as Query).category;
      const vals = new Set<string>();
      for (const f of await search(node, req)) {
        if (category === '__name') vals.add(f.metric.name.name);
        for (const t of f.metric.name.tags) if ((category === undefined || t.category === category) && t.value !== null) vals.add(t.value);
      }
      return reply.send([...vals].sort());
    });
  }
}

async function search(node: FerriteNode, req: FastifyRequest): Promise<Found[]> {
  const q = req.query as Query;
  const now = Math.floor(Date.now() / 1000);
  return searchMetrics(node, {
    account: account(req),
    query: tagQuery(q.query),
    activityStart: findTime(q, 'activity_start_secs', now),
    activityEnd: findTime(q, 'activity_end_secs', now),
    limit: advisoryLimit(req, DEFAULT_FIND_LIMIT),
  });
}

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

export function tagQuery(raw: string | undefined): TagQuery {
  if (raw === undefined || raw.trim() === '') throw ferr('FER_ERR_MISSING_PARAM', 'query');
  try {
    return parseTagQuery(raw);
  } catch (error) {
    if (error instanceof TagQueryError) throw ferr('FER_ERR_BAD_QUERY', (error as Error).message);
    throw error;
  }
}

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

/** `x-svc-advisory-limit`: a positive integer; unset, -1 or `none` means `fallback` (null = no limit). */
export function advisoryLimit(req: FastifyRequest, fallback: number | null): number | null {
  const raw = svcHeader(req, 'advisory-limit')?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (raw === '-1' || raw.toLowerCase() === 'none') return null;
  if (!/^\d+$/.test(raw) || Number(raw) === 0) throw ferr('FER_ERR_BAD_HEADER', 'x-svc-advisory-limit', `'${raw}' must be a positive integer, -1 or none`);
  return Number(raw);
}

/** One search result record (interface §2.4) as JSON text (latest numeric values may be exact bigints). */
async function findRecord(node: FerriteNode, f: Found, activity: boolean, latest: number): Promise<string> {
  const head: Record<string, unknown> = {
    uuid: f.record.uuid,
    check_name: f.record.check_name,
    metric_name: f.record.metric_name,
    category: 'reconnoiter',
    type: f.types.join(','),
    account_id: f.record.account_id,
  };
  if (activity) head.activity = f.activity;
  const json = JSON.stringify(head);
  if (latest === 0) return json;
  return `${json.slice(0, -1)},"latest":${await latestJson(node, f, latest)}}`;
}

async function latestJson(node: FerriteNode, f: Found, latest: number): Promise<string> {
  const tracked = await node.latestTracked(f.metric);
  if (latest === 1 && !tracked) return '{}';
  if (latest === 2 && !tracked) await node.trackLatest(f.metric);
  const values = await node.latest(f.metric, f.types as ('numeric' | 'text' | 'histogram')[]);
  const parts = Object.entries(values).map(([kind, rows]) => {
    const cells = rows!.map(([ts, v]) => `[${ts},${typeof v === 'string' ? JSON.stringify(v) : numberJson(v)}]`);
    return `${JSON.stringify(kind)}:[${cells.join(',')}]`;
  });
  return `{${parts.join(',')}}`;
}
