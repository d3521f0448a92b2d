// Functions over whole streams and their metadata (reference "Labels", "top-k", "Package
// tag", "Package group_by", "Package exclude"): label, label:name, tag:*, top/bottom,
// exclude:*, group_by:*.
import { Histogram } from '../../model/histogram/index.js';
import { matchTagQuery, parseTagQuery, TagQueryError, type TagQuery } from '../../model/tag-query/index.js';
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { sig } from '../signature.js';
import { numeric, type Stream } from '../stream.js';
import { formatLabel, tagCategory, tagValue } from './label-format.js';
import { AGGREGATES, present } from './numbers.js';
import { expandGroups, firstMatch, userRegex } from './regex.js';
import { commonTags } from './stats.js';
import { define, perSlot, requireHistogram, requireNumeric, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

const FORMATS = sig('...format:string');

/** Stream i formatted by format i; the last format repeats. */
function formatted(inv: Invocation, streams: readonly Stream[]): string[] {
  const formats = inv.strs('format');
  return streams.map((s, i) => formatLabel(formats[Math.min(i, formats.length - 1)]!, s, i, streams));
}

/** `label(fmt…)`: format i labels stream i. */
const label = define(FORMATS, async (inv) => {
  const streams = await inv.sources();
  const labels = formatted(inv, streams);
  return streams.map((s, i) => ({ ...s, label: labels[i]! }));
});

/** `label:name(fmt…)`: rewrites the canonical name (`%cn`) and so the name (`%n`, the part before `|ST[`). */
const labelName = define(FORMATS, async (inv) => {
  const streams = await inv.sources();
  const names = formatted(inv, streams);
  return streams.map((s, i) => ({ ...s, canonical: names[i]!, name: names[i]!.replace(/\|ST\[.*$/, '') }));
});

/** Tags with every tag of `added`'s categories replaced by `added`. */
const withTags = (tags: readonly string[], added: readonly string[]) => [...tags.filter((t) => !added.some((a) => tagCategory(a) === tagCategory(t))), ...added];

/** `tag(t…)` / `tag:add`: adds `cat:val` tags to every stream (replacing the categories' old values). */
const tagAdd = define(sig('...t:string'), async (inv) => {
  const added = inv.strs('t');
  for (const t of added) if (!/^[^:]+:/.test(t)) throw new CaqlUserError(`${inv.name}: '${t}' is not a cat:val tag`);
  return (await inv.sources()).map((s) => ({ ...s, tags: withTags(s.tags, added) }));
});

/** `tag:remove(category, [value])`: drops the category's tags (only the one value, if given). */
const tagRemove = define(sig('category:string, value:string?'), async (inv) => {
  const [cat, value] = [inv.str('category'), inv.optStr('value')];
  return (await inv.sources()).map((s) => ({ ...s, tags: s.tags.filter((t) => tagCategory(t) !== cat || (value !== undefined && tagValue(t) !== value)) }));
});

/** `tag:synth(format, regex, cat, val)`: a tag made from the groups of `regex` matched in the formatted label ($1, $2, …); no match, no tag. */
const tagSynth = define(sig('format:string, regex:string, cat:string, val:string'), async (inv) => {
  const re = userRegex(inv.name, inv.str('regex'));
  const streams = await inv.sources();
  return streams.map((s, i) => {
    const groups = firstMatch(re, formatLabel(inv.str('format'), s, i, streams));
    if (groups === null) return s;
    return { ...s, tags: withTags(s.tags, [`${expandGroups(inv.str('cat'), groups)}:${expandGroups(inv.str('val'), groups)}`]) };
  });
});

const SCORES: Record<string, (v: number[]) => number | null> = lookupTable({ mean: AGGREGATES.mean!, max: AGGREGATES.max!, min: AGGREGATES.min! });

/** `top(k, method=mean|max|min)` / `bottom`: the k streams ranking highest (lowest) over the view; streams without data rank last. */
function rank(highest: boolean): CaqlFunction {
  return define(sig('k:number=10, method:string=mean'), async (inv) => {
    const k = inv.num('k');
    if (!Number.isInteger(k) || k < 0) throw new CaqlUserError(`${inv.name}: k must be a whole number ≥ 0`);
    const score = SCORES[inv.str('method')];
    if (score === undefined) throw new CaqlUserError(`${inv.name}: method must be mean, max or min, not '${inv.str('method')}'`);
    const scored = (await inv.sources()).map((s) => ({ s, v: score(present(requireNumeric(inv.name, s).values)) }));
    scored.sort((a, b) => (a.v === null ? (b.v === null ? 0 : 1) : b.v === null ? -1 : highest ? b.v - a.v : a.v - b.v));
    return scored.slice(0, k).map((x) => x.s);
  });
}

function tagQueryOf(inv: Invocation, text: string): TagQuery {
  try {
    return parseTagQuery(text);
  } catch (error) {
    if (error instanceof TagQueryError) throw new CaqlUserError(`${inv.name}: ${error.message}`);
    throw error;
  }
}

/** Whether a stream's tags (and name, check uuid, kind) match a tag query, as /find would match its metric. */
function streamMatches(q: TagQuery, s: Stream): boolean {
  const uuid = s.tags.find((t) => t.startsWith('__check_uuid:'));
  const tags = s.tags.filter((t) => !t.startsWith('__')).map((t) => [tagCategory(t), tagValue(t)] as const);
  return matchTagQuery(q, { name: s.name, checkUuid: uuid === undefined ? '' : tagValue(uuid), types: [s.kind], tags, activity: [] }, Date.now() / 1000);
}

/** `exclude(expression)` / `exclude:tags`: drops the streams matching a tag query. */
const exclude = define(sig('expression:string'), async (inv) => {
  const q = tagQueryOf(inv, inv.str('expression'));
  return (await inv.sources()).filter((s) => !streamMatches(q, s));
});

/** `exclude:label(expression)`: drops the streams whose label the regular expression matches (anywhere). */
const excludeLabel = define(sig('expression:string'), async (inv) => {
  const re = userRegex(inv.name, inv.str('expression'));
  return (await inv.sources()).filter((s) => firstMatch(re, s.label) === null);
});

const GROUP_AGGREGATES: Record<string, (v: number[]) => number | null> = lookupTable({
  ...AGGREGATES,
  alwaysone: (v) => (v.length === 0 ? null : 1),
  prod: (v) => (v.length === 0 ? null : v.reduce((a, b) => a * b, 1)),
});

/**
 * `group_by:<method>(cat…)`: one stream per distinct combination of the categories' values
 * (streams without them form one group), labelled by those tags and aggregating its members
 * per slot as stats:<method> would; `merge` merges histograms.
 */
function groupBy(method: string): CaqlFunction {
  return define(sig('...tag:string'), async (inv) => {
    const cats = inv.strs('tag');
    const groups = new Map<string, Stream[]>();
    for (const s of await inv.sources()) {
      const key = cats.map((c) => s.tags.find((t) => tagCategory(t) === c) ?? '').filter((t) => t !== '').join(',');
      groups.set(key, [...(groups.get(key) ?? []), s]);
    }
    return [...groups].map(([key, members]) => {
      const head = { label: key === '' ? method : key, tags: commonTags(members), name: key, canonical: key };
      const slot = (i: number) => members.map((m) => m.values[i] ?? null);
      if (method === 'merge') {
        for (const m of members) requireHistogram(inv.name, m);
        const values = perSlot(inv, (i) => {
          const hs = slot(i).filter((h): h is Histogram => h instanceof Histogram);
          return hs.length === 0 ? null : hs.reduce((acc, h) => acc.merge(h), new Histogram());
        });
        return { ...head, kind: 'histogram' as const, values };
      }
      for (const m of members) requireNumeric(inv.name, m);
      return numeric(head, perSlot(inv, (i) => GROUP_AGGREGATES[method]!(present(slot(i) as (number | null)[]))));
    });
  });
}

export const STREAMS: Record<string, CaqlFunction> = lookupTable({
  label,
  'label:name': labelName,
  tag: tagAdd,
  'tag:add': tagAdd,
  'tag:remove': tagRemove,
  'tag:synth': tagSynth,
  top: rank(true),
  bottom: rank(false),
  exclude,
  'exclude:tags': exclude,
  'exclude:label': excludeLabel,
});
for (const method of [...Object.keys(GROUP_AGGREGATES), 'merge']) STREAMS[`group_by:${method}`] = groupBy(method);
