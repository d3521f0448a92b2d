// Function signatures: the documented arguments of every CAQL function, so that a call is
// checked before anything runs. An unknown keyword, a missing or surplus argument, a value of
// the wrong type is a user error naming it (IRONdb silently ignored unknown keywords, so a
// misspelt `peroid=` gave a wrong answer with no error).
//
// A signature is written as text: `sig('d:duration, p:number=50, ...t:number?', 'skip:duration?')`.
// The first list is positional (each may also be given by keyword, except a `...` tail that
// collects the remaining positional arguments); the second is keyword-only. `?` marks an
// optional parameter without a default, `=v` an optional one with a default (durations in
// seconds); the rest are required (a required `...` tail needs at least one value).
import type { Literal } from './ast.js';
import { CaqlUserError } from './errors.js';
import { tokenize } from './lexer.js';
import type { Grid } from './stream.js';

export type ParamType = 'number' | 'string' | 'duration' | 'literal';

export interface Param {
  name: string;
  type: ParamType;
  /** Optional: absent unless given (or its default). */
  optional: boolean;
  variadic: boolean;
  default?: number | string;
}

export interface Signature {
  positional: readonly Param[];
  keywords: readonly Param[];
}

/** A bound argument: numbers and durations (in seconds) as numbers, strings as strings, `literal` parameters raw. */
export type ArgValue = number | string | Literal;

const PARAM = /^(\.\.\.)?([A-Za-z_][A-Za-z0-9_]*):(number|string|duration|literal)(\?|=(.*))?$/;

function parseParams(text: string, keywordOnly: boolean): Param[] {
  const params = text.split(',').map((t) => t.trim()).filter((t) => t !== '');
  return params.map((t, i) => {
    const m = PARAM.exec(t);
    if (m === null) throw new Error(`BUG: bad CAQL parameter spec '${t}'`);
    const variadic = m[1] !== undefined;
    if (variadic && (keywordOnly || i !== params.length - 1)) throw new Error(`BUG: only the last positional parameter may be variadic ('${t}')`);
    const type = m[3] as ParamType;
    const param: Param = { name: m[2]!, type, optional: m[4] !== undefined, variadic };
    if (m[5] !== undefined) param.default = type === 'number' || type === 'duration' ? Number(m[5]) : m[5];
    return param;
  });
}

export function sig(positional = '', keywords = ''): Signature {
  return { positional: parseParams(positional, false), keywords: parseParams(keywords, true) };
}

/** The arguments of one call, checked and converted. */
export class BoundArgs {
  constructor(
    readonly fn: string,
    private readonly values: ReadonlyMap<string, ArgValue | ArgValue[]>,
  ) {}

  get(name: string): ArgValue | ArgValue[] | undefined {
    return this.values.get(name);
  }
}

/** Checks a call's arguments against its signature: every problem is a CaqlUserError naming it. */
export function bind(fn: string, s: Signature, args: readonly Literal[], kwargs: Readonly<Record<string, Literal>>, view: Grid): BoundArgs {
  const values = new Map<string, ArgValue | ArgValue[]>();
  const fixed = s.positional.filter((p) => !p.variadic);
  const tail = s.positional.find((p) => p.variadic);
  if (tail === undefined && args.length > fixed.length) {
    throw new CaqlUserError(`${fn}: takes at most ${fixed.length} argument${fixed.length === 1 ? '' : 's'}${fixed.length > 0 ? ` (${fixed.map((p) => p.name).join(', ')})` : ''}, got ${args.length}`);
  }
  args.slice(0, fixed.length).forEach((a, i) => values.set(fixed[i]!.name, convert(fn, fixed[i]!, a, view)));
  if (tail !== undefined) values.set(tail.name, args.slice(fixed.length).map((a) => convert(fn, tail, a, view)));
  for (const [name, lit] of Object.entries(kwargs)) {
    const param = fixed.find((p) => p.name === name) ?? s.keywords.find((p) => p.name === name);
    if (param === undefined) {
      const known = [...fixed, ...s.keywords].map((p) => p.name);
      throw new CaqlUserError(`${fn}: unknown keyword argument '${name}' (${known.length === 0 ? 'it takes none' : `it takes ${known.join(', ')}`})`);
    }
    if (values.has(name)) throw new CaqlUserError(`${fn}: argument '${name}' is given twice`);
    values.set(name, convert(fn, param, lit, view));
  }
  for (const p of [...s.positional, ...s.keywords]) {
    const given = values.get(p.name);
    if (p.variadic ? (given as ArgValue[]).length > 0 : given !== undefined) continue;
    if (p.default !== undefined) values.set(p.name, p.default);
    else if (!p.optional) throw new CaqlUserError(`${fn}: missing argument '${p.name}'`);
  }
  return new BoundArgs(fn, values);
}

