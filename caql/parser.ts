// CAQL parser (spec/caql.md §3): directives first, then a Pratt parser with the pipe
// binding loosest and unary `!`/`-` tightest. Operators become `op:*` calls.
import { CaqlSyntaxError, type Expr, type Literal, type Query } from './ast.js';
import { tokenize, type Token } from './lexer.js';
import { lookupTable } from '../model/lookup-table.js';

/** Binary operators: binding power and function, loosest first (§3.2). */
const BINARY: Record<string, { power: number; fn: string }> = lookupTable({
  or: { power: 3, fn: 'op:or' },
  and: { power: 4, fn: 'op:and' },
  '==': { power: 5, fn: 'op:eq' },
  '!=': { power: 5, fn: 'op:neq' },
  '>=': { power: 5, fn: 'op:geq' },
  '<=': { power: 5, fn: 'op:leq' },
  '>': { power: 5, fn: 'op:gt' },
  '<': { power: 5, fn: 'op:lt' },
  '+': { power: 6, fn: 'op:sum' },
  '-': { power: 6, fn: 'op:sub' },
  '*': { power: 7, fn: 'op:prod' },
  '/': { power: 7, fn: 'op:div2' },
  '%': { power: 7, fn: 'op:mod' },
  '^': { power: 8, fn: 'op:exp' },
});
const COMPARISON_POWER = 5;
/** Names that are values, not calls (§2). */
export const CONSTANTS = new Set(['VIEW_RANGE', 'VIEW_PERIOD', 'VIEW_PERIOD_SECONDS', 'VIEW_PERIOD_MINUTES', 'VIEW_RANGE_SECONDS', 'VIEW_RANGE_MINUTES']);
/** Deepest nesting of an expression (parentheses, sources, unary chains): far beyond real queries. */
export const MAX_NESTING = 200;
const DIRECTIVE = /\s*#([A-Za-z_]+)(?:=("[^"]*"|'[^']*'|[^\s]+))?/y;

