// Data selection (spec/caql.md §4): `find[:kind](name_pattern, [tag_query], limit=1000)`
// resolves through tag search (activity within the view), sorted by name, and reads the
// matches through the fetch engine with the kind's transform; `metric[:kind](uuid, name)`
// reads one metric without searching.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import type { FetchStream, Stream } from '../stream.js';
import type { CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

const DEFAULT_LIMIT = 1000;
const MAX_LIMIT = 3000;
/** Find/metric variants → fetch transform (numeric kinds) or histogram. */
const KINDS: Record<string, string> = lookupTable({
  average: 'average',
  count: 'count',
  sum: 'sum',
  stddev: 'stddev',
  counter: 'counter',
  counter_stddev: 'counter_stddev',
  derivative: 'derivative',
  derivative_stddev: 'derivative_stddev',
  histogram: 'none',
});
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The tag query of `find(name_pattern, [tag_query])`: a lone full tag query stands as is. */
export function findQuery(pattern: string, tagQuery: string | null): string {
  const p = pattern.trim();
  if (tagQuery === null && /^(and|or|not)\s*\(/.test(p)) return p;
  const name = `__name:${p}`;
  return tagQuery === null || tagQuery.trim() === '' ? `and(${name})` : `and(${name},${tagQuery.trim()})`;
}

function streamsOf(kind: string, uuid: string, name: string): FetchStream {
  const transform = KINDS[kind]!;
  return { uuid, name, kind: transform === 'none' ? 'histogram' : 'numeric', transform };
}

function find(kind: string): CaqlFunction {
  return async (inv: Invocation) => {
    const query = findQuery(inv.string(0), inv.args.length > 1 ? inv.string(1) : null);
    const limit = inv.kwNumber('limit', DEFAULT_LIMIT);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new CaqlUserError(`${inv.name}: limit must be an integer from 1 to ${MAX_LIMIT}`);
    const grid = shifted(inv);
    const found = await inv.ctx.source.find(query, limit, grid);
    if (found.truncated) inv.ctx.warnings.push(`${inv.name}('${inv.string(0)}') matched more than ${limit} metrics; only the first ${limit} are used (raise limit=, at most ${MAX_LIMIT})`);
    const wanted = kind === 'histogram' ? 'histogram' : 'numeric';
    const metrics = found.metrics.filter((m) => m.types.includes(wanted)).sort((a, b) => a.name.localeCompare(b.name) || a.uuid.localeCompare(b.uuid));
    if (metrics.length === 0) return [];
    return inv.ctx.source.fetch(grid, metrics.map((m) => streamsOf(kind, m.uuid, m.name)));
  };
}

function metric(kind: string): CaqlFunction {
  return async (inv: Invocation): Promise<Stream[]> => {
    const uuid = inv.string(0);
    if (!UUID.test(uuid)) throw new CaqlUserError(`${inv.name}: '${uuid}' is not a check uuid`);
    return inv.ctx.source.fetch(shifted(inv), [streamsOf(kind, uuid.toLowerCase(), inv.string(1))]);
  };
}

/** The grid with `start_time_offset=` (back by a duration) or `start_time_override=` (epoch s) applied. */
function shifted(inv: Invocation) {
  const override = inv.kwargs.start_time_override;
  if (override !== undefined) {
    const startS = inv.kwNumber('start_time_override', inv.grid.startS);
    return { ...inv.grid, startS: startS - (startS % inv.grid.periodS) };
  }
  const offset = inv.kwDuration('start_time_offset');
  return offset === null ? inv.grid : { ...inv.grid, startS: inv.grid.startS - Math.round(offset / inv.grid.periodS) * inv.grid.periodS };
}

export const SELECT: Record<string, CaqlFunction> = lookupTable({ find: find('average'), metric: metric('average') });
for (const kind of Object.keys(KINDS)) {
  SELECT[`find:${kind}`] = find(kind);
  SELECT[`metric:${kind}`] = metric(kind);
}
