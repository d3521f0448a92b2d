// Evaluating a tag query against one metric.
import type { Matcher, TagQuery, TimeExpr } from './ast.js';

/** What the matcher needs to know about one metric. */
export interface MetricView {
  /** The metric name without tags (`__name`). */
  name: string;
  /** Lower-case check uuid (`__check_uuid`). */
  checkUuid: string;
  /** Data types held: `numeric`, `histogram`, `text` (`__type`). */
  types: readonly string[];
  /** Stream tags, decoded; value '' for a category alone. */
  tags: readonly (readonly [string, string])[];
  /** Activity windows [start, end], epoch seconds. */
  activity: readonly (readonly [number, number])[];
}

export function matches(m: Matcher, text: string): boolean {
  switch (m.kind) {
    case 'exact':
      return m.value === text;
    default:
      return m.test(text);
  }
}

/** The tags a leaf can see: the stream tags plus the synthetic `__name`, `__check_uuid`, `__type`. */
function* allTags(v: MetricView): Generator<readonly [string, string]> {
  yield ['__name', v.name];
  yield ['__check_uuid', v.checkUuid];
  for (const t of v.types) yield ['__type', t];
  yield* v.tags;
}

export function matchTagQuery(q: TagQuery, v: MetricView, nowSecs: number): boolean {
  switch (q.op) {
    case 'and':
      return q.args.every((a) => matchTagQuery(a, v, nowSecs));
    case 'or':
      return q.args.some((a) => matchTagQuery(a, v, nowSecs));
    case 'not':
      return !matchTagQuery(q.arg, v, nowSecs);
    case 'activity': {
      const start = q.start === null ? -Infinity : at(q.start, nowSecs);
      const end = q.end === null ? Infinity : at(q.end, nowSecs);
      return v.activity.some(([a, b]) => b >= start && a <= end);
    }
    case 'tag':
      if (isAny(q.category) && (q.value === null || isAny(q.value))) return true; // `*:*` = everything
      for (const [c, val] of allTags(v)) {
        if (matches(q.category, c) && (q.value === null || matches(q.value, val))) return true;
      }
      return false;
  }
}

/** A glob of only `*`: matches any text. */
export function isAny(m: Matcher): boolean {
  return m.kind === 'glob' && /^\*+$/.test(m.pattern);
}

function at(t: TimeExpr, nowSecs: number): number {
  return (t.origin ?? nowSecs) + t.offset;
}
