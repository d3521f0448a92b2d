// CAQL's data source on a node: `find` goes through the (cluster-wide) tag search and
// reads go through the fetch engine, so CAQL sees exactly what /find and /fetch see.
import { CaqlUserError } from '../caql/errors.js';
import type { DataSource, FetchStream, Grid, Stream } from '../caql/stream.js';
import { planFetch } from '../model/fetch/request.js';
import type { AccountId } from '../model/types.js';
import { runFetch } from './fetch-engine.js';
import { find } from './find-service.js';
import type { FerriteNode } from './node.js';

export function caqlSource(node: FerriteNode, account: AccountId | null): DataSource {
  return {
    async find(query: string, limit: number, grid: Grid) {
      if (account === null) throw new CaqlUserError('find() needs an account: send account_id or x-svc-account-id');
      const end = grid.startS + grid.count * grid.periodS;
      const request = { kind: 'tags' as const, account, query, activityStart: grid.startS, activityEnd: end, limit: limit + 1, activity: false, latest: 0, down: [], verifyOwner: false };
      const answer = await find(node, request, false);
      const metrics = answer.rows.map((r) => ({ uuid: r.uuid, name: r.name, types: r.types }));
      return { metrics: metrics.slice(0, limit), truncated: metrics.length > limit };
    },

    async fetch(grid: Grid, streams: FetchStream[]): Promise<Stream[]> {
      const plan = planFetch({
        start: grid.startS,
        period: grid.periodS,
        count: grid.count,
        streams: streams.map((s) => ({ uuid: s.uuid, name: s.name, kind: s.kind, transform: s.transform })),
        reduce: [{ label: 'pass', method: 'pass' }],
      });
      const columns = await runFetch(node, plan);
      return columns.map((c): Stream => {
        const name = c.tags.find((t) => t.startsWith('__name:'))?.slice('__name:'.length) ?? c.label;
        if (c.kind === 'text') throw new Error('BUG: CAQL fetched a text stream');
        return { ...c, name, canonical: c.label } as Stream;
      });
    },
  };
}
