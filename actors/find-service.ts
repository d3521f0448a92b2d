// Tag search as a cluster answers it (DESIGN.md "The cluster"): the receiving node asks
// every node over NATS and merges. So that replicas are neither lost nor counted twice,
// each node answers for the metrics whose first owner not presumed down (by the asker's
// gossip) is itself. A node that does not answer is named, and counts become estimates.
// Nodes presumed down are not asked at all: their metrics are answered by their next owner,
// and they could answer for none, so waiting for them would only delay the reply.
import { ferr } from '../model/errors.js';
import { parseTagQuery, TagQueryError, type TagQuery } from '../model/tag-query/index.js';
import type { AccountId } from '../model/types.js';
import { numberJson } from '../model/json-out.js';
import { checkTagOf } from '../model/check-tags.js';
import type { StreamTag } from '../model/metric-name.js';
import { searchAndCount, type Found } from './metric-search.js';
import type { MetricInfo } from './metric-info.js';
import type { FerriteNode } from './node.js';

/** IRONdb's default advisory limit for finds. */
export const DEFAULT_FIND_LIMIT = 10_000;

export type FindKind = 'tags' | 'tag_cats' | 'tag_vals' | 'count';

export interface FindRequest {
  kind: FindKind;
  account: AccountId;
  /** The tag query as sent (each node parses it). */
  query: string;
  activityStart: number | null;
  activityEnd: number | null;
  limit: number | null;
  activity: boolean;
  latest: number;
  /** tag_vals: the category whose values are wanted (absent: every category). */
  category?: string;
  /** Nodes the asker presumes down; their metrics are answered by their next owner. */
  down: string[];
  /** x-svc-verify-owner: results only for metrics the answering node owns. */
  verifyOwner: boolean;
  /** Epoch ms past which each node stops searching and answers what it found (null: none). */
  deadline?: number | null;
}

/** One search result: its record as JSON text (latest values may be exact bigints). */
export interface FindRow {
  uuid: string;
  name: string;
  /** Data types, as the record's `type` lists them. */
  types: string[];
  json: string;
}

export interface FindAnswer {
  rows: FindRow[];
  values: string[];
  count: number;
  /** Nodes that did not answer (their share may be missing), or ran out of time. */
  unanswered: string[];
}

type FindPart = Omit<FindAnswer, 'unanswered'> & { timedOut?: boolean };

/** The whole cluster's answer (this node's alone when standalone or `localOnly`). */
export async function find(node: FerriteNode, request: FindRequest, localOnly: boolean): Promise<FindAnswer> {
  const rpc = node.rpc;
  if (rpc === null || localOnly) {
    const part = await localFind(node, request, localOnly);
    return { ...merge([part], request.limit), unanswered: part.timedOut ? [node.identity] : [] };
  }
  const others = node.ring.topology.nodes.filter((n) => n.id !== node.identity);
  const down = others.filter((n) => !node.gossip.isAlive(n.id)).map((n) => n.id);
  const live = others.filter((n) => !down.includes(n.id));
  const asked = { ...request, down };
  const timeout = node.config.peerTimeoutMs;
  const parts = await Promise.allSettled([localFind(node, asked, false), ...live.map((p) => rpc.call<FindPart>(p.id, 'find', asked, timeout))]);
  if (parts[0]!.status === 'rejected') throw parts[0].reason;
  const incomplete = (p: PromiseSettledResult<FindPart>) => p.status === 'rejected' || p.value.timedOut === true;
  const missing = new Set([...[node.identity, ...live.map((p) => p.id)].filter((_, i) => incomplete(parts[i]!)), ...down]);
  const answered = parts.flatMap((p) => (p.status === 'fulfilled' ? [p.value] : []));
  return { ...merge(answered, request.limit), unanswered: node.ring.topology.nodes.map((n) => n.id).filter((id) => missing.has(id)) };
}

/** A peer's part of a search. */
export function answerFind(node: FerriteNode, payload: unknown): Promise<FindPart> {
  return localFind(node, payload as FindRequest, false);
}

