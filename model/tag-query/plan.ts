// What the index can use from a query before matching: exact (category, value) pairs every
// match must have, so candidates come from intersecting postings instead of a scan.
import type { TagQuery } from './ast.js';

/** Categories the index keeps no postings for. */
const UNINDEXED = new Set(['__type', '__activity']);

export function requiredPostings(q: TagQuery): (readonly [string, string])[] | null {
  const out = collect(q);
  return out.length === 0 ? null : out;
}

function collect(q: TagQuery): [string, string][] {
  if (q.op === 'and') return q.args.flatMap(collect);
  if (q.op !== 'tag' || q.category.kind !== 'exact' || q.value?.kind !== 'exact') return [];
  return UNINDEXED.has(q.category.value) ? [] : [[q.category.value, q.value.value]];
}

/** Categories every match must have (exact categories of top-level conjuncts). */
export function requiredCategories(q: TagQuery): string[] {
  if (q.op === 'and') return [...new Set(q.args.flatMap(requiredCategories))];
  return q.op === 'tag' && q.category.kind === 'exact' && !UNINDEXED.has(q.category.value) ? [q.category.value] : [];
}
