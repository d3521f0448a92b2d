// The PromQL syntax tree ferrite evaluates (parse.ts builds it from Prometheus' own grammar).
import type { LabelMatcher } from '../prometheus/types.js';

/** `@ <time>`, `@ start()`, `@ end()`: evaluate a selector or subquery at a fixed time. */
export type AtModifier = { kind: 'time'; ms: number } | { kind: 'start' } | { kind: 'end' };

export interface Selector {
  type: 'selector';
  matchers: LabelMatcher[];
  offsetMs: number;
  at: AtModifier | null;
}

export interface MatrixSelector {
  type: 'matrix';
  selector: Selector;
  rangeMs: number;
}

export interface Subquery {
  type: 'subquery';
  expr: Expr;
  rangeMs: number;
  /** null: the default resolution (1 minute). */
  stepMs: number | null;
  offsetMs: number;
  at: AtModifier | null;
}

/** How a binary operation between two vectors pairs their series. */
export interface VectorMatching {
  /** one-to-one, `group_left` (many-to-one), `group_right` (one-to-many); set operators are many-to-many. */
  card: 'one-to-one' | 'many-to-one' | 'one-to-many' | 'many-to-many';
  /** `on(...)` (true) or `ignoring(...)` (false); absent clause = ignoring(). */
  on: boolean;
  labels: string[];
  /** Labels `group_left(...)`/`group_right(...)` copy from the "one" side. */
  include: string[];
}

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '^' | 'atan2' | '==' | '!=' | '>' | '<' | '>=' | '<=' | 'and' | 'or' | 'unless';

export type Expr =
  | { type: 'number'; value: number }
  | { type: 'string'; value: string }
  | Selector
  | MatrixSelector
  | Subquery
  | { type: 'call'; func: string; args: Expr[] }
  | { type: 'aggregate'; op: string; param: Expr | null; expr: Expr; grouping: string[]; without: boolean }
  | { type: 'binary'; op: BinaryOp; lhs: Expr; rhs: Expr; bool: boolean; matching: VectorMatching }
  | { type: 'unary'; op: '-' | '+'; expr: Expr };

/** A query that does not parse, or uses what ferrite does not evaluate (Prometheus' `bad_data`). */
export class PromQLError extends Error {
  override name = 'PromQLError';
}
