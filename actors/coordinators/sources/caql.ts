// CAQL's data source on a node: `find` goes through the (cluster-wide) tag search and
// reads go through the fetch engine, so CAQL sees exactly what /find and /fetch see.
import { CaqlUserError } from '../../../caql/errors.js';
import { numeric, type DataSource, type FetchStream, type Grid, type Stream } from '../../../caql/stream.js';
import { FetchRequestError } from '../../../model/fetch/errors.js';
import type { Column } from '../../../model/fetch/column.js';
import { planFetch } from '../../../model/fetch/request.js';
import type { AccountId } from '../../../model/types.js';
import { runFetch } from '../fetch.js';
import { find } from '../find.js';
import type { NodeApi } from '../../api.js';

export function caqlSource(node: NodeApi, account: AccountId | null): DataSource {
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
      // Windows and delays can reach before the epoch, where there is no data: read from 0, pad with nulls.
      const empty = grid.startS >= 0 ? 0 : Math.min(grid.count, Math.ceil(-grid.startS / grid.periodS));
      const stored = grid.count - empty;
      const columns = stored === 0 ? streams.map(() => null) : await readColumns(node, { ...grid, startS: grid.startS + empty * grid.periodS, count: stored }, streams);
      return columns.map((c, i): Stream => {
        const values = [...new Array<null>(empty).fill(null), ...(c?.values ?? new Array<null>(stored).fill(null))];
        if (c === null) return { ...numeric({ label: streams[i]!.name }, values as null[]), kind: streams[i]!.kind } as Stream;
        const name = c.tags.find((t) => t.startsWith('__name:'))?.slice('__name:'.length) ?? c.label;
        if (c.kind === 'text') throw new Error('BUG: CAQL fetched a text stream');
        return { ...c, values, name, canonical: c.label } as Stream;
      });
    },
  };
}

async function readColumns(node: NodeApi, grid: Grid, streams: FetchStream[]): Promise<Column[]> {
  try {
    const plan = planFetch({
      start: grid.startS,
      period: grid.periodS,
      count: grid.count,
      streams: streams.map((s) => ({ uuid: s.uuid, name: s.name, kind: s.kind, transform: s.transform })),
      reduce: [{ label: 'pass', method: 'pass' }],
    });
    return await runFetch(node, plan);
  } catch (error) {
    if (error instanceof FetchRequestError) throw new CaqlUserError(`reading ${error.field}: ${error.reason}`);
    throw error;
  }
}