const NUMERIC_TEXT = /^\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*$/;

function convert(fn: string, p: Param, raw: Literal, view: Grid): ArgValue {
  const lit = raw.type === 'constant' ? constantLiteral(raw.name, view) : raw;
  const wrong = (what: string) => new CaqlUserError(`${fn}: argument '${p.name}' must be ${what}, got ${describeLiteral(raw)}`);
  switch (p.type) {
    case 'literal':
      return lit;
    case 'string':
      if (lit.type === 'string') return lit.value;
      if (lit.type === 'number') return String(lit.value);
      throw wrong('a string');
    case 'number': {
      const v = lit.type === 'number' ? lit.value : lit.type === 'duration' ? lit.seconds : lit.type === 'string' && NUMERIC_TEXT.test(lit.value) ? Number(lit.value) : null;
      if (v === null || !Number.isFinite(v)) throw wrong('a finite number');
      return v;
    }
    case 'duration': {
      const v = durationSeconds(lit);
      if (v === null || !Number.isFinite(v)) throw wrong('a duration such as 5m');
      return v;
    }
  }
}

/** A duration literal's seconds; a bare number (or numeric string) means minutes; a string may hold a duration ('2h'). */
export function durationSeconds(lit: Literal): number | null {
  if (lit.type === 'duration') return lit.seconds;
  if (lit.type === 'number') return lit.value * 60;
  if (lit.type !== 'string') return null;
  if (NUMERIC_TEXT.test(lit.value)) return Number(lit.value) * 60;
  try {
    const tokens = tokenize(lit.value);
    return tokens.length === 2 && tokens[0]!.kind === 'duration' ? tokens[0].seconds : null;
  } catch {
    return null;
  }
}

/** The VIEW_* constants as argument values: VIEW_PERIOD and VIEW_RANGE are durations, the others numbers (spec/caql.md §2). */
export function constantLiteral(name: string, view: Grid): Literal {
  const rangeS = view.count * view.periodS;
  switch (name) {
    case 'VIEW_PERIOD':
      return { type: 'duration', seconds: view.periodS };
    case 'VIEW_RANGE':
      return { type: 'duration', seconds: rangeS };
    case 'VIEW_PERIOD_SECONDS':
      return { type: 'number', value: view.periodS };
    case 'VIEW_PERIOD_MINUTES':
      return { type: 'number', value: view.periodS / 60 };
    case 'VIEW_RANGE_MINUTES':
      return { type: 'number', value: rangeS / 60 };
    default:
      return { type: 'number', value: rangeS };
  }
}

export function describeLiteral(l: Literal): string {
  switch (l.type) {
    case 'number':
      return `the number ${l.value}`;
    case 'string':
      return `the string '${l.value.length > 40 ? `${l.value.slice(0, 40)}…` : l.value}'`;
    case 'duration':
      return `the duration ${l.seconds}s`;
    case 'null':
      return 'NULL';
    case 'constant':
      return l.name;
  }
}
