// The Graphite API (irondb-reference §4.6), as graphite-web's storage finder (graphite-irondb)
// and gosnowth use it: metrics/find over the dotted name hierarchy, tags/find by Graphite tag
// expressions, and series reads of average data. Searches go through the cluster-wide find
// (find-service), reads through the fetch engine (which asks owners for what this node lacks).
import { compileGlob, levelMatches } from '../../../model/graphite/glob.js';
import { graphiteName } from '../../../model/graphite/plaintext.js';
import { matchesTagExprs, parseTagExprs } from '../../../model/graphite/tag-expr.js';
import type { FindResult, GetResult, LeafData } from '../../../model/graphite/flatbuffers.js';
import { canonicalizeMetricName, tagSearchText, type CanonicalName } from '../../../model/metric-name.js';
import { parseTransform } from '../../../model/fetch/transforms.js';
import type { AccountId } from '../../../model/types.js';
import { runFetch } from '../fetch.js';
import { find, type FindRow } from '../find.js';
import type { NodeApi } from '../../api.js';

export interface GraphiteScope {
  account: AccountId;
  /** The optional query prefix of the URL: prepended to queries and names, left out of answers. */
  prefix: string;
  activityStart: number | null;
  activityEnd: number | null;
  /** Results at most (null = no limit). */
  limit: number | null;
}

interface Series {
  uuid: string;
  checkName: string;
  name: CanonicalName;
}

/** `metrics/find`: branches and leaves one level below what `query` matches. */
export async function findMetrics(node: NodeApi, s: GraphiteScope, query: string, tagFilter: string | null): Promise<FindResult[]> {
  const glob = compileGlob(s.prefix + query);
  const nameQuery = `__name:${quoted(glob.literalPrefix + '*')}`;
  const series = await searchSeries(node, s, tagFilter === null ? `and(${nameQuery})` : `and(${tagFilter},${nameQuery})`);
  const depth = glob.levels.length;
  const out = new Map<string, FindResult>();
  for (const m of series) {
    const levels = m.name.name.split('.');
    if (levels.length < depth || !glob.levels.every((l, i) => levelMatches(l, levels[i]!))) continue;
    if (levels.length === depth) {
      const name = graphiteName(m.name.name, m.name.tags).slice(s.prefix.length);
      out.set(`1${name}`, { leaf: true, name, leaf_data: leafData(m) });
    } else {
      const name = levels.slice(0, depth).join('.').slice(s.prefix.length);
      out.set(`0${name}`, { leaf: false, name });
    }
  }
  return limited([...out.values()], s.limit);
}

/** `tags/find`: the series whose name and tags satisfy every Graphite tag expression. */
export async function findTagged(node: NodeApi, s: GraphiteScope, query: string): Promise<FindResult[]> {
  const exprs = parseTagExprs(query);
  // Candidates: the exact positive expressions as a tag query (base64, so any text is safe).
  const exact = exprs.filter((e) => e.op === '=' && e.value !== '').map((e) => `${e.tag === 'name' ? '__name' : `b[exact]${quoted64(e.tag)}`}:b[exact]${quoted64(e.value)}`);
  if (s.prefix !== '') exact.push(`__name:${quoted(s.prefix + '*')}`);
  const series = await searchSeries(node, s, `and(${exact.length > 0 ? exact.join(',') : '__name:*'})`);
  const out: FindResult[] = [];
  for (const m of series) {
    if (!m.name.name.startsWith(s.prefix)) continue;
    const tags = new Map(m.name.tags.map((t) => [tagSearchText(t.category), tagSearchText(t.value ?? '')]));
    tags.set('name', m.name.name.slice(s.prefix.length));
    if (!matchesTagExprs(exprs, tags)) continue;
    out.push({ leaf: true, name: graphiteName(m.name.name, m.name.tags).slice(s.prefix.length), leaf_data: leafData(m) });
  }
  return limited(out, s.limit);
}

/** A name to read: a Graphite name, or graphite-irondb's `{leaf_name, leaf_data}`. */
export type SeriesName = string | { leaf_name: string; leaf_data: { uuid: string; name: string } };

