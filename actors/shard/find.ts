// A shard's part of a tag search (/find, tag_cats, tag_vals, count) and of the searches
// deletes act on: evaluated over the shard's slice of the index. The node merges the parts
// of its shards, and of other nodes, with one merge (actors/coordinators/find.ts).
import { SliceCounts, type ActivityWindow } from '../../model/activity.js';
import { checkTagOf } from '../../model/check-tags.js';
import { ferr } from '../../model/errors.js';
import type { StreamTag } from '../../model/metric-name.js';
import { formatTagQuery, parseTagQuery, TagQueryError, type TagQuery } from '../../model/tag-query/index.js';
import type { AccountId } from '../../model/types.js';
import { categoriesOf, valuesOf } from '../../storage/metric-index/facets.js';
import type { MetricIndex } from '../../storage/metric-index/metric-index.js';
import type { MetricInfo } from '../../model/metric-info.js';
import { findBody, findRows, type FindRow, type LatestReader } from './find-rows.js';
import type { NameRecord } from './name-record.js';
import { searchIds, type CheckTagsByUuid, type IdSearch } from './search.js';

export type FindKind = 'tags' | 'tag_cats' | 'tag_vals' | 'count' | 'active_count';

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
  /** active_count: the 5-minute slices counted (`first` epoch s on a slice boundary). */
  slices?: { first: number; count: number };
  /** explain=1: each node reports the query as it parsed it. */
  explain?: boolean;
}

/** Which metrics a node's answer covers. */
export type AnswerFor =
  /** Every metric stored here (a standalone node, or a find asked of this node alone). */
  | 'stored'
  /** Every metric this node owns (x-svc-verify-owner on a find asked of this node alone). */
  | 'owned'
  /** Metrics whose first owner not presumed down is this node (a cluster fan-out). */
  | 'first-live-owner';

/** A find as a shard gets it: with the check tags of the account (the node keeps those). */
export interface ShardFindRequest extends FindRequest {
  answerFor: AnswerFor;
  checkTags: [string, string[]][];
}

/** One party's answer: a shard's, a node's, or the merge of several. */
export interface FindPart {
  rows: FindRow[];
  /** For `encode` requests answered by one party alone: the records as an encoded JSON array (rows is empty). */
  body?: Uint8Array;
  values: string[];
  count: number;
  timedOut?: boolean;
  /** active_count: active metrics per slice of the request's `slices`. */
  periodCounts?: number[];
  /** explain: the query as this party parsed it. */
  explain?: string;
}

/** A search for deletes: matches up to `limit` (null: all), in (uuid, name) order. */
export interface ShardSearch {
  account: AccountId;
  query: string;
  limit: number | null;
  checkTags: [string, string[]][];
}

/** A metric a search found, as a delete reports and acts on it. */
export interface FoundMetric {
  record: NameRecord;
  /** Data types in a stable order: numeric, histogram, text. */
  types: string[];
  activity: ActivityWindow[];
}

/** What a shard's find needs besides its index. */
export interface FindContext {
  index: MetricIndex;
  latest: LatestReader;
  /** The metric's owners (node ids), primary first. */
  owners(metric: Pick<MetricInfo, 'key'>): string[];
  identity: string;
}

export async function shardFind(ctx: FindContext, r: ShardFindRequest): Promise<FindPart> {
  const checkTags: CheckTagsByUuid = new Map(r.checkTags);
  const counted = r.kind === 'tags' || r.kind === 'count' || r.kind === 'active_count';
  const query = parseQuery(r.query);
  const slices = r.kind === 'active_count' && r.slices !== undefined ? new SliceCounts(r.slices.first, r.slices.count) : null;
  const options = {
    account: r.account,
    query,
    activityStart: r.activityStart,
    activityEnd: r.activityEnd,
    // tags and count report every match in `count`, also when the advisory limit cuts the rows.
    limit: r.kind === 'count' || r.kind === 'active_count' ? 0 : r.limit,
    keep: keeper(ctx, r),
    ...(r.deadline ? { deadline: r.deadline } : {}),
    ...(slices === null ? {} : { visit: (id: number) => slices.add(ctx.index.activity.windows(id)) }),
  };
  const search = await searchIds({ index: ctx.index, checkTags }, options, counted);
  const part = await partOf(ctx, r, search);
  return {
    ...part,
    ...(slices === null ? {} : { periodCounts: slices.counts() }),
    ...(r.explain === true ? { explain: formatTagQuery(query) } : {}),
    ...(search.timedOut ? { timedOut: true } : {}),
  };
}

function keeper(ctx: FindContext, r: ShardFindRequest): ((m: Pick<MetricInfo, 'key'>) => boolean) | undefined {
  switch (r.answerFor) {
    case 'stored':
      return undefined;
    case 'owned':
      return (m) => ctx.owners(m).includes(ctx.identity);
    case 'first-live-owner': {
      const down = new Set(r.down);
      return (m) => ctx.owners(m).find((o) => !down.has(o)) === ctx.identity;
    }
  }
}

async function partOf(ctx: FindContext, r: FindRequest, s: IdSearch): Promise<FindPart> {
  const account = s.index.account(r.account);
  switch (r.kind) {
    case 'count':
    case 'active_count':
      return { rows: [], values: [], count: s.total };
    case 'tags':
      if (r.encode === true && r.latest === 0) return { rows: [], body: await findBody(s, r.activity), values: [], count: s.total };
      return { rows: await findRows(ctx.latest, s, r.activity, r.latest), values: [], count: s.total };
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

/** The metrics a delete acts on. */
export async function shardSearch(index: MetricIndex, r: ShardSearch): Promise<FoundMetric[]> {
  const checkTags: CheckTagsByUuid = new Map(r.checkTags);
  const { ids } = await searchIds({ index, checkTags }, { account: r.account, query: parseQuery(r.query), activityStart: null, activityEnd: null, limit: r.limit }, false);
  return ids.map((id) => ({
    record: { account_id: index.accountIdOf(id) as AccountId, uuid: index.uuidOf(id), check_name: index.checkNameOf(id), metric_name: index.canonicalOf(id) },
    types: [...index.typesOf(id)],
    activity: [...index.activity.windows(id)],
  }));
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
