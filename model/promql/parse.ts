// PromQL text → ast.ts, through Prometheus' own grammar (@prometheus-io/lezer-promql, the
// parser of Prometheus' web UI). Lezer recovers from errors, so the first error node is
// reported with its position; everything the grammar knows but ferrite does not evaluate
// (duration arithmetic, anchored/smoothed selectors, fill modifiers) is a PromQLError too.
import type { SyntaxNode } from '@lezer/common';
import { parser } from '@prometheus-io/lezer-promql';
import { compileMatcher } from '../prometheus/matchers.js';
import type { LabelMatcher, MatcherType } from '../prometheus/types.js';
import { PromQLError, type AtModifier, type BinaryOp, type Expr, type Selector, type VectorMatching } from './ast.js';
import { lookupTable } from '../lookup-table.js';
import { typeOf } from './signatures.js';

const EXPR_NODES = new Set([
  'AggregateExpr', 'BinaryExpr', 'FunctionCall', 'MatrixSelector', 'NumberDurationLiteral', 'OffsetExpr', 'AnchoredExpr', 'SmoothedExpr',
  'ParenExpr', 'StringLiteral', 'SubqueryExpr', 'UnaryExpr', 'VectorSelector', 'StepInvariantExpr',
]);
const BINARY_OPS: Record<string, BinaryOp> = lookupTable({
  Pow: '^', Mul: '*', Div: '/', Mod: '%', Atan2: 'atan2', Add: '+', Sub: '-', Eql: '==', Neq: '!=', Gtr: '>', Lss: '<', Gte: '>=', Lte: '<=',
  And: 'and', Or: 'or', Unless: 'unless',
});
const MATCH_OPS: Record<string, MatcherType> = lookupTable({ EqlSingle: '=', Neq: '!=', EqlRegex: '=~', NeqRegex: '!~' });
const UNIT_MS: Record<string, number> = lookupTable({ y: 365 * 86400_000, w: 7 * 86400_000, d: 86400_000, h: 3600_000, m: 60_000, s: 1000, ms: 1 });

/** What `step()` and `range()` stand for in duration expressions: the query's step and end − start. */
export interface QueryDurations {
  stepMs: number;
  rangeMs: number;
}

/** Parses and type-checks a query (Prometheus' parse errors and type errors are PromQLErrors). */
export function parsePromQL(text: string, durations: QueryDurations = { stepMs: 0, rangeMs: 0 }): Expr {
  if (text.trim() === '') throw new PromQLError('no expression found in input');
  const source = withHoltWintersRenamed(text);
  const tree = parser.parse(source);
  reportFirstError(tree.topNode, source);
  const top = children(tree.topNode).find(isExpr);
  if (top === undefined) throw new PromQLError('no expression found in input');
  const expr = new Converter(source, durations).expr(top);
  typeOf(expr);
  return expr;
}

/**
 * Prometheus 2's `holt_winters` is 3's `double_exponential_smoothing`; the grammar knows only
 * the new name, so the old one is renamed (outside string literals) before parsing.
 */