/** Average values per `step` for each name that resolves; unknown names are left out. */
export async function readSeries(node: NodeApi, s: GraphiteScope, names: readonly SeriesName[], start: number, end: number, step: number): Promise<GetResult> {
  const from = start - (start % step);
  const count = Math.max(1, Math.ceil((end - from) / step));
  const resolved = (await Promise.all(names.map((n) => resolveName(node, s, n)))).filter((r) => r !== null);
  const result: GetResult = { from, to: from + count * step, step, series: {} };
  if (resolved.length === 0) return result;
  const average = parseTransform('numeric', 'average', [], 'transform');
  const streams = resolved.map((r) => ({ uuid: r.uuid, name: r.canonical, kind: 'numeric' as const, transform: average, label: r.key }));
  const columns = await runFetch(node, { startMs: from * 1000, periodMs: step * 1000, count, streams, reduce: [{ label: '', method: 'pass' as const, params: [] }] });
  columns.forEach((c, i) => (result.series[resolved[i]!.key] = c.values as (number | null)[]));
  return result;
}

async function resolveName(node: NodeApi, s: GraphiteScope, n: SeriesName): Promise<{ key: string; uuid: string; canonical: string } | null> {
  if (typeof n !== 'string') {
    // A leaf names its metric exactly; one that is no metric name resolves to nothing, as a bad string name does.
    const named = canonicalizeMetricName(n.leaf_data.name);
    return named.ok ? { key: n.leaf_name, uuid: n.leaf_data.uuid, canonical: named.value.canonical } : null;
  }
  const [plain, ...tagParts] = n.split(';');
  const tags = tagParts.map((p) => {
    const eq = p.indexOf('=');
    return `b"${Buffer.from(eq === -1 ? p : p.slice(0, eq)).toString('base64')}":b"${Buffer.from(eq === -1 ? '' : p.slice(eq + 1)).toString('base64')}"`;
  });
  const wanted = canonicalizeMetricName(`${s.prefix}${plain}${tags.length > 0 ? `|ST[${tags.join(',')}]` : ''}`);
  if (!wanted.ok) return null;
  const series = await searchSeries(node, { ...s, limit: null }, `and(__name:b[exact]${quoted64(wanted.value.name)})`);
  const hit = series.find((m) => m.name.canonical === wanted.value.canonical);
  return hit === undefined ? null : { key: n, uuid: hit.uuid, canonical: hit.name.canonical };
}

/** Numeric metrics matching a tag query, across the cluster, sorted by name. */
async function searchSeries(node: NodeApi, s: GraphiteScope, query: string): Promise<Series[]> {
  const answer = await find(
    node,
    { kind: 'tags', account: s.account, query, activityStart: s.activityStart, activityEnd: s.activityEnd, limit: null, activity: false, latest: 0, down: [] as string[], verifyOwner: false },
    false,
  );
  return answer.rows.filter((r) => r.types.includes('numeric')).flatMap((r) => seriesOf(r)).sort((a, b) => (a.name.canonical < b.name.canonical ? -1 : a.name.canonical > b.name.canonical ? 1 : 0));
}

function seriesOf(row: FindRow): Series[] {
  const parsed = canonicalizeMetricName(row.name);
  if (!parsed.ok) return [];
  return [{ uuid: row.uuid, checkName: (JSON.parse(row.json) as { check_name: string }).check_name, name: parsed.value }];
}

function leafData(m: Series): LeafData {
  return { uuid: m.uuid, check_name: m.checkName, name: m.name.canonical, category: 'graphite', egress_function: 'avg' };
}

function limited<T extends { name: string }>(results: T[], limit: number | null): T[] {
  results.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return limit === null ? results : results.slice(0, limit);
}

/** A tag-query term for `text` (quoted: `*` stays a glob, other characters are literal). */
function quoted(text: string): string {
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}

function quoted64(text: string): string {
  return `"${Buffer.from(text, 'utf8').toString('base64')}"`;
}
