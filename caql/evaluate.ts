// Evaluates a parsed CAQL query over a slot grid. Each call looks its name up in the
// function table (caql/functions); sources are evaluated on demand so that functions
// which look back in time (delay, rolling, window) can ask for a wider grid.
import type { Expr, Literal, Query } from './ast.js';
import { CaqlTimeoutError, CaqlUserError } from './errors.js';
import { FUNCTIONS } from './functions/index.js';
import { constant, type DataSource, type Grid, type Stream } from './stream.js';

export interface Context {
  source: DataSource;
  /** Soft problems for DF4 `head.warning`. */
  warnings: string[];
  deadline: number;
  timeoutS: number;
  /** The request's grid, for VIEW_* constants. */
  view: Grid;
}

/** One call being evaluated: its literal arguments and a way to evaluate its sources. */
export class Invocation {
  constructor(
    readonly name: string,
    readonly args: Literal[],
    readonly kwargs: Record<string, Literal>,
    private readonly sourceExprs: Expr[],
    readonly grid: Grid,
    readonly ctx: Context,
  ) {}

  /** All sources' streams, in order, on `grid` (default: this call's). */
  async sources(grid: Grid = this.grid): Promise<Stream[]> {
    return (await this.sourceGroups(grid)).flat();
  }

  /** Each source's streams separately (for operators that pair sources). */
  async sourceGroups(grid: Grid = this.grid): Promise<Stream[][]> {
    return Promise.all(this.sourceExprs.map((e) => evaluate(e, grid, this.ctx)));
  }

  number(i: number, fallback?: number): number {
    const a = this.args[i];
    if (a === undefined) {
      if (fallback === undefined) throw new CaqlUserError(`${this.name}: argument ${i + 1} is required`);
      return fallback;
    }
    if (a.type === 'number') return a.value;
    if (a.type === 'duration') return a.seconds;
    if (a.type === 'string' && a.value.trim() !== '' && Number.isFinite(Number(a.value))) return Number(a.value);
    throw new CaqlUserError(`${this.name}: argument ${i + 1} must be a number`);
  }

  numbers(from = 0): number[] {
    return this.args.slice(from).map((_, k) => this.number(from + k));
  }

  string(i: number, fallback?: string): string {
    const a = this.args[i];
    if (a === undefined) {
      if (fallback === undefined) throw new CaqlUserError(`${this.name}: argument ${i + 1} is required`);
      return fallback;
    }
    if (a.type === 'string') return a.value;
    if (a.type === 'number') return String(a.value);
    throw new CaqlUserError(`${this.name}: argument ${i + 1} must be a string`);
  }

  strings(from = 0): string[] {
    return this.args.slice(from).map((_, k) => this.string(from + k));
  }

  /** A duration argument in seconds; a bare number means minutes (§3.1). */
  duration(i: number, fallback?: number): number {
    const a = this.args[i];
    if (a === undefined) {
      if (fallback === undefined) throw new CaqlUserError(`${this.name}: a duration argument is required`);
      return fallback;
    }
    return literalDuration(this.name, a);
  }

  kwNumber(key: string, fallback: number): number {
    const a = this.kwargs[key];
    if (a === undefined) return fallback;
    if (a.type === 'number') return a.value;
    if (a.type === 'duration') return a.seconds;
    throw new CaqlUserError(`${this.name}: ${key} must be a number`);
  }

  kwString(key: string, fallback: string): string {
    const a = this.kwargs[key];
    if (a === undefined) return fallback;
    if (a.type === 'string') return a.value;
    if (a.type === 'number') return String(a.value);
    throw new CaqlUserError(`${this.name}: ${key} must be a string`);
  }

  kwDuration(key: string): number | null {
    const a = this.kwargs[key];
    return a === undefined ? null : literalDuration(`${this.name} ${key}`, a);
  }
}

function literalDuration(what: string, a: Literal): number {
  if (a.type === 'duration') return a.seconds;
  if (a.type === 'number') return a.value * 60;
  if (a.type === 'string') {
    const n = Number(a.value);
    if (a.value.trim() !== '' && Number.isFinite(n)) return n * 60;
  }
  throw new CaqlUserError(`${what}: expected a duration such as 5m`);
}

export async function evaluate(expr: Expr, grid: Grid, ctx: Context): Promise<Stream[]> {
  if (Date.now() > ctx.deadline) throw new CaqlTimeoutError(ctx.timeoutS);
  switch (expr.type) {
    case 'number':
      return [constant(expr.value, grid)];
    case 'duration':
      return [constant(expr.seconds, grid)];
    case 'null':
      return [constant(null, grid)];
    case 'string':
      throw new CaqlUserError(`a string ('${expr.value}') cannot be a data source`);
    case 'constant':
      return [constant(constantValue(expr.name, ctx.view), grid)];
    case 'call': {
      const fn = FUNCTIONS[expr.name];
      if (fn === undefined) throw new CaqlUserError(`Function not found: ${expr.name}`);
      return fn(new Invocation(expr.name, expr.args, expr.kwargs, expr.sources, grid, ctx));
    }
  }
}

function constantValue(name: string, view: Grid): number {
  const rangeS = view.count * view.periodS;
  switch (name) {
    case 'VIEW_PERIOD':
    case 'VIEW_PERIOD_SECONDS':
      return view.periodS;
    case 'VIEW_PERIOD_MINUTES':
      return view.periodS / 60;
    case 'VIEW_RANGE_MINUTES':
      return rangeS / 60;
    default:
      return rangeS;
  }
}

export async function run(query: Query, grid: Grid, ctx: Context): Promise<Stream[]> {
  return evaluate(query.body, grid, ctx);
}
