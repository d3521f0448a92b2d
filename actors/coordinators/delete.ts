// Deletes of many metrics (interface §2.3): the metrics a tag query, a check or a `*` pattern
// selects on this node (every shard searched, answers merged in name order), each deleted by
// its shard, and in a cluster the matching metrics only other nodes store, reported `not local`
// (a delete acts on the receiving node only). Each metric gets its own record whatever happens
// to the others: one that fails is reported with its status and the reason in `payload`.
import { ferr } from '../../model/errors.js';
import { DeleteProblem, failedStatus, targetType, type DeleteOutcome, type DeleteStatus, type DeleteTarget } from '../../model/delete.js';
import { globTest } from '../../model/tag-query/index.js';
import type { AccountId } from '../../model/types.js';
import { normalizeUuid } from '../../model/check-field.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { NodeApi } from '../api.js';
import type { FoundMetric } from '../shard/find.js';
import { find } from './find.js';

export type { DeleteOutcome };

/** What a selection found here, and whether a limit cut it short. */
export interface Selection {
  found: FoundMetric[];
  incomplete: boolean;
}

/** One metric's line in a delete's answer. */
export interface DeleteResult {
  metric_name: string;
  delete_result: DeleteStatus;
  /** Why, for a failure; empty otherwise. */
  payload: string;
}

/** Deleting the `target` data stamped before `before` (histograms, numeric rollups: in `periods`, null = all). */
export interface DataDelete {
  kind: DeleteTarget;
  before: number;
  confirm: boolean;
  periods: number[] | null;
}

/**
 * What to do to each selected metric: delete data of one target, or everything — or, when
 * the request's arguments make that impossible, report the problem for each of them.
 */
export type DeleteAction = DataDelete | { kind: null; confirm: boolean } | { kind: DeleteTarget | null; problem: DeleteProblem };

/** The tag query selecting a check's metrics; 400 for a malformed uuid. */
export function checkQueryText(uuidParam: string): string {
  const uuid = normalizeUuid(uuidParam);
  if (uuid === null) throw ferr('FER_ERR_BAD_UUID', `'${uuidParam}'`);
  return `and(__check_uuid:${uuid})`;
}

/** Metrics matching `query` stored here, up to `limit` (null = all), in (uuid, name) order. */
export async function select(node: NodeApi, account: AccountId, query: string, limit: number | null): Promise<Selection> {
  const checkTags = [...(await node.checkTags.forAccount(account))].map(([uuid, tags]): [string, string[]] => [uuid, [...tags]]);
  const parts = await node.shards.askAll('search', { account, query, limit: limit === null ? null : limit + 1, checkTags });
  const found = parts.flat().sort((a, b) => compare(a.record.uuid, b.record.uuid) || a.record.metric_name.localeCompare(b.record.metric_name));
  const incomplete = limit !== null && found.length > limit;
  return { found: incomplete ? found.slice(0, limit) : found, incomplete };
}

/** Metrics of the check whose canonical name matches a `*` wildcard pattern. */
export async function selectPattern(node: NodeApi, account: AccountId, uuid: string, pattern: string, limit: number | null): Promise<Selection> {
  const matchesPattern = globTest(pattern);
  const all = await select(node, account, checkQueryText(uuid), null);
  const found = all.found.filter((f) => matchesPattern(f.record.metric_name));
  const incomplete = limit !== null && found.length > limit;
  return { found: incomplete ? found.slice(0, limit!) : found, incomplete };
}

/** Acts on each selected metric (holding the action's data type), then lists `elsewhere` as `not local`. */
export async function deleteSelected(node: NodeApi, selection: Selection, action: DeleteAction, elsewhere: Elsewhere[] = []): Promise<DeleteResult[]> {
  const type = action.kind === null ? null : targetType(action.kind);
  const results: DeleteResult[] = [];
  for (const f of selection.found) {
    if (type !== null && !f.types.includes(type)) continue;
    results.push({ metric_name: f.record.metric_name, ...(await deleteOne(node, f, action)) });
  }
  for (const e of elsewhere) {
    if (type === null || e.types.includes(type)) results.push({ metric_name: e.metric_name, delete_result: 'not local', payload: '' });
  }
  return results;
}

/** One metric's status; a failure is its own record, never the whole request's error. */
async function deleteOne(node: NodeApi, f: FoundMetric, action: DeleteAction): Promise<Omit<DeleteResult, 'metric_name'>> {
  if ('problem' in action) return { delete_result: action.problem.status, payload: action.problem.error.message };
  try {
    const metric = metricOf(node, f);
    const outcome = action.kind === null ? await node.fullDelete(metric, action.confirm) : await node.deleteData(metric, action.kind, action.before, action.confirm, action.periods);
    return { delete_result: outcome, payload: '' };
  } catch (error) {
    return { delete_result: failedStatus(error), payload: (error as Error).message };
  }
}

/** A matching metric that other nodes store and this one does not. */
export interface Elsewhere {
  metric_name: string;
  types: string[];
}

/**
 * In a cluster, the metrics matching the query that only other nodes store: a delete
 * reports them `not local` (it acts on the receiving node only, interface §2.3).
 */
export async function storedElsewhere(node: NodeApi, account: AccountId, query: string, here: Selection): Promise<Elsewhere[]> {
  if (node.rpc === null) return [];
  const local = new Set(here.found.map((f) => `${f.record.uuid}\u0000${f.record.metric_name}`));
  const answer = await find(node, { kind: 'tags', account, query, activityStart: null, activityEnd: null, limit: null, activity: false, latest: 0, down: [], verifyOwner: false }, false);
  return answer.rows.filter((r) => !local.has(`${r.uuid}\u0000${r.name}`)).map((r) => ({ metric_name: r.name, types: r.types }));
}

function metricOf(node: NodeApi, f: FoundMetric): MetricInfo {
  const r = node.registry.intern(f.record.account_id, f.record.uuid, f.record.check_name, f.record.metric_name);
  if (!r.ok) throw new Error(`BUG: the index holds an invalid metric name: ${r.reason}`);
  return r.metric;
}

/** uuids are lower-case hex in one layout, where code unit order is collation order. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
