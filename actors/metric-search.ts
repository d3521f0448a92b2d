// Tag search over the index (CF.index postings, CF.metrics name records): candidates come
// from intersecting the postings every match must have, and each candidate is then checked
// with the full query. Used by /find and by pattern and tag-query deletes.
import { activeBetween, type ActivityWindow } from '../model/activity.js';
import { canonicalizeMetricName, tagSearchText } from '../model/metric-name.js';
import { matchTagQuery, requiredPostings, type MetricView, type TagQuery } from '../model/tag-query/index.js';
import type { AccountId } from '../model/types.js';
import { CF, postingMetricId, postingPrefix, prefixEnd, typePrefix } from '../storage/keys.js';
import { decodeNameRecord, type NameRecord } from './name-record.js';
import type { MetricInfo } from './metric-info.js';
import type { FerriteNode } from './node.js';

export interface SearchOptions {
  account: AccountId;
  query: TagQuery;
  /** Keep only metrics active in [start, end] epoch s (either may be null). */
  activityStart: number | null;
  activityEnd: number | null;
  /** Stop after this many matches (null = no limit). */
  limit: number | null;
}

export interface Found {
  metric: MetricInfo;
  record: NameRecord;
  /** Data types in a stable order: numeric, histogram, text. */
  types: string[];
  activity: ActivityWindow[];
}

const TYPE_ORDER = ['numeric', 'histogram', 'text'];
/** Candidates are checked in chunks so activity is asked of partitions in few messages. */
const CHUNK = 512;

export async function searchMetrics(node: FerriteNode, o: SearchOptions): Promise<Found[]> {
  const found: Found[] = [];
  const now = Math.floor(Date.now() / 1000);
  let chunk: Buffer[] = [];
  const check = async () => {
    const loaded = (await Promise.all(chunk.map((id) => loadCandidate(node, id)))).filter((c) => c !== null);
    chunk = [];
    const activity = await node.activityOf(loaded.map((c) => c.metric));
    loaded.forEach((c, i) => {
      const windows = activity[i]!;
      const view: MetricView = { name: c.metric.name.name, checkUuid: c.metric.uuid, types: c.types, tags: c.tags, activity: windows };
      if (!matchTagQuery(o.query, view, now)) return;
      if ((o.activityStart !== null || o.activityEnd !== null) && !activeBetween(windows, o.activityStart, o.activityEnd)) return;
      if (o.limit === null || found.length < o.limit) found.push({ metric: c.metric, record: c.record, types: c.types, activity: windows });
    });
  };
  for await (const id of candidates(node, o.account, o.query)) {
    chunk.push(id);
    if (chunk.length >= CHUNK) await check();
    if (o.limit !== null && found.length >= o.limit) break;
  }
  if (chunk.length > 0) await check();
  return found.sort((a, b) => a.record.uuid.localeCompare(b.record.uuid) || a.record.metric_name.localeCompare(b.record.metric_name));
}

/** Metric ids that may match: the intersection of required postings, else every metric of the account. */
async function* candidates(node: FerriteNode, account: AccountId, query: TagQuery): AsyncGenerator<Buffer> {
  const required = requiredPostings(query);
  if (required === null || required.length === 0) {
    yield* postingIds(node, postingPrefix(account, '__name'));
    return;
  }
  let ids: Set<string> | null = null;
  for (const [category, value] of required) {
    const next = new Set<string>();
    for await (const id of postingIds(node, postingPrefix(account, category, value))) {
      const hex = id.toString('hex');
      if (ids === null || ids.has(hex)) next.add(hex);
    }
    ids = next;
    if (ids.size === 0) return;
  }
  for (const hex of ids ?? []) yield Buffer.from(hex, 'hex');
}

async function* postingIds(node: FerriteNode, prefix: Buffer): AsyncGenerator<Buffer> {
  for await (const { key } of node.store.scan(CF.index, { gte: prefix, lt: prefixEnd(prefix) })) yield Buffer.from(postingMetricId(key));
}

interface Candidate {
  metric: MetricInfo;
  record: NameRecord;
  types: string[];
  tags: [string, string][];
}

async function loadCandidate(node: FerriteNode, id: Buffer): Promise<Candidate | null> {
  const raw = await node.store.get(CF.metrics, id);
  if (raw === null) return null; // deleted since the posting was read
  const record = decodeNameRecord(raw);
  const resolved = node.registry.intern(record.account_id, record.uuid, record.check_name, record.metric_name);
  const name = canonicalizeMetricName(record.metric_name);
  if (!resolved.ok || !name.ok) return null;
  const types: string[] = [];
  const prefix = typePrefix(id);
  for await (const { key } of node.store.scan(CF.index, { gte: prefix, lt: prefixEnd(prefix) })) {
    types.push(key.subarray(prefix.length).toString('utf8'));
  }
  types.sort((a, b) => TYPE_ORDER.indexOf(a) - TYPE_ORDER.indexOf(b));
  const tags = name.value.tags.map((t) => [tagSearchText(t.category), tagSearchText(t.value ?? '')] as [string, string]);
  return { metric: resolved.metric, record, types, tags };
}
