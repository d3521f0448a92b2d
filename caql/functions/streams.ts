// Functions over whole streams (spec/caql.md §5): label, tag, top/bottom, filter:* and
// group_by:*.
import { Histogram } from '../../model/histogram/index.js';
import { CaqlUserError } from '../errors.js';
import { numeric, type Stream } from '../stream.js';
import { commonTags } from './arith.js';
import { requireHistogram, requireNumeric, withValues, type CaqlFunction } from './types.js';
import { maxOf, minOf } from '../../model/extremes.js';
import { lookupTable } from '../../model/lookup-table.js';

/** `label(fmt…)`: format i labels stream i; the last format repeats. */
const label: CaqlFunction = async (inv) => {
  const formats = inv.strings();
  if (formats.length === 0) throw new CaqlUserError('label: needs a format such as %n');
  const streams = await inv.sources();
  return streams.map((s, i) => ({ ...s, label: formatLabel(formats[Math.min(i, formats.length - 1)]!, s, i, streams) }));
};

const tagValue = (tag: string) => tag.slice(tag.indexOf(':') + 1);
const tagCategory = (tag: string) => tag.slice(0, tag.indexOf(':'));

/** Placeholders: %d, %n, %cn, %t{cat}, %tv{cat}, {*} for every visible tag, %t-{…} only tags that vary. */
export function formatLabel(fmt: string, s: Stream, index: number, all: readonly Stream[]): string {
  return fmt.replace(/%(cn|n|d)|%(tv|t)(-?)\{([^}]*)\}/g, (_, simple: string | undefined, form: string, varying: string, cats: string) => {
    if (simple === 'd') return String(index);
    if (simple === 'n') return s.name;
    if (simple === 'cn') return s.canonical;
    const wanted = cats.split(',').map((c) => c.trim());
    let tags = s.tags.filter((t) => !tagCategory(t).startsWith('__') && (wanted.includes('*') || wanted.includes(tagCategory(t))));
    if (varying === '-') tags = tags.filter((t) => !all.every((o) => o.tags.includes(t)));
    return tags.map((t) => (form === 'tv' ? tagValue(t) : t)).join(',');
  });
}

/** `tag(t…)` / `tag:add`: adds `cat:val` tags to every stream. */
const tag: CaqlFunction = async (inv) => {
  const added = inv.strings();
  for (const t of added) if (!t.includes(':')) throw new CaqlUserError(`${inv.name}: '${t}' is not a cat:val tag`);
  return (await inv.sources()).map((s) => ({ ...s, tags: [...s.tags.filter((t) => !added.some((a) => tagCategory(a) === tagCategory(t))), ...added] }));
};

/** `top(k, method=mean|max|min)` / `bottom`: the k streams ranking highest (lowest) over the view. */
function rank(highest: boolean): CaqlFunction {
  return async (inv) => {
    const k = inv.number(0, 10);
    const method = inv.kwString('method', 'mean');
    const score = SCORES[method];
    if (score === undefined) throw new CaqlUserError(`${inv.name}: method must be mean, max or min`);
    const scored = (await inv.sources()).map((s) => ({ s, v: score(requireNumeric(inv.name, s).values.filter((v): v is number => v !== null)) }));
    scored.sort((a, b) => (a.v === null ? 1 : b.v === null ? -1 : highest ? b.v - a.v : a.v - b.v));
    return scored.slice(0, Math.max(0, Math.floor(k))).map((x) => x.s);
  };
}

const SCORES: Record<string, (v: number[]) => number | null> = lookupTable({
  mean: (v) => (v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length),
  max: (v) => (v.length === 0 ? null : maxOf(v)),
  min: (v) => (v.length === 0 ? null : minOf(v)),
});

const COMPARE: Record<string, (a: number, x: number) => boolean> = lookupTable({
  gt: (a, x) => a > x,
  geq: (a, x) => a >= x,
  eq: (a, x) => a === x,
  neq: (a, x) => a !== x,
  leq: (a, x) => a <= x,
  lt: (a, x) => a < x,
});

/** `filter:<all|any>[:not]:<op>(x)` and `…:missing()`: keep whole streams. */
function streamFilter(quantifier: 'all' | 'any', negate: boolean, test: string): CaqlFunction {
  return async (inv) => {
    const check = test === 'missing' ? (v: number | null) => v === null : (v: number | null) => v !== null && COMPARE[test]!(v, inv.number(0));
    return (await inv.sources()).filter((s) => {
      const values = requireNumeric(inv.name, s).values;
      const ok = quantifier === 'all' ? values.every(check) : values.some(check);
      return negate ? !ok : ok;
    });
  };
}

/** `filter:values[:not]:<op>(x)`: values failing the test become NULL. */
function valueFilter(negate: boolean, test: string): CaqlFunction {
  return async (inv) => {
    const x = inv.number(0);
    return (await inv.sources()).map((s) => withValues(s, requireNumeric(inv.name, s).values.map((v) => (v !== null && COMPARE[test]!(v, x) !== negate ? v : null))));
  };
}

/** `group_by:<sum|mean|merge>(cat…)`: one stream per distinct value of the categories. */
function groupBy(method: 'sum' | 'mean' | 'merge'): CaqlFunction {
  return async (inv) => {
    const cats = inv.strings();
    const groups = new Map<string, Stream[]>();
    for (const s of await inv.sources()) {
      const key = cats.map((c) => s.tags.find((t) => tagCategory(t) === c) ?? '').join(',');
      groups.set(key, [...(groups.get(key) ?? []), s]);
    }
    return [...groups].map(([key, members]) => {
      const tags = commonTags(members);
      const head = { label: key === '' ? method : key, tags, name: key, canonical: key };
      if (method === 'merge') {
        const hs = members.map((m) => requireHistogram(inv.name, m));
        const values = Array.from({ length: inv.grid.count }, (_, i) => {
          const present = hs.map((h) => h.values[i] ?? null).filter((h): h is Histogram => h !== null);
          return present.length === 0 ? null : present.reduce((acc, h) => acc.merge(h), new Histogram());
        });
        return { ...head, kind: 'histogram' as const, values };
      }
      const ns = members.map((m) => requireNumeric(inv.name, m));
      const values = Array.from({ length: inv.grid.count }, (_, i) => {
        const present = ns.map((n) => n.values[i] ?? null).filter((v): v is number => v !== null);
        if (present.length === 0) return null;
        const sum = present.reduce((a, b) => a + b, 0);
        return method === 'sum' ? sum : sum / present.length;
      });
      return numeric(head, values);
    });
  };
}

export const STREAMS: Record<string, CaqlFunction> = lookupTable({
  label,
  tag,
  'tag:add': tag,
  top: rank(true),
  bottom: rank(false),
  'group_by:sum': groupBy('sum'),
  'group_by:mean': groupBy('mean'),
  'group_by:merge': groupBy('merge'),
});
for (const test of Object.keys(COMPARE)) {
  STREAMS[`filter:values:${test}`] = valueFilter(false, test);
  STREAMS[`filter:values:not:${test}`] = valueFilter(true, test);
}
for (const quantifier of ['all', 'any'] as const) {
  for (const test of [...Object.keys(COMPARE), 'missing']) {
    STREAMS[`filter:${quantifier}:${test}`] = streamFilter(quantifier, false, test);
    STREAMS[`filter:${quantifier}:not:${test}`] = streamFilter(quantifier, true, test);
  }
}
