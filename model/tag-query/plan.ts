// What the index can use from a query before matching: the top-level conjuncts every match
// must satisfy that postings can answer, so candidates come from the smallest of those
// posting ranges instead of a scan of every metric.
import type { Matcher, TagQuery } from './ast.js';
import { isAny } from './match.js';

/** Categories the index keeps no postings for. */
const UNINDEXED = new Set(['__type', '__activity']);

/**
 * A conjunct answered by postings: metrics with a tag of `category` whose value matches
 * `value` (null: any value). Every matching value starts with `literalPrefix`, which
 * bounds the posting range to scan.
 */
export interface PostingSource {
  category: string;
  value: Matcher | null;
  literalPrefix: string;
}

export function postingSources(q: TagQuery): PostingSource[] {
  if (q.op === 'and') return q.args.flatMap(postingSources);
  if (q.op !== 'tag' || q.category.kind !== 'exact' || UNINDEXED.has(q.category.value)) return [];
  if (q.value !== null && isAny(q.value)) return [{ category: q.category.value, value: null, literalPrefix: '' }];
  return [{ category: q.category.value, value: q.value, literalPrefix: q.value === null ? '' : literalPrefix(q.value) }];
}

/** The text every value `m` matches starts with ('' when nothing is known). */
export function literalPrefix(m: Matcher): string {
  switch (m.kind) {
    case 'exact':
      return m.value;
    case 'glob':
      return m.pattern.slice(0, m.pattern.search(/\*|$/));
    case 'graphite':
      return m.pattern.slice(0, m.pattern.search(/[*?{[]|$/));
    case 'regex':
      return regexLiteralPrefix(m.source);
  }
}

const REGEX_SPECIAL = new Set([...'.[]()*+?{}|\\$^']);
const QUANTIFIERS = new Set([...'*+?{']);

/** For `^abc...`: the literal characters after the anchor, minus one a quantifier applies to. */
function regexLiteralPrefix(source: string): string {
  if (!source.startsWith('^')) return '';
  let i = 1;
  while (i < source.length && !REGEX_SPECIAL.has(source[i]!)) i++;
  // `^ab*` or `^ab?`: the quantifier makes the last literal optional.
  if (i < source.length && QUANTIFIERS.has(source[i]!)) i--;
  // An alternation anywhere (`^ab|cd`) lets values skip the prefix altogether.
  return source.includes('|') ? '' : source.slice(1, Math.max(1, i));
}
