// A tag query evaluated over one account's postings. Each leaf becomes the union of the
// posting lists of the terms it accepts (enumerated from the sorted term dictionary), or a
// per-id test (`__type`, `__activity`); an `and` starts from its smallest part and filters
// it by the others, so the work follows the selective part however broad the rest is.
// Check tags count as tags of every metric of their check (through `__check_uuid` postings).
import { isAny, matches, type Matcher, type TagQuery, type TimeExpr } from '../../model/tag-query/index.js';
import { difference, intersect, markMembers, select, union } from './id-sets.js';
import type { TermDictionary } from './term-dictionary.js';

/** What a plan reads: one account's dictionaries and the per-id columns. */
export interface PlanContext {
  categories: ReadonlyMap<string, TermDictionary>;
  /** Every id of the account, sorted. */
  universe: Uint32Array;
  /** Larger than every id. */
  bound: number;
  /** Data type names of an id. */
  typesOf(id: number): readonly string[];
  activeBetween(id: number, from: number, to: number): boolean;
  /** Check uuid → its check tags as [category, value] search text (value '' for a category alone). */
  checkTags: ReadonlyMap<string, readonly (readonly [string, string])[]>;
  nowSecs: number;
}

type Plan =
  | { op: 'all'; size: number }
  | { op: 'lists'; lists: Uint32Array[]; size: number }
  | { op: 'test'; test: (id: number) => boolean; size: number }
  | { op: 'and' | 'or'; args: Plan[]; size: number }
  | { op: 'not'; arg: Plan; size: number };

/** Categories every metric has, so a leaf accepting all their values accepts everything. */
const UNIVERSAL = new Set(['__name', '__check_uuid']);

/** The ids (sorted) of the account's metrics that `q` matches. */
export function evaluate(q: TagQuery, ctx: PlanContext): Uint32Array {
  return materialize(compile(q, ctx), ctx);
}

function compile(q: TagQuery, ctx: PlanContext): Plan {
  switch (q.op) {
    case 'and': {
      const args = q.args.map((a) => compile(a, ctx));
      return { op: 'and', args, size: Math.min(...args.map((a) => a.size)) };
    }
    case 'or': {
      const args = q.args.map((a) => compile(a, ctx));
      return { op: 'or', args, size: Math.min(ctx.universe.length, args.reduce((n, a) => n + a.size, 0)) };
    }
    case 'not': {
      const arg = compile(q.arg, ctx);
      return { op: 'not', arg, size: Math.max(0, ctx.universe.length - arg.size) };
    }
    case 'activity': {
      const from = q.start === null ? -Infinity : at(q.start, ctx.nowSecs);
      const to = q.end === null ? Infinity : at(q.end, ctx.nowSecs);
      return { op: 'test', test: (id) => ctx.activeBetween(id, from, to), size: ctx.universe.length };
    }
    case 'tag':
      return leaf(q.category, q.value, ctx);
  }
}

function at(t: TimeExpr, nowSecs: number): number {
  return (t.origin ?? nowSecs) + t.offset;
}

/** `category:value`: postings of each accepted (category, value), types, and checks whose tags match. */
function leaf(category: Matcher, value: Matcher | null, ctx: PlanContext): Plan {
  if (isAny(category) && (value === null || isAny(value))) return { op: 'all', size: ctx.universe.length };
  const lists: Uint32Array[] = [];
  const parts: Plan[] = [];
  let everyMetric = false;
  const categories = category.kind === 'exact' ? [category.value] : [...ctx.categories.keys(), '__type'].filter((c) => matches(category, c));
  for (const c of categories) {
    if (c === '__type') {
      parts.push({ op: 'test', test: (id) => ctx.typesOf(id).some((t) => value === null || matches(value, t)), size: ctx.universe.length });
      continue;
    }
    const dict = ctx.categories.get(c);
    if (dict === undefined) continue;
    const terms = dict.matching(value);
    if (UNIVERSAL.has(c) && terms.length === dict.size) everyMetric = true;
    for (const t of terms) if (t.ids.size > 0) lists.push(t.ids.view());
  }
  const uuids = ctx.categories.get('__check_uuid');
  for (const [uuid, tags] of ctx.checkTags) {
    if (!tags.some(([c, v]) => matches(category, c) && (value === null || matches(value, v)))) continue;
    const t = uuids?.get(uuid);
    if (t !== undefined) lists.push(t.ids.view());
  }
  if (everyMetric) return { op: 'all', size: ctx.universe.length };
  const size = lists.reduce((n, l) => n + l.length, 0);
  const postings: Plan = { op: 'lists', lists, size };
  if (parts.length === 0) return postings;
  return { op: 'or', args: [postings, ...parts], size: ctx.universe.length };
}

/** The ids a plan accepts. */
function materialize(p: Plan, ctx: PlanContext): Uint32Array {
  switch (p.op) {
    case 'all':
      return ctx.universe;
    case 'lists':
      return union(p.lists, ctx.bound);
    case 'test':
      return ctx.universe.filter(p.test);
    case 'or':
      return union(
        p.args.map((a) => materialize(a, ctx)),
        ctx.bound,
      );
    case 'not':
      return difference(ctx.universe, materialize(p.arg, ctx));
    case 'and': {
      const [first, ...rest] = bySize(p.args);
      let ids = materialize(first!, ctx);
      for (const a of rest) {
        if (ids.length === 0) break;
        ids = filter(ids, a, ctx);
      }
      return ids;
    }
  }
}

/** Smallest first; per-id tests and negations last (they cost a test per candidate). */
function bySize(args: Plan[]): Plan[] {
  const rank = (a: Plan) => (a.op === 'test' || a.op === 'not' ? 1 : 0);
  return [...args].sort((a, b) => rank(a) - rank(b) || a.size - b.size);
}

/** The ids of `cands` (sorted) that a plan accepts. */
function filter(cands: Uint32Array, p: Plan, ctx: PlanContext): Uint32Array {
  if (cands.length === 0) return cands;
  switch (p.op) {
    case 'all':
      return cands;
    case 'test':
      return cands.filter(p.test);
    case 'lists': {
      if (p.lists.length === 1) return intersect(cands, p.lists[0]!);
      // Few postings in all: build their union; else look each candidate up in each list.
      if (p.size <= cands.length * 4) return intersect(cands, union(p.lists, ctx.bound));
      const flags = new Uint8Array(cands.length);
      for (const list of p.lists) markMembers(cands, list, flags);
      return select(cands, flags, 1);
    }
    case 'and': {
      let ids = cands;
      for (const a of bySize(p.args)) ids = filter(ids, a, ctx);
      return ids;
    }
    case 'or': {
      const hits: Uint32Array[] = [];
      let rest = cands;
      for (const a of bySize(p.args)) {
        if (rest.length === 0) break;
        const hit = filter(rest, a, ctx);
        hits.push(hit);
        rest = difference(rest, hit);
      }
      return union(hits, ctx.bound);
    }
    case 'not':
      return difference(cands, filter(cands, p.arg, ctx));
  }
}