/**
 * This node's part. In a fan-out it answers for the metrics it is the first owner of,
 * skipping owners presumed down (so always a metric it owns); asked alone, for every
 * metric it stores, or with `verifyOwner` every metric it owns.
 */
async function localFind(node: FerriteNode, r: FindRequest, localOnly: boolean): Promise<FindPart> {
  const down = new Set(r.down);
  const firstLiveOwner = (m: MetricInfo) => node.ownersOf(m).find((o) => !down.has(o.id))?.id === node.identity;
  const keep = localOnly ? (r.verifyOwner ? (m: MetricInfo) => node.owns(m) : undefined) : node.rpc === null ? undefined : firstLiveOwner;
  // tags and count report every match in `count`, also when the advisory limit cuts the rows.
  const counted = r.kind === 'tags' || r.kind === 'count';
  const options = { account: r.account, query: parseQuery(r.query), activityStart: r.activityStart, activityEnd: r.activityEnd, limit: r.kind === 'count' ? 0 : r.limit, keep, ...(r.deadline ? { deadline: r.deadline } : {}) };
  const { found, total, timedOut } = await searchAndCount(node, options, counted);
  const part = await partOf(node, r, found, total);
  return timedOut ? { ...part, timedOut: true } : part;
}

async function partOf(node: FerriteNode, r: FindRequest, found: Found[], total: number): Promise<FindPart> {
  switch (r.kind) {
    case 'count':
      return { rows: [], values: [], count: total };
    case 'tags': {
      const rows = await Promise.all(found.map(async (f) => ({ uuid: f.record.uuid, name: f.record.metric_name, types: f.types, json: await findRecord(node, f, r.activity, r.latest) })));
      return { rows, values: [], count: total };
    }
    case 'tag_cats':
      return { rows: [], values: [...new Set(found.flatMap((f) => tagsOf(f).map((t) => t.category)))], count: 0 };
    case 'tag_vals':
      return { rows: [], values: tagValues(found, r.category), count: 0 };
  }
}

function tagValues(found: Found[], category: string | undefined): string[] {
  const vals = new Set<string>();
  for (const f of found) {
    if (category === '__name') vals.add(f.metric.name.name);
    for (const t of tagsOf(f)) if ((category === undefined || t.category === category) && t.value !== null) vals.add(t.value);
  }
  return [...vals];
}

/** A found metric's stream tags and its check's tags. */
function tagsOf(f: Found): StreamTag[] {
  return [...f.metric.name.tags, ...f.checkTags.map(checkTagOf)];
}

function merge(parts: FindPart[], limit: number | null): FindPart {
  const rows = new Map<string, FindRow>();
  for (const p of parts) for (const row of p.rows) rows.set(`${row.uuid}\u0000${row.name}`, row);
  const sorted = [...rows.values()].sort((a, b) => a.uuid.localeCompare(b.uuid) || a.name.localeCompare(b.name));
  return {
    rows: limit === null ? sorted : sorted.slice(0, limit),
    values: [...new Set(parts.flatMap((p) => p.values))].sort(),
    // Each node counts the metrics it answers for, so the sum counts each once.
    count: parts.reduce((n, p) => n + p.count, 0),
  };
}

/** A `query` parameter as a tag query: 400 when missing or malformed. */
export function parseQuery(raw: string | undefined): TagQuery {
  if (raw === undefined || raw.trim() === '') throw ferr('FER_ERR_MISSING_PARAM', 'query');
  try {
    return parseTagQuery(raw);
  } catch (error) {
    if (error instanceof TagQueryError) throw ferr('FER_ERR_BAD_QUERY', (error as Error).message);
    throw error;
  }
}

/** One search result record (interface §2.4). */
async function findRecord(node: FerriteNode, f: Found, activity: boolean, latest: number): Promise<string> {
  const head: Record<string, unknown> = {
    uuid: f.record.uuid,
    check_name: f.record.check_name,
    check_tags: f.checkTags,
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