/** The leading `#name[=value]` directives, and where the query proper starts. */
export function parseDirectives(text: string): { directives: Query['directives']; at: number } {
  const directives: Record<string, string | true> = {};
  let at = 0;
  for (;;) {
    DIRECTIVE.lastIndex = at;
    const m = DIRECTIVE.exec(text);
    if (m === null) break;
    const raw = m[2];
    directives[m[1]!.toLowerCase()] = raw === undefined ? true : raw.replace(/^["']|["']$/g, '');
    at = DIRECTIVE.lastIndex;
  }
  return { directives, at };
}

export function parseQuery(text: string): Query {
  const { directives, at } = parseDirectives(text);
  const parser = new Parser(tokenize(text, at));
  const body = parser.expression(0);
  parser.expectEnd();
  return { directives, body };
}

class Parser {
  private i = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.i]!;
  }

  private next(): Token {
    return this.tokens[this.i++]!;
  }

  private isPunct(value: string): boolean {
    const t = this.peek();
    return t.kind === 'punct' && t.value === value;
  }

  private expect(value: string): void {
    if (!this.isPunct(value)) throw new CaqlSyntaxError(`expected '${value}' but found ${describe(this.peek())}`, this.peek().at);
    this.i++;
  }

  expectEnd(): void {
    if (this.peek().kind !== 'end') throw new CaqlSyntaxError(`unexpected ${describe(this.peek())}`, this.peek().at);
  }

  /** Pipes (power 1) and `not` (2) around binary expressions. */
  expression(minPower: number): Expr {
    let left = this.unaryNot();
    for (;;) {
      const t = this.peek();
      if (t.kind === 'punct' && t.value === '|' && minPower <= 1) {
        this.i++;
        const stage = this.primary();
        if (stage.type !== 'call') throw new CaqlSyntaxError('a pipe must be followed by a function call', t.at);
        left = { ...stage, sources: [left, ...stage.sources] };
        continue;
      }
      return left;
    }
  }

  private unaryNot(): Expr {
    return this.nested(() => {
      const t = this.peek();
      if (t.kind === 'name' && t.value === 'not') {
        this.i++;
        return call('op:not', [this.unaryNot()]);
      }
      return this.binary(3);
    });
  }

  /** Runs one level of recursive descent, refusing queries nested beyond MAX_NESTING. */
  private nested(parse: () => Expr): Expr {
    if (++this.depth > MAX_NESTING) throw new CaqlSyntaxError(`the query is nested deeper than ${MAX_NESTING} levels`, this.peek().at);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private binary(minPower: number): Expr {
    let left = this.unary();
    for (;;) {
      const t = this.peek();
      const op = (t.kind === 'punct' || t.kind === 'name') && Object.hasOwn(BINARY, t.value) ? BINARY[t.value]! : null;
      if (op === null || op.power < minPower) return left;
      this.i++;
      // Comparisons do not chain; `^` is right-associative; the rest are left-associative.
      const right = this.nested(() => this.binary(op.fn === 'op:exp' ? op.power : op.power + 1));
      left = call(op.fn, [left, right]);
      if (op.power === COMPARISON_POWER) {
        const again = this.peek();
        if ((again.kind === 'punct' || again.kind === 'name') && BINARY[again.value]?.power === COMPARISON_POWER) throw new CaqlSyntaxError('comparisons do not chain; use parentheses', again.at);
      }
    }
  }

  private unary(): Expr {
    return this.nested(() => {
      const t = this.peek();
      // `not` as an operand (`a or not b`) negates the rest of the boolean expression.
      if (t.kind === 'name' && t.value === 'not') return this.unaryNot();
      if (t.kind === 'punct' && (t.value === '-' || t.value === '!')) {
        this.i++;
        const operand = this.unary();
        if (t.value === '-' && operand.type === 'number') return { type: 'number', value: -operand.value };
        return call(t.value === '-' ? 'op:neg' : 'op:not', [operand]);
      }
      return this.primary();
    });
  }

  private primary(): Expr {
    const t = this.next();
    switch (t.kind) {
      case 'number':
        return { type: 'number', value: t.value };
      case 'duration':
        return { type: 'duration', seconds: t.seconds };
      case 'string':
        return { type: 'string', value: t.value };
      case 'punct':
        if (t.value === '(') {
          const inner = this.expression(0);
          this.expect(')');
          return inner;
        }
        throw new CaqlSyntaxError(`unexpected ${describe(t)}`, t.at);
      case 'name':
        return this.named(t);
      case 'end':
        throw new CaqlSyntaxError('unexpected end of query', t.at);
    }
  }

  private named(t: Token & { kind: 'name' }): Expr {
    if (t.value === 'NULL' || t.value === 'null') return { type: 'null' };
    if (CONSTANTS.has(t.value)) return { type: 'constant', name: t.value };
    const hasArgs = this.isPunct('(');
    const args: Literal[] = [];
    const kwargs: Record<string, Literal> = lookupTable({});
    if (hasArgs) {
      this.i++;
      while (!this.isPunct(')')) {
        const k = this.peek();
        if (k.kind === 'name' && this.tokens[this.i + 1]?.kind === 'punct' && (this.tokens[this.i + 1] as { value: string }).value === '=') {
          this.i += 2;
          if (Object.hasOwn(kwargs, k.value)) throw new CaqlSyntaxError(`keyword argument '${k.value}' is given twice`, k.at);
          kwargs[k.value] = this.literal();
        } else {
          if (Object.keys(kwargs).length > 0) throw new CaqlSyntaxError('positional argument after a keyword argument', k.at);
          args.push(this.literal());
        }
        if (!this.isPunct(',')) break;
        this.i++;
      }
      this.expect(')');
    }
    const sources: Expr[] = [];
    if (this.isPunct('{')) {
      this.i++;
      while (!this.isPunct('}')) {
        sources.push(this.expression(0));
        if (!this.isPunct(',')) break;
        this.i++;
      }
      this.expect('}');
    } else if (!hasArgs) {
      throw new CaqlSyntaxError(`expected '(' or '{' after ${t.value}`, this.peek().at);
    }
    return { type: 'call', name: t.value, args, kwargs, sources };
  }

  /** An argument: a number (maybe negative), string, duration, NULL or a VIEW_* constant. */
  private literal(): Literal {
    const t = this.next();
    if (t.kind === 'punct' && (t.value === '-' || t.value === '+')) {
      const n = this.next();
      if (n.kind === 'number') return { type: 'number', value: t.value === '-' ? -n.value : n.value };
      throw new CaqlSyntaxError(`expected a number after '${t.value}'`, n.at);
    }
    if (t.kind === 'number') return { type: 'number', value: t.value };
    if (t.kind === 'duration') return { type: 'duration', seconds: t.seconds };
    if (t.kind === 'string') return { type: 'string', value: t.value };
    if (t.kind === 'name' && (t.value === 'NULL' || t.value === 'null')) return { type: 'null' };
    if (t.kind === 'name' && CONSTANTS.has(t.value)) return { type: 'constant', name: t.value };
    throw new CaqlSyntaxError(`expected a literal argument but found ${describe(t)}`, t.at);
  }
}

function call(name: string, sources: Expr[]): Expr {
  return { type: 'call', name, args: [], kwargs: {}, sources };
}

function describe(t: Token): string {
  switch (t.kind) {
    case 'end':
      return 'end of query';
    case 'number':
      return `number ${t.value}`;
    case 'duration':
      return `duration ${t.seconds}s`;
    default:
      return `'${t.value}'`;
  }
}
