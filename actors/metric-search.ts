// Tag search over the index (CF.index postings, CF.metrics name records): candidates come
// from the smallest posting range the query's conjuncts name, and each candidate is then
// checked with the full query. Check tags count as tags of every metric of their check.
// Used by /find and by pattern and tag-query deletes.
import { activeBetween, type ActivityWindow } from '../model/activity.js';
import { checkTagOf } from '../model/check-tags.js';
import { tagSearchText } from '../model/metric-name.js';
import { matches, matchTagQuery, postingSources, type MetricView, type PostingSource, type TagQuery } from '../model/tag-query/index.js';
import type { AccountId } from '../model/types.js';
import { CF, postingKey, postingMetricId, postingPrefix, postingValue, prefixEnd, typeKey } from '../storage/keys.js';
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
  /** When given, only metrics it accepts are results (and count toward the limit). */
  keep?: (metric: MetricInfo) => boolean;
  /** Epoch ms past which the search stops with what it has found (see `timedOut`). */
  deadline?: number;
}

export interface Found {
  metric: MetricInfo;
  record: NameRecord;
  /** Tags of the metric's check (`/meta/check/tag`), canonical text. */
  checkTags: string[];
  /** Data types in a stable order: numeric, histogram, text. */
  types: string[];
  activity: ActivityWindow[];
}

const TYPE_ORDER = ['numeric', 'histogram', 'text'];
/** Candidates are checked in chunks: a few native reads and one activity request per chunk. */
const CHUNK = 512;
/** Posting ids read from each source per turn when looking for the smallest. */
const LOCKSTEP_BATCH = 256;
/** Postings fetched per native iterator call. */
const POSTING_SCAN_CAPACITY = 1024;
/** Non-matching postings read in a row before the scan jumps past the rest of their value. */
const RESEEK_AFTER = 256;

export async function searchMetrics(node: FerriteNode, o: SearchOptions): Promise<Found[]> {
  return (await searchAndCount(node, o, false)).found;
}

/** Matches in (uuid, name) order, every match counted in `total`; `timedOut` when the deadline cut the search short. */
export interface SearchResult {
  found: Found[];
  total: number;
  timedOut: boolean;
}

/**
 * Like searchMetrics, and `total` counts every match: with `countAll` the search goes on
 * past the limit only to count (the total find reports in x-svc-search-result-count).
 */
export async function searchAndCount(node: FerriteNode, o: SearchOptions, countAll: boolean): Promise<SearchResult> {
  const found: Found[] = [];
  let total = 0;
  let timedOut = false;
  const now = Math.floor(Date.now() / 1000);
  const checkTags = await node.checkTags.forAccount(o.account);
  for await (const chunk of candidateChunks(node, o.account, o.query, checkTags)) {
    if (o.deadline !== undefined && Date.now() > o.deadline) {
      timedOut = true;
      break;
    }
    const loaded = await loadCandidates(node, chunk, checkTags);
    const activity = await node.activityOf(loaded.map((c) => c.metric));
    loaded.forEach((c, i) => {
      const windows = activity[i]!;
      const view: MetricView = { name: c.metric.name.name, checkUuid: c.metric.uuid, types: c.types, tags: c.tags, activity: windows };
      if (o.keep !== undefined && !o.keep(c.metric)) return;
      if (!matchTagQuery(o.query, view, now)) return;
      if ((o.activityStart !== null || o.activityEnd !== null) && !activeBetween(windows, o.activityStart, o.activityEnd)) return;
      total++;
      if (o.limit === null || found.length < o.limit) found.push({ metric: c.metric, record: c.record, checkTags: c.checkTags, types: c.types, activity: windows });
    });
    if (!countAll && o.limit !== null && found.length >= o.limit) break;
  }
  found.sort((a, b) => a.record.uuid.localeCompare(b.record.uuid) || a.record.metric_name.localeCompare(b.record.metric_name));
  return { found, total, timedOut };
}

/**
 * Ids of metrics that may match, in chunks: the smallest posting range a conjunct names,
 * narrowed by the other exact conjuncts; with no usable conjunct, every metric of the account.
 */
async function* candidateChunks(node: FerriteNode, account: AccountId, query: TagQuery, checkTags: CheckTagsByUuid): AsyncGenerator<Buffer[]> {
  const sources = postingSources(query);
  if (sources.length === 0) {
    yield* postingBatches(node, account, { category: '__name', value: null, literalPrefix: '' });
    return;
  }
  const { index, ids } = await smallestSource(sources.map((s) => sourceBatches(node, account, s, checkTags)));
  // A category some check carries as a check tag has no postings for it: it cannot narrow.
  const checkCategories = new Set([...checkTags.values()].flat().map((t) => checkTagOf(t).category));
  const exact = sources.filter((s, i) => i !== index && s.value?.kind === 'exact' && !checkCategories.has(s.category));
  for (let i = 0; i < ids.length; i += CHUNK) yield await withPostings(node, account, exact, ids.slice(i, i + CHUNK));
}

type CheckTagsByUuid = ReadonlyMap<string, readonly string[]>;

/**
 * The metrics a source names: its postings, then every metric of each check whose check
 * tags satisfy it (check tags have no postings of their own; the check's `__check_uuid`
 * posting lists its metrics).
 */
