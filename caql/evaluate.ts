// Evaluates a parsed CAQL query over a slot grid. Every call is first checked against its
// signature (the whole tree, before any data is read); then each call looks its name up in
// the function table (caql/functions) and evaluates its sources on demand, so that functions
// which look back in time (delay, rolling, window) can ask for a wider grid.
import type { Expr, Literal, Query } from './ast.js';
import { CaqlTimeoutError, CaqlUserError } from './errors.js';
import { lookupFunction } from './functions/index.js';
import { bind, constantLiteral, type ArgValue, type BoundArgs } from './signature.js';
import { constant, type DataSource, type Grid, type Stream } from './stream.js';

/** What `explain` reports of one call of the query. */
export interface CallStats {
  /** Times the call ran (a window reading a wider grid, `delay(a, b)`, … run their sources again). */
  evaluations: number;
  /** Streams it answered, summed over its evaluations. */
  streams: number;
  kinds: Set<string>;
  ms: number;
}

export interface Context {
  source: DataSource;
  /** Soft problems for DF4 `head.warning`. */
  warnings: string[];
  deadline: number;
  timeoutS: number;
  /** The request's grid, for VIEW_* constants. */
  view: Grid;
  /** When set (`explain=true`), each call's statistics are gathered here. */
  explain?: Map<Expr, CallStats>;
  /** Checked arguments of every call, filled before evaluation starts. */
  bindings?: Map<Expr, BoundArgs>;
}

/** One call being evaluated: its checked arguments and a way to evaluate its sources. */
export class Invocation {
  constructor(
    readonly name: string,
    private readonly args: BoundArgs,
    private readonly sourceExprs: readonly Expr[],
    readonly grid: Grid,
    readonly ctx: Context,
  ) {}

  get sourceCount(): number {
    return this.sourceExprs.length;
  }

  /** All sources' streams, in order, on `grid` (default: this call's). */
  async sources(grid: Grid = this.grid): Promise<Stream[]> {
    return (await this.sourceGroups(grid)).flat();
  }

  /** Each source's streams separately (for operators that pair sources). */
  async sourceGroups(grid: Grid = this.grid): Promise<Stream[][]> {
    return Promise.all(this.sourceExprs.map((e) => evaluate(e, grid, this.ctx)));
  }

  given(name: string): boolean {
    const v = this.args.get(name);
    return v !== undefined && !(Array.isArray(v) && v.length === 0);
  }

  /** A number or duration (seconds) parameter that is required or has a default. */
  num(name: string): number {
    return this.required(name) as number;
  }

  optNum(name: string): number | undefined {
    return this.args.get(name) as number | undefined;
  }

  str(name: string): string {
    return this.required(name) as string;
  }

  optStr(name: string): string | undefined {
    return this.args.get(name) as string | undefined;
  }

  /** A variadic number or duration parameter's values. */
  nums(name: string): number[] {
    return (this.args.get(name) ?? []) as number[];
  }

  strs(name: string): string[] {
    return (this.args.get(name) ?? []) as string[];
  }

  /** A `literal` parameter as written (constants resolved). */
  lit(name: string): Literal | undefined {
    return this.args.get(name) as Literal | undefined;
  }

  warn(message: string): void {
    if (!this.ctx.warnings.includes(message)) this.ctx.warnings.push(message);
  }

  /** Long loops call this now and then: a query past its `_timeout` stops even mid-function. */
  checkDeadline(): void {
    checkDeadline(this.ctx);
  }

  private required(name: string): ArgValue {
    const v = this.args.get(name);
    if (v === undefined) throw new Error(`BUG: ${this.name} reads parameter '${name}' it does not declare as required`);
    return v as ArgValue;
  }
}

function checkDeadline(ctx: Context): void {
  if (Date.now() > ctx.deadline) throw new CaqlTimeoutError(ctx.timeoutS);
}

export async function evaluate(expr: Expr, grid: Grid, ctx: Context): Promise<Stream[]> {
  // One microtask turn per call: the caller's stack unwinds before this call runs, so a
  // pipeline of any length (10,000 `| pass()` stages) never grows the stack.
  await undefined;
  checkDeadline(ctx);
  switch (expr.type) {
    case 'number':
      return [constant(expr.value, grid)];
    case 'duration':
      return [constant(expr.seconds, grid)];
    case 'null':
      return [constant(null, grid)];
    case 'string':
      throw new CaqlUserError(`a string ('${expr.value}') cannot be a data source`);
    case 'constant': {
      const lit = constantLiteral(expr.name, ctx.view);
      return [constant(lit.type === 'duration' ? lit.seconds : (lit as { value: number }).value, grid)];
    }
    case 'call':
      return call(expr, grid, ctx);
  }
}

async function call(expr: Expr & { type: 'call' }, grid: Grid, ctx: Context): Promise<Stream[]> {
  const fn = lookupFunction(expr.name);
  if (fn === undefined) throw new CaqlUserError(`Function not found: ${expr.name}`);
  const args = ctx.bindings?.get(expr) ?? bind(expr.name, fn.sig, expr.args, expr.kwargs, ctx.view);
  const started = performance.now();
  const out = await fn.run(new Invocation(expr.name, args, expr.sources, grid, ctx));
  if (ctx.explain !== undefined) {
    const stats = ctx.explain.get(expr) ?? { evaluations: 0, streams: 0, kinds: new Set(), ms: 0 };
    stats.evaluations++;
    stats.streams += out.length;
    for (const s of out) stats.kinds.add(s.kind);
    stats.ms += performance.now() - started;
    ctx.explain.set(expr, stats);
  }
  return out;
}

/**
 * Checks every call of the tree before anything is evaluated: unknown functions, bad
 * arguments, strings used as sources. Iterative, as a pipeline may be thousands of stages deep.
 */
export function check(body: Expr, ctx: Context): Map<Expr, BoundArgs> {
  const bindings = new Map<Expr, BoundArgs>();
  const pending: Expr[] = [body];
  while (pending.length > 0) {
    const e = pending.pop()!;
    if (e.type === 'string') throw new CaqlUserError(`a string ('${e.value}') cannot be a data source`);
    if (e.type !== 'call') continue;
    const fn = lookupFunction(e.name);
    if (fn === undefined) throw new CaqlUserError(`Function not found: ${e.name}`);
    bindings.set(e, bind(e.name, fn.sig, e.args, e.kwargs, ctx.view));
    for (let i = e.sources.length - 1; i >= 0; i--) pending.push(e.sources[i]!);
  }
  return bindings;
}

export async function run(query: Query, grid: Grid, ctx: Context): Promise<Stream[]> {
  ctx.bindings = check(query.body, ctx);
  return evaluate(query.body, grid, ctx);
}
