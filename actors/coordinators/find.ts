// Tag search as a cluster answers it (DESIGN.md "The cluster"): the receiving node asks
// its shards and every other node, and merges. So that replicas are neither lost nor counted
// twice, each node answers for the metrics whose first owner not presumed down (by the
// asker's gossip) is itself. A node that does not answer is named, and counts become
// estimates. Nodes presumed down are not asked at all: their metrics are answered by their
// next owner, and they could answer for none, so waiting for them would only delay the reply.
// Within a node, each shard answers for its own partitions (actors/shard/find.ts).
import { parseQuery, type AnswerFor, type FindPart, type FindRequest } from '../shard/find.js';
import type { FindRow } from '../shard/find-rows.js';
import type { NodeApi } from '../api.js';

/** IRONdb's default advisory limit for finds. */
export const DEFAULT_FIND_LIMIT = 10_000;

export { parseQuery, type FindKind, type FindRequest } from '../shard/find.js';
export type { FindRow };

export interface FindAnswer {
  rows: FindRow[];
  /** For `encode` requests answered by this node alone: the records as an encoded JSON array (rows is empty). */
  body?: Uint8Array;
  values: string[];
  count: number;
  /** Nodes that did not answer (their share may be missing), or ran out of time. */
  unanswered: string[];
  /** active_count: active metrics per slice, summed over the nodes that answered. */
  periodCounts?: number[];
  /** explain: [node id, the query as that node parsed it] for each node that answered. */
  explained: [string, string][];
}

/** The whole cluster's answer (this node's alone when standalone or `localOnly`). */
export async function find(node: NodeApi, request: FindRequest, localOnly: boolean): Promise<FindAnswer> {
  parseQuery(request.query);
  const rpc = node.rpc;
  if (rpc === null || localOnly) {
    const part = await nodeFind(node, request, rpc === null ? 'stored' : request.verifyOwner ? 'owned' : 'stored');
    return { ...merge([part], request.limit), unanswered: part.timedOut ? [node.identity] : [], explained: explained([node.identity], [part]) };
  }
  const others = node.ring.topology.nodes.filter((n) => n.id !== node.identity);
  request = { ...request, encode: false };
  // A rebuilding node (this one, or a peer by its gossip) answers for nothing: its data is incomplete.
  const down = [...others.filter((n) => !node.gossip.serves(n.id)).map((n) => n.id), ...(node.gossip.serves(node.identity) ? [] : [node.identity])];
  const live = others.filter((n) => !down.includes(n.id));
  const asked = { ...request, down };
  const timeout = node.config.peerTimeoutMs;
  const parts = await Promise.allSettled([nodeFind(node, asked, 'first-live-owner'), ...live.map((p) => rpc.call<FindPart>(p.id, 'find', asked, timeout))]);
  if (parts[0]!.status === 'rejected') throw parts[0].reason;
  const incomplete = (p: PromiseSettledResult<FindPart>) => p.status === 'rejected' || p.value.timedOut === true;
  const missing = new Set([...[node.identity, ...live.map((p) => p.id)].filter((_, i) => incomplete(parts[i]!)), ...down]);
  const answered = parts.flatMap((p) => (p.status === 'fulfilled' ? [p.value] : []));
  const ids = [node.identity, ...live.map((p) => p.id)].filter((_, i) => parts[i]!.status === 'fulfilled');
  return { ...merge(answered, request.limit), unanswered: node.ring.topology.nodes.map((n) => n.id).filter((id) => missing.has(id)), explained: explained(ids, answered) };
}

function explained(ids: string[], parts: FindPart[]): [string, string][] {
  return parts.flatMap((p, i) => (p.explain === undefined ? [] : [[ids[i]!, p.explain] as [string, string]]));
}

/** A peer's part of a search. */
export function answerFind(node: NodeApi, payload: unknown): Promise<FindPart> {
  const r = payload as FindRequest;
  // Asked before the asker heard that this node rebuilds: it answers as if it were down.
  const asked = node.gossip.serves(node.identity) ? r : { ...r, down: [...(r.down ?? []), node.identity] };
  return nodeFind(node, asked, 'first-live-owner');
}

/** This node's part: its shards' parts merged (one shard's answer is passed on as it is). */
async function nodeFind(node: NodeApi, r: FindRequest, answerFor: AnswerFor): Promise<FindPart> {
  const checkTags = [...(await node.checkTags.forAccount(r.account))].map(([uuid, tags]): [string, string[]] => [uuid, [...tags]]);
  // Encoded records of several shards would need interleaving: they send rows.
  const request = { ...r, answerFor, checkTags, encode: r.encode === true && node.shards.count === 1 };
  const parts = await node.shards.askAll('find', request);
  const merged = merge(parts, r.limit);
  return parts.some((p) => p.timedOut === true) ? { ...merged, timedOut: true } : merged;
}

function merge(parts: FindPart[], limit: number | null): FindPart {
  // One part (standalone) is already in order and within the limit.
  if (parts.length === 1) return { ...parts[0]!, values: [...new Set(parts[0]!.values)].sort() };
  const periodCounts = sumCounts(parts);
  // Every shard of a node parses the same text: the first one speaks for the node.
  const explain = parts.find((p) => p.explain !== undefined)?.explain;
  const rows = new Map<string, FindRow>();
  for (const p of parts) for (const row of p.rows) rows.set(`${row.uuid}\u0000${row.name}`, row);
  const sorted = [...rows.values()].sort((a, b) => a.uuid.localeCompare(b.uuid) || a.name.localeCompare(b.name));
  return {
    rows: limit === null ? sorted : sorted.slice(0, limit),
    values: [...new Set(parts.flatMap((p) => p.values))].sort(),
    // Each node counts the metrics it answers for, so the sum counts each once.
    count: parts.reduce((n, p) => n + p.count, 0),
    ...(periodCounts === undefined ? {} : { periodCounts }),
    ...(explain === undefined ? {} : { explain }),
  };
}

/** The parts' slice counts added slice by slice (each metric is counted by one party). */
function sumCounts(parts: FindPart[]): number[] | undefined {
  const counted = parts.flatMap((p) => (p.periodCounts === undefined ? [] : [p.periodCounts]));
  if (counted.length === 0) return undefined;
  return counted[0]!.map((_, k) => counted.reduce((n, c) => n + (c[k] ?? 0), 0));
}
