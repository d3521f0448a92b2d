// The store as a Lua extension sees it (`ferrite.find`, `ferrite.fetch`, `ferrite.read`):
// the same cluster-wide search and fetch engine the HTTP endpoints use.
import type { ExtensionApi } from '../../extensions/registry.js';
import { df4Json } from '../../model/fetch/df4.js';
import { FetchRequestError } from '../../model/fetch/errors.js';
import { planFetch } from '../../model/fetch/request.js';
import type { NumericValue, AccountId } from '../../model/types.js';
import { runFetch } from './fetch.js';
import { DEFAULT_FIND_LIMIT, find } from './find.js';
import type { NodeApi } from '../api.js';

export function extensionApi(node: NodeApi, account: AccountId | null): ExtensionApi {
  return {
    async find(query: string) {
      if (account === null) throw new Error('ferrite.find needs an account: send x-svc-account-id');
      const answer = await find(node, { kind: 'tags', account, query: String(query), activityStart: null, activityEnd: null, limit: DEFAULT_FIND_LIMIT, activity: false, latest: 0, down: [], verifyOwner: false }, false);
      return answer.rows.map((r) => JSON.parse(r.json) as unknown);
    },
    async fetch(doc: unknown) {
      try {
        const plan = planFetch(doc);
        const columns = await runFetch(node, plan);
        return JSON.parse(df4Json({ startMs: plan.startMs, periodMs: plan.periodMs, count: plan.count, errors: [], warnings: [] }, columns).toString()) as unknown;
      } catch (error) {
        if (error instanceof FetchRequestError) throw new Error(`ferrite.fetch: ${error.field}: ${error.reason}`);
        throw error;
      }
    },
    async read(uuid: string, metric: string, startS: number, endS: number) {
      const found = node.registry.lookup(String(uuid), String(metric));
      if (!found.ok) throw new Error(`ferrite.read: ${found.reason}`);
      // Local reads: a rebuilding node's data is incomplete (ferrite.fetch goes to the owners instead).
      if (!node.gossip.serves(node.identity)) throw new Error(`ferrite.read: node ${node.identity} is rebuilding from its peers; use ferrite.fetch`);
      if (!(await node.knows(found.metric))) return [];
      const rows = await node.shards.about(found.metric, 'read', 'numeric', Number(startS) * 1000, Number(endS) * 1000);
      return rows.ts.map((ts, i) => {
        const v = rows.values[i] as NumericValue;
        return [ts / 1000, typeof v === 'bigint' ? Number(v) : v];
      });
    },
  };
}
