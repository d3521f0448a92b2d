// The CAQL syntax tree (spec/caql.md §3). Operators are parsed into calls of their `op:*`
// function and a pipe `X | F(...)` into F with X as its first source, so evaluation only
// knows calls, literals and constants.

export type Literal =
  | { type: 'number'; value: number }
  | { type: 'string'; value: string }
  | { type: 'duration'; seconds: number }
  | { type: 'null' }
  /** `VIEW_PERIOD`, `VIEW_RANGE`, …: resolved against the request's grid when the call binds. */
  | { type: 'constant'; name: string };

export type Expr =
  | Literal
  | { type: 'call'; name: string; args: Literal[]; kwargs: Record<string, Literal>; sources: Expr[] };

export interface Query {
  /** `#name[=value]` directives, lower-cased names. */
  directives: Record<string, string | true>;
  body: Expr;
}

export class CaqlSyntaxError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(`${message} at offset ${at}`);
    this.name = 'CaqlSyntaxError';
  }
}
