// Tag search over the node's in-memory metric index (storage/metric-index): the query is
// evaluated to a set of dense ids from posting lists (smallest part first), then the ids are
// narrowed by liveness, ownership (in a cluster) and activity, counted, and only the ids
// returned are resolved to names. Check tags count as tags of every metric of their check.
// Used by a shard's part of /find and of tag-query and pattern deletes (actors/shard/find.ts).
import { checkTagOf } from '../../model/check-tags.js';
import { tagSearchText } from '../../model/metric-name.js';
import { metricKey } from '../../model/metric-key.js';
import type { TagQuery } from '../../model/tag-query/index.js';
import type { AccountId, MetricKey } from '../../model/types.js';
import type { MetricIndex } from '../../storage/metric-index/metric-index.js';
import { evaluate } from '../../storage/metric-index/query-plan.js';
import type { MetricInfo } from '../../model/metric-info.js';
import { setImmediate as turn } from 'node:timers/promises';

export interface SearchOptions {
  account: AccountId;
  query: TagQuery;
  /** Keep only metrics active in [start, end] epoch s (either may be null). */
  activityStart: number | null;
  activityEnd: number | null;
  /** Stop after this many matches (null = no limit). */
  limit: number | null;
  /** When given, only metrics it accepts are results (and count toward the limit). */
  keep?: (metric: Pick<MetricInfo, 'key'>) => boolean;
  /** Epoch ms past which the search stops with what it has found (see `timedOut`). */
  deadline?: number;
  /** Called with every counted match, also past the limit (active_count tallies them). */
  visit?: (id: number) => void;
}

/** Check uuid → the check's tags (canonical `category:value` text). */
export type CheckTagsByUuid = ReadonlyMap<string, readonly string[]>;

/** Matches as dense ids of `index`, in (uuid, name) order; `total` counts every match. */
export interface IdSearch {
  index: MetricIndex;
  ids: number[];
  total: number;
  timedOut: boolean;
  checkTags: CheckTagsByUuid;
}

/** What a search reads: the shard's index, and the tags of the account's checks. */
export interface SearchContext {
  index: MetricIndex;
  checkTags: CheckTagsByUuid;
}

/** Matches looked at between two yields to the event loop, so other requests go on. */
const CHUNK = 16_384;

/**
 * The matches: with `countAll` the search goes on past the limit only to count (the total
 * find reports in x-svc-search-result-count).
 */
export async function searchIds(ctx: SearchContext, o: SearchOptions, countAll: boolean): Promise<IdSearch> {
  const { index, checkTags } = ctx;
  const account = index.account(o.account);
  const none: IdSearch = { index, ids: [], total: 0, timedOut: false, checkTags };
  if (account === undefined) return none;
  const matched = evaluate(o.query, {
    categories: account.categories,
    universe: account.all.view(),
    bound: index.bound,
    typesOf: (id) => index.typesOf(id),
    activeBetween: (id, from, to) => index.activity.activeBetween(id, from, to),
    checkTags: searchTextOf(checkTags),
    nowSecs: Math.floor(Date.now() / 1000),
  });
  const ids: number[] = [];
  let total = 0;
  let timedOut = false;
  const ranged = o.activityStart !== null || o.activityEnd !== null;
  const want = o.limit ?? Infinity;
  for (let from = 0; from < matched.length; from += CHUNK) {
    if (from > 0) await turn();
    if (o.deadline !== undefined && Date.now() > o.deadline) {
      timedOut = true;
      break;
    }
    const to = Math.min(matched.length, from + CHUNK);
    for (let i = from; i < to; i++) {
      const id = matched[i]!;
      if (!index.isAlive(id)) continue;
      if (o.keep !== undefined && !o.keep({ key: metricKey(index.uuidOf(id), index.canonicalOf(id)) as MetricKey })) continue;
      if (ranged && !index.activity.activeBetween(id, o.activityStart, o.activityEnd)) continue;
      total++;
      o.visit?.(id);
      if (ids.length < want) ids.push(id);
    }
    if (!countAll && ids.length >= want) break;
  }
  return { index, ids: await sortByName(index, ids), total, timedOut, checkTags };
}

/**
 * Ids in (uuid, canonical name) order, as find has always listed them: grouped by check
 * (a check's metrics are found together), the checks' uuids sorted, then names within each.
 */
async function sortByName(index: MetricIndex, ids: number[]): Promise<number[]> {
  const byCheck = new Map<number, number[]>();
  for (const id of ids) {
    const check = index.checkOf(id);
    const group = byCheck.get(check);
    if (group === undefined) byCheck.set(check, [id]);
    else group.push(id);
  }
  // uuids are lower-case hex in one layout, where code unit order is collation order.
  const uuids = [...byCheck.keys()].map((check) => ({ check, uuid: index.uuidOf(byCheck.get(check)![0]!) }));
  uuids.sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  const out: number[] = [];
  let run: { id: number; name: string }[] = [];
  const flush = () => {
    run.sort((a, b) => a.name.localeCompare(b.name));
    for (const r of run) out.push(r.id);
    run = [];
  };
  for (const [i, { check, uuid }] of uuids.entries()) {
    // A uuid seen under two check names is one group for the name order.
    if (i > 0 && uuids[i - 1]!.uuid !== uuid) {
      const before = out.length;
      flush();
      if (Math.floor(out.length / CHUNK) !== Math.floor(before / CHUNK)) await turn();
    }
    for (const id of byCheck.get(check)!) run.push({ id, name: index.canonicalOf(id) });
  }
  flush();
  return out;
}

function searchTextOf(checkTags: CheckTagsByUuid): Map<string, [string, string][]> {
  const out = new Map<string, [string, string][]>();
  for (const [uuid, tags] of checkTags) {
    out.set(
      uuid,
      tags.map((text) => {
        const t = checkTagOf(text);
        return [tagSearchText(t.category), tagSearchText(t.value ?? '')];
      }),
    );
  }
  return out;
}
