// The tag query tree (irondb-reference §1.4–1.5). Patterns are compiled once at parse time,
// because a query is matched against many metrics, into linear-time tests (pattern.ts).
import type { TextTest } from './pattern.js';

/** How one side of a leaf matches text. */
export type Matcher =
  | { kind: 'exact'; value: string }
  /** Literal with `*` wildcards (the default matcher). */
  | { kind: 'glob'; pattern: string; test: TextTest }
  /** RE2 regular expression, unanchored (a search, like PCRE's default). */
  | { kind: 'regex'; source: string; test: TextTest }
  /** Graphite name semantics: `*` and `?` stay within a dotted level, `{a,b}` alternatives, `[…]` classes. */
  | { kind: 'graphite'; pattern: string; test: TextTest };

/** A point in time in an `__activity` range: an origin (epoch s, or null = now) plus an offset in s. */
export interface TimeExpr {
  origin: number | null;
  offset: number;
}

export type TagQuery =
  | { op: 'and' | 'or'; args: TagQuery[] }
  | { op: 'not'; arg: TagQuery }
  /** `category:value`, or a category alone (`value` null: the metric has the category). */
  | { op: 'tag'; category: Matcher; value: Matcher | null }
  /** `__activity:` — the metric was active somewhere in [start, end] (null = unbounded). */
  | { op: 'activity'; start: TimeExpr | null; end: TimeExpr | null };

export class TagQueryError extends Error {
  constructor(
    readonly position: number,
    readonly expected: string,
    detail?: string,
  ) {
    super(`${detail ?? `expected ${expected}`} at position ${position}`);
    this.name = 'TagQueryError';
  }
}
