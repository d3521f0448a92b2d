// Tag search as a cluster answers it (DESIGN.md "The cluster"): the receiving node asks
// every node over NATS and merges. So that replicas are neither lost nor counted twice,
// each node answers for the metrics whose first owner not presumed down (by the asker's
// gossip) is itself. A node that does not answer is named, and counts become estimates.
// Nodes presumed down are not asked at all: their metrics are answered by their next owner,
// and they could answer for none, so waiting for them would only delay the reply.
import { ferr } from '../../model/errors.js';
import { parseTagQuery, TagQueryError, type TagQuery } from '../../model/tag-query/index.js';
import type { AccountId } from '../../model/types.js';
import { checkTagOf } from '../../model/check-tags.js';
import type { StreamTag } from '../../model/metric-name.js';
import { searchIds, type IdSearch } from '../shard/search.js';
import { findBody, findRows, type FindRow } from '../shard/find-rows.js';
import { categoriesOf, valuesOf } from '../../storage/metric-index/facets.js';
import type { MetricInfo } from '../metric-info.js';
import type { FerriteNode } from '../node/node.js';

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
  /** The asker wants `body` rather than rows when this node answers alone (never sent to peers). */
  encode?: boolean;
}

export type { FindRow };

export interface FindAnswer {
  rows: FindRow[];
  /** For `encode` requests answered by this node alone: the records as an encoded JSON array (rows is empty). */
  body?: Buffer;
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
  request = { ...request, encode: false };
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
  const firstLiveOwner = (m: Pick<MetricInfo, 'key'>) => node.routing.ownersOf(m).find((o) => !down.has(o.id))?.id === node.identity;
  const keep = localOnly ? (r.verifyOwner ? (m: Pick<MetricInfo, 'key'>) => node.routing.owns(m) : undefined) : node.rpc === null ? undefined : firstLiveOwner;
  // tags and count report every match in `count`, also when the advisory limit cuts the rows.
  const counted = r.kind === 'tags' || r.kind === 'count';
  const options = { account: r.account, query: parseQuery(r.query), activityStart: r.activityStart, activityEnd: r.activityEnd, limit: r.kind === 'count' ? 0 : r.limit, keep, ...(r.deadline ? { deadline: r.deadline } : {}) };
  const search = await searchIds(node, options, counted);
  const part = await partOf(node, r, search);
  return search.timedOut ? { ...part, timedOut: true } : part;
}

async function partOf(node: FerriteNode, r: FindRequest, s: IdSearch): Promise<FindPart> {
  const account = s.index.account(r.account);
  switch (r.kind) {
    case 'count':
      return { rows: [], values: [], count: s.total };
    case 'tags':
      if (r.encode === true && r.latest === 0) return { rows: [], body: await findBody(s, r.activity), values: [], count: s.total };
      return { rows: await findRows(node, s, r.activity, r.latest), values: [], count: s.total };
    case 'tag_cats': {
      const cats = account === undefined ? new Set<string>() : categoriesOf(s.index, account, s.ids);
      for (const tag of checkTagsOf(s)) cats.add(tag.category);
      return { rows: [], values: [...cats], count: 0 };
    }
    case 'tag_vals': {
      const vals = account === undefined ? new Set<string>() : valuesOf(s.index, account, s.ids, r.category);
      for (const tag of checkTagsOf(s)) if ((r.category === undefined || tag.category === r.category) && tag.value !== null) vals.add(tag.value);
      return { rows: [], values: [...vals], count: 0 };
    }
  }
}

/** The check tags of the checks the matches belong to. */
function checkTagsOf(s: IdSearch): StreamTag[] {
  if (s.checkTags.size === 0) return [];
  const uuids = new Set(s.ids.map((id) => s.index.uuidOf(id)));
  return [...uuids].flatMap((uuid) => (s.checkTags.get(uuid) ?? []).map(checkTagOf));
}

function merge(parts: FindPart[], limit: number | null): FindPart {
  // One part (standalone) is already in order and within the limit.
  if (parts.length === 1) return { ...parts[0]!, values: [...new Set(parts[0]!.values)].sort() };
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