async function* sourceBatches(node: FerriteNode, account: AccountId, source: PostingSource, checkTags: CheckTagsByUuid): AsyncGenerator<Buffer[]> {
  yield* postingBatches(node, account, source);
  for (const [uuid, tags] of checkTags) {
    const hit = tags.some((text) => {
      const tag = checkTagOf(text);
      return tagSearchText(tag.category) === source.category && (source.value === null || matches(source.value, tagSearchText(tag.value ?? '')));
    });
    if (hit) yield* postingBatches(node, account, { category: '__check_uuid', value: { kind: 'exact', value: uuid }, literalPrefix: uuid });
  }
}

/**
 * Reads the sources in lock step, a batch from each in turn, until one runs out: that one
 * is complete and no larger than a batch more than the smallest, so a selective conjunct
 * bounds the work however broad the others are.
 */
async function smallestSource(sources: AsyncGenerator<Buffer[]>[]): Promise<{ index: number; ids: Buffer[] }> {
  const taken: Buffer[][] = sources.map(() => []);
  try {
    for (;;) {
      for (let i = 0; i < sources.length; i++) {
        const next = await sources[i]!.next();
        if (next.done) return { index: i, ids: distinct(taken[i]!) };
        taken[i]!.push(...next.value);
      }
    }
  } finally {
    await Promise.all(sources.map((s) => s.return(undefined)));
  }
}

function distinct(ids: Buffer[]): Buffer[] {
  const seen = new Set<string>();
  return ids.filter((id) => {
    const hex = id.toString('hex');
    if (seen.has(hex)) return false;
    seen.add(hex);
    return true;
  });
}

/** The ids that also hold every exact (category, value) of `exact`. */
async function withPostings(node: FerriteNode, account: AccountId, exact: readonly PostingSource[], ids: Buffer[]): Promise<Buffer[]> {
  for (const s of exact) {
    const value = (s.value as { value: string }).value;
    const held = await node.store.getMany(CF.index, ids.map((id) => postingKey(account, s.category, value, id)));
    ids = ids.filter((_, i) => held[i] !== null);
  }
  return ids;
}

/**
 * Ids (in batches; an id may repeat) of the metrics whose `category` tag has a value the
 * source accepts. Postings are ordered by value, so a long run of a value that does not match
 * is skipped by restarting the scan after it.
 */
async function* postingBatches(node: FerriteNode, account: AccountId, source: PostingSource): AsyncGenerator<Buffer[]> {
  const { category, value } = source;
  const categoryPrefix = postingPrefix(account, category);
  const test = value === null || value.kind === 'exact' ? null : value;
  let from = value?.kind === 'exact' ? postingPrefix(account, category, value.value) : Buffer.concat([categoryPrefix, Buffer.from(source.literalPrefix, 'utf8')]);
  const end = prefixEnd(from);
  let batch: Buffer[] = [];
  let accepted: string | null = null;
  let rejected: string | null = null;
  let skipped = 0;
  walk: for (;;) {
    for await (const { key } of node.store.scan(CF.index, { gte: from, lt: end, capacity: POSTING_SCAN_CAPACITY })) {
      if (test !== null) {
        const v = postingValue(key, categoryPrefix.length);
        if (v === rejected || (v !== accepted && !matches(test, v))) {
          rejected = v;
          // Reading on is cheaper than reopening the scan, up to a point.
          if (++skipped < RESEEK_AFTER) continue;
          from = prefixEnd(postingPrefix(account, category, v));
          skipped = 0;
          continue walk;
        }
        accepted = v;
        skipped = 0;
      }
      batch.push(Buffer.from(postingMetricId(key)));
      if (batch.length < LOCKSTEP_BATCH) continue;
      yield batch;
      batch = [];
    }
    break;
  }
  if (batch.length > 0) yield batch;
}

interface Candidate {
  metric: MetricInfo;
  record: NameRecord;
  checkTags: string[];
  types: string[];
  tags: [string, string][];
}

/** Name records and data types of a chunk of ids, read in two native calls. */
async function loadCandidates(node: FerriteNode, ids: Buffer[], checkTags: CheckTagsByUuid): Promise<Candidate[]> {
  const [records, held] = await Promise.all([
    node.store.getMany(CF.metrics, ids),
    node.store.getMany(CF.index, ids.flatMap((id) => TYPE_ORDER.map((kind) => typeKey(id, kind)))),
  ]);
  const out: Candidate[] = [];
  records.forEach((raw, i) => {
    if (raw === null) return; // deleted since the posting was read
    const record = decodeNameRecord(raw);
    const resolved = node.registry.intern(record.account_id, record.uuid, record.check_name, record.metric_name);
    if (!resolved.ok) return;
    const types = TYPE_ORDER.filter((_, k) => held[i * TYPE_ORDER.length + k] !== null);
    const ofCheck = [...(checkTags.get(record.uuid) ?? [])];
    const tags = [...resolved.metric.name.tags, ...ofCheck.map(checkTagOf)].map((t) => [tagSearchText(t.category), tagSearchText(t.value ?? '')] as [string, string]);
    out.push({ metric: resolved.metric, record, checkTags: ofCheck, types, tags });
  });
  return out;
}
