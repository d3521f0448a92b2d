// Data selection (spec/caql.md §4, reference "Package find", "Package metric", "Package
// graphite", "Package search"): `find[:kind](name_pattern, [tag_query], limit=1000)` resolves
// through tag search (activity within the view), sorted by name, and reads the matches
// through the fetch engine with the kind's transform; `metric[:kind](uuid, name)` reads one
// metric without searching; `graphite:find[:kind]` matches dotted names with Graphite globs
// (`**` across levels); `search:metric[:kind]` is the deprecated spelling of find.
import { graphiteSource } from '../../model/tag-query/index.js';
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { sig } from '../signature.js';
import type { FetchStream, Grid, Stream } from '../stream.js';
import { define, type CaqlFunction } from './types.js';
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
const FIND_KEYWORDS = `limit:number=${DEFAULT_LIMIT}, start_time_override:number?, start_time_offset:duration?`;

/** The tag query of `find(name_pattern, [tag_query])`: a lone full tag query stands as is. */
export function findQuery(pattern: string, tagQuery: string | null): string {
  const p = pattern.trim();
  if (tagQuery === null && /^(and|or|not)\s*\(/.test(p)) return p;
  return withTagQuery(`__name:${p}`, tagQuery);
}

const withTagQuery = (name: string, tagQuery: string | null) => (tagQuery === null || tagQuery.trim() === '' ? `and(${name})` : `and(${name},${tagQuery.trim()})`);

/** A Graphite glob as an anchored, base64-quoted regex on `__name` (`**` spans levels, `*` one). */
export function graphiteQuery(pattern: string, tagQuery: string | null): string {
  const source = `^${graphiteSource(pattern.trim(), true)}$`;
  return withTagQuery(`__name:b/${Buffer.from(source).toString('base64')}/`, tagQuery);
}

function streamsOf(kind: string, uuid: string, name: string): FetchStream {
  const transform = KINDS[kind]!;
  return { uuid, name, kind: transform === 'none' ? 'histogram' : 'numeric', transform };
}

/** Searches with `query` and reads every numeric (or histogram) match as `kind`. */
async function search(inv: Invocation, kind: string, query: string, what: string): Promise<Stream[]> {
  const limit = inv.num('limit');
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new CaqlUserError(`${inv.name}: limit must be an integer from 1 to ${MAX_LIMIT}`);
  const grid = shifted(inv);
  const found = await inv.ctx.source.find(query, limit, grid);
  if (found.truncated) inv.warn(`${inv.name}(${what}) matched more than ${limit} metrics; only the first ${limit} are used (raise limit=, at most ${MAX_LIMIT})`);
  const wanted = kind === 'histogram' ? 'histogram' : 'numeric';
  const metrics = found.metrics.filter((m) => m.types.includes(wanted)).sort((a, b) => a.name.localeCompare(b.name) || a.uuid.localeCompare(b.uuid));
  if (metrics.length === 0) return [];
  return inv.ctx.source.fetch(grid, metrics.map((m) => streamsOf(kind, m.uuid, m.name)));
}

function find(kind: string): CaqlFunction {
  return define(sig('name_pattern:string, tag_query:string?', FIND_KEYWORDS), (inv) =>
    search(inv, kind, findQuery(inv.str('name_pattern'), inv.optStr('tag_query') ?? null), `'${inv.str('name_pattern')}'`),
  );
}

function graphiteFind(kind: string): CaqlFunction {
  return define(sig('pattern:string, tag_query:string?', FIND_KEYWORDS), (inv) => search(inv, kind, graphiteQuery(inv.str('pattern'), inv.optStr('tag_query') ?? null), `'${inv.str('pattern')}'`));
}

function searchMetric(kind: string): CaqlFunction {
  return define(sig('pattern:string', FIND_KEYWORDS), (inv) => {
    inv.warn(`${inv.name} is deprecated; use find${kind === 'average' ? '' : `:${kind}`}`);
    return search(inv, kind, findQuery(inv.str('pattern'), null), `'${inv.str('pattern')}'`);
  });
}

function metric(kind: string): CaqlFunction {
  return define(sig('check_uuid:string, metric_name:string', 'start_time_override:number?, start_time_offset:duration?'), async (inv) => {
    const uuid = inv.str('check_uuid');
    if (!UUID.test(uuid)) throw new CaqlUserError(`${inv.name}: '${uuid}' is not a check uuid`);
    return inv.ctx.source.fetch(shifted(inv), [streamsOf(kind, uuid.toLowerCase(), inv.str('metric_name'))]);
  });
}

/** `metriccluster(id)`: deprecated; ferrite has no metric clusters, so it selects nothing (and says so). */
const metriccluster = define(sig('id:number'), async (inv) => {
  inv.warn(`metriccluster(${inv.num('id')}) is deprecated and selects nothing: ferrite has no metric clusters; use find()`);
  return [];
});

/** The grid with `start_time_offset=` (back by a duration) or `start_time_override=` (epoch s) applied. */
function shifted(inv: Invocation): Grid {
  const override = inv.optNum('start_time_override');
  if (override !== undefined) return { ...inv.grid, startS: override - (((override % inv.grid.periodS) + inv.grid.periodS) % inv.grid.periodS) };
  const offset = inv.optNum('start_time_offset');
  return offset === undefined ? inv.grid : { ...inv.grid, startS: inv.grid.startS - Math.round(offset / inv.grid.periodS) * inv.grid.periodS };
}

export const SELECT: Record<string, CaqlFunction> = lookupTable({
  find: find('average'),
  metric: metric('average'),
  'graphite:find': graphiteFind('average'),
  'search:metric': searchMetric('average'),
  metriccluster,
});
for (const kind of Object.keys(KINDS)) {
  SELECT[`find:${kind}`] = find(kind);
  SELECT[`metric:${kind}`] = metric(kind);
  SELECT[`graphite:find:${kind}`] = graphiteFind(kind);
  SELECT[`search:metric:${kind}`] = searchMetric(kind);
}