function withHoltWintersRenamed(text: string): string {
  if (!text.includes('holt_winters')) return text;
  return text.replace(/("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)|\bholt_winters\b(?=\s*\()/g, (_m, quoted: string | undefined) => quoted ?? 'double_exponential_smoothing');
}

function reportFirstError(top: SyntaxNode, text: string): void {
  const cursor = top.cursor();
  do {
    if (!cursor.type.isError) continue;
    const before = text.slice(0, cursor.from).match(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*$/);
    if (text[cursor.from] === '(' && before !== null) throw new PromQLError(`unknown function with name ${JSON.stringify(before[1])}`);
    const got = text.slice(cursor.from, cursor.to) || (cursor.from >= text.length ? 'end of input' : text[cursor.from]!);
    throw new PromQLError(`parse error at char ${cursor.from + 1}: unexpected ${JSON.stringify(got)}`);
  } while (cursor.next());
}

const isExpr = (n: SyntaxNode): boolean => EXPR_NODES.has(n.type.name);

function children(n: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = n.firstChild; c !== null; c = c.nextSibling) out.push(c);
  return out;
}

class Converter {
  constructor(
    private readonly text: string,
    private readonly durations: QueryDurations,
  ) {}

  private src(n: SyntaxNode): string {
    return this.text.slice(n.from, n.to);
  }

  expr(n: SyntaxNode): Expr {
    const kids = children(n);
    const exprs = kids.filter(isExpr);
    switch (n.type.name) {
      case 'ParenExpr':
        return this.expr(exprs[0]!);
      case 'NumberDurationLiteral':
        return { type: 'number', value: parseNumber(this.src(n)) };
      case 'StringLiteral':
        return { type: 'string', value: unquote(this.src(n)) };
      case 'VectorSelector':
        return this.selector(n);
      case 'MatrixSelector': {
        const inner = this.expr(exprs[0]!);
        if (inner.type !== 'selector' || inner.offsetMs !== 0 || inner.at !== null) throw new PromQLError('ranges only allowed for vector selectors');
        return { type: 'matrix', selector: inner, rangeMs: this.duration(n.getChild('DurationExpr')!) };
      }
      case 'SubqueryExpr': {
        const [range, step] = n.getChildren('DurationExpr');
        return { type: 'subquery', expr: this.expr(exprs[0]!), rangeMs: this.duration(range!), stepMs: step === undefined ? null : this.duration(step), offsetMs: 0, at: null };
      }
      case 'OffsetExpr': {
        const ms = this.offset(n.getChild('OffsetDurationExpr')!);
        return this.postfix(exprs[0]!, (e) => withOffset(e, ms));
      }
      case 'StepInvariantExpr': {
        const at = this.at(n);
        return this.postfix(exprs[0]!, (e) => withAt(e, at));
      }
      case 'UnaryExpr': {
        const op = this.src(n.getChild('UnaryOp')!) as '-' | '+';
        return { type: 'unary', op, expr: this.expr(exprs[0]!) };
      }
      case 'BinaryExpr':
        return this.binary(n, kids, exprs);
      case 'FunctionCall': {
        const name = this.src(n.getChild('FunctionIdentifier')!);
        const args = children(n.getChild('FunctionCallBody')!).filter(isExpr).map((a) => this.expr(a));
        return { type: 'call', func: name, args };
      }
      case 'AggregateExpr':
        return this.aggregate(n);
      default:
        throw new PromQLError(`${this.src(n)}: ${n.type.name === 'AnchoredExpr' || n.type.name === 'SmoothedExpr' ? 'anchored and smoothed selectors are' : 'this expression is'} not supported by ferrite`);
    }
  }

  /**
   * `offset` and `@` bind tighter than any operator in Prometheus' grammar, but the lezer grammar
   * hangs `a - b offset 1m` on the whole `a - b`: the modifier goes to the operand it follows.
   */
  private postfix(n: SyntaxNode, apply: (e: Expr) => Expr): Expr {
    const kids = children(n);
    const exprs = kids.filter(isExpr);
    if (n.type.name === 'BinaryExpr') {
      const e = this.binary(n, kids, exprs) as Extract<Expr, { type: 'binary' }>;
      return { ...e, rhs: this.postfix(exprs[1]!, apply) };
    }
    if (n.type.name === 'UnaryExpr') return { type: 'unary', op: this.src(n.getChild('UnaryOp')!) as '-' | '+', expr: this.postfix(exprs[0]!, apply) };
    return apply(this.expr(n));
  }

  private selector(n: SyntaxNode): Selector {
    const matchers: LabelMatcher[] = [];
    const ident = n.getChild('Identifier');
    if (ident !== null) matchers.push({ type: '=', name: '__name__', value: this.src(ident) });
    const list = n.getChild('LabelMatchers');
    for (const m of list === null ? [] : children(list)) {
      if (m.type.name === 'QuotedLabelName') {
        matchers.push({ type: '=', name: '__name__', value: unquote(this.src(m)) });
        continue;
      }
      const nameNode = m.getChild('LabelName') ?? m.getChild('QuotedLabelName')!;
      const name = nameNode.type.name === 'LabelName' ? this.src(nameNode) : unquote(this.src(nameNode));
      const op = MATCH_OPS[m.getChild('MatchOp')!.firstChild!.type.name]!;
      matchers.push({ type: op, name, value: unquote(this.src(m.getChild('StringLiteral')!)) });
    }
    if (ident !== null && matchers.slice(1).some((m) => m.name === '__name__')) throw new PromQLError(`metric name must not be set twice: ${JSON.stringify(this.src(ident))}`);
    if (!matchers.some((m) => !compileMatcher(m).test(''))) throw new PromQLError('vector selector must contain at least one non-empty matcher');
    return { type: 'selector', matchers, offsetMs: 0, at: null };
  }

  private binary(n: SyntaxNode, kids: SyntaxNode[], exprs: SyntaxNode[]): Expr {
    const opNode = kids.find((k) => BINARY_OPS[k.type.name] !== undefined && !isExpr(k));
    if (opNode === undefined) throw new PromQLError(`${this.src(n)}: this operator is not supported by ferrite`);
    const op = BINARY_OPS[opNode.type.name]!;
    if (n.getChild('FillModifier') !== null) throw new PromQLError('fill modifiers are not supported by ferrite');
    const setOp = op === 'and' || op === 'or' || op === 'unless';
    const clause = n.getChild('MatchingModifierClause');
    let matching: VectorMatching = { card: setOp ? 'many-to-many' : 'one-to-one', on: false, labels: [], include: [] };
    if (clause !== null) {
      const [labels, include] = clause.getChildren('GroupingLabels');
      const card = clause.getChild('GroupLeft') !== null ? 'many-to-one' : clause.getChild('GroupRight') !== null ? 'one-to-many' : matching.card;
      matching = { card, on: clause.getChild('On') !== null, labels: this.labelList(labels!), include: include === undefined ? [] : this.labelList(include) };
    }
    const bool = n.getChild('BoolModifier') !== null;
    return { type: 'binary', op, lhs: this.expr(exprs[0]!), rhs: this.expr(exprs[1]!), bool, matching };
  }

  private aggregate(n: SyntaxNode): Expr {
    const op = this.src(n.getChild('AggregateOp')!);
    const mod = n.getChild('AggregateModifier');
    const args = children(n.getChild('FunctionCallBody')!).filter(isExpr).map((a) => this.expr(a));
    const takesParam = ['topk', 'bottomk', 'quantile', 'count_values', 'limitk', 'limit_ratio'].includes(op);
    if (args.length !== (takesParam ? 2 : 1)) throw new PromQLError(`wrong number of arguments for aggregate expression provided, expected ${takesParam ? 2 : 1}, got ${args.length}`);
    return {
      type: 'aggregate',
      op,
      param: takesParam ? args[0]! : null,
      expr: args[takesParam ? 1 : 0]!,
      grouping: mod === null ? [] : this.labelList(mod.getChild('GroupingLabels')!),
      without: mod?.getChild('Without') !== null && mod !== null,
    };
  }

  private labelList(n: SyntaxNode): string[] {
    return children(n).map((l) => (l.type.name === 'QuotedLabelName' ? unquote(this.src(l)) : this.src(l)));
  }

  /** A duration: `5m`, `1h30m`, a plain number of seconds, or arithmetic on them (Prometheus 3's duration expressions). */
  private duration(n: SyntaxNode): number {
    const ms = Math.round(this.durationSeconds(n) * 1000);
    if (!Number.isFinite(ms)) throw new PromQLError(`${this.src(n)}: not a finite duration`);
    return ms;
  }

  private durationSeconds(n: SyntaxNode): number {
    const kids = children(n);
    const first = kids[0];
    if (first === undefined) throw new PromQLError(`${this.src(n)}: empty duration`);
    switch (first.type.name) {
      case 'NumberDurationLiteralInDurationContext':
        return parseNumber(this.src(first));
      case 'DurationStep':
        return this.durations.stepMs / 1000;
      case 'DurationRange':
        return this.durations.rangeMs / 1000;
      case 'DurationMinOf':
      case 'DurationMaxOf': {
        const [a, b] = n.getChildren('DurationExpr').map((d) => this.durationSeconds(d));
        return first.type.name === 'DurationMinOf' ? Math.min(a!, b!) : Math.max(a!, b!);
      }
      case 'UnaryOp':
        return (this.src(first) === '-' ? -1 : 1) * this.durationSeconds(kids[1]!);
      case 'DurationExpr': {
        if (kids.length === 1) return this.durationSeconds(first);
        const a = this.durationSeconds(first);
        const b = this.durationSeconds(kids[2]!);
        const op = BINARY_OPS[kids[1]!.type.name];
        if (op === '/' && b === 0) throw new PromQLError('division by zero in duration expression');
        if (op === '%' && b === 0) throw new PromQLError('modulo by zero in duration expression');
        return op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : op === '/' ? a / b : op === '%' ? a % b : a ** b;
      }
      default:
        // `(` DurationExpr `)`
        return this.durationSeconds(n.getChild('DurationExpr')!);
    }
  }

  private offset(n: SyntaxNode): number {
    const kids = children(n);
    if (kids[0]?.type.name === 'UnaryOp') return (this.src(kids[0]) === '-' ? -1 : 1) * this.offset(kids[1]!);
    return this.duration(n);
  }

  private at(n: SyntaxNode): AtModifier {
    const pre = n.getChild('AtModifierPreprocessors');
    if (pre !== null) return pre.getChild('AtStart') !== null ? { kind: 'start' } : { kind: 'end' };
    const seconds = parseNumber(this.src(n.getChild('NumberDurationLiteral')!));
    if (!Number.isFinite(seconds)) throw new PromQLError('timestamp out of bounds for @ modifier');
    return { kind: 'time', ms: Math.round(seconds * 1000) };
  }
}

/** Offsets apply to the selectors and subqueries an expression is made of (Prometheus: directly). */
function withOffset(e: Expr, ms: number): Expr {
  switch (e.type) {
    case 'selector':
      if (e.offsetMs !== 0) throw new PromQLError('offset may not be set multiple times');
      return { ...e, offsetMs: ms };
    case 'matrix':
      return { ...e, selector: withOffset(e.selector, ms) as Selector };
    case 'subquery':
      if (e.offsetMs !== 0) throw new PromQLError('offset may not be set multiple times');
      return { ...e, offsetMs: ms };
    default:
      throw new PromQLError('offset modifier must be preceded by an instant vector selector or range vector selector or a subquery');
  }
}

function withAt(e: Expr, at: AtModifier): Expr {
  switch (e.type) {
    case 'selector':
    case 'subquery':
      if (e.at !== null) throw new PromQLError('@ <timestamp> may not be set multiple times');
      return { ...e, at };
    case 'matrix':
      return { ...e, selector: withAt(e.selector, at) as Selector };
    case 'unary':
      return { ...e, expr: withAt(e.expr, at) };
    default:
      throw new PromQLError('@ modifier must be preceded by an instant vector selector or range vector selector or a subquery');
  }
}

export function durationMs(text: string): number {
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const re = /(\d+)(ms|y|w|d|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    consumed += m[0].length;
  }
  if (consumed !== text.length || text.length === 0) throw new PromQLError(`not a valid duration string: ${JSON.stringify(text)}`);
  return total;
}

export function parseNumber(raw: string): number {
  let text = raw.replace(/\s+/g, '');
  let sign = 1;
  if (text.startsWith('-') || text.startsWith('+')) {
    if (text[0] === '-') sign = -1;
    text = text.slice(1);
  }
  text = text.replace(/_/g, '');
  const lower = text.toLowerCase();
  if (lower === 'inf') return sign * Infinity;
  if (lower === 'nan') return NaN;
  if (lower.startsWith('0x')) return sign * parseInt(lower.slice(2), 16);
  if (/^(\d+(ms|y|w|d|h|m|s))+$/.test(text)) return (sign * durationMs(text)) / 1000;
  const v = Number(text);
  if (Number.isNaN(v)) throw new PromQLError(`bad number or duration syntax: ${JSON.stringify(raw)}`);
  return sign * v;
}

const ESCAPES: Record<string, string> = lookupTable({ a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"' });

/** A string literal as Go unquotes it: `"…"` and `'…'` with escapes, `` `…` `` raw. */
export function unquote(lit: string): string {
  const q = lit[0];
  if (lit.length < 2 || lit[lit.length - 1] !== q) throw new PromQLError(`unterminated quoted string ${lit}`);
  const body = lit.slice(1, -1);
  if (q === '`') return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    if (e === undefined) throw new PromQLError(`invalid escape at the end of ${lit}`);
    if (ESCAPES[e] !== undefined) {
      out += ESCAPES[e];
      continue;
    }
    const hex = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    if (hex > 0) {
      const digits = body.slice(i + 1, i + 1 + hex);
      if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) throw new PromQLError(`invalid escape \\${e}${digits} in ${lit}`);
      out += e === 'x' ? String.fromCharCode(parseInt(digits, 16)) : String.fromCodePoint(parseInt(digits, 16));
      i += hex;
      continue;
    }
    const octal = body.slice(i, i + 3);
    if (/^[0-7]{3}$/.test(octal)) {
      out += String.fromCharCode(parseInt(octal, 8));
      i += 2;
      continue;
    }
    throw new PromQLError(`unknown escape sequence \\${e} in ${lit}`);
  }
  return out;
}
