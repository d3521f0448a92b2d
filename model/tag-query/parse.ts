// Recursive-descent parser for tag queries (irondb-reference §1.3–1.5). Positions in
// errors are 0-based offsets into the query text.
import { parseDurationSeconds } from '../relative-time.js';
import { TagQueryError, type Matcher, type TagQuery, type TimeExpr } from './ast.js';
import { globTest, graphiteTest, PatternError, regexTest, type TextTest } from './pattern.js';

type Qualifier = 'default' | 'exact' | 're' | 'graphite';
const QUALIFIERS: readonly Qualifier[] = ['default', 'exact', 're', 'graphite'];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Characters that end an unquoted literal (a value may contain ':'). */
const CATEGORY_END = new Set([':', ',', '(', ')']);
const VALUE_END = new Set([',', ')']);
/**
 * Deepest and/or/not/hint nesting a query may have. Real queries nest a few levels; without a
 * bound, `and(and(…))` 2,500 deep overflowed the stack of the recursive passes after parsing (500).
 */
export const MAX_QUERY_NESTING = 64;

export function parseTagQuery(text: string): TagQuery {
  const p = new Parser(text);
  p.skipSpace();
  const q = p.node(true);
  p.skipSpace();
  if (!p.done) p.fail("end of query");
  return q;
}

class Parser {
  pos = 0;
  private depth = 0;
  constructor(private readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  fail(expected: string, detail?: string, at = this.pos): never {
    throw new TagQueryError(at, expected, detail);
  }

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  node(top = false): TagQuery {
    const op = /^(and|or|not|hint)\(/.exec(this.text.slice(this.pos, this.pos + 5))?.[1];
    if (op === undefined) {
      if (top) this.fail("'and(', 'or(' or 'not('");
      return this.leaf();
    }
    if (++this.depth > MAX_QUERY_NESTING) this.fail('a shallower query', `queries nest at most ${MAX_QUERY_NESTING} levels of and/or/not/hint`);
    this.pos += op.length + 1;
    const args = this.list();
    this.depth--;
    if (op === 'not' && args.length !== 1) this.fail("exactly one element in not(...)", `not() takes exactly one element, got ${args.length}`);
    if (op === 'not') return { op: 'not', arg: args[0]! };
    // hint(<query>, index:none, ...) evaluates its first element; the hints only steer IRONdb's planner.
    if (op === 'hint') return args[0]!;
    return { op: op as 'and' | 'or', args };
  }

  private list(): TagQuery[] {
    const args: TagQuery[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] === ')' && args.length === 0) this.fail('a query element');
      args.push(this.node());
      this.skipSpace();
      const c = this.text[this.pos];
      this.pos++;
      if (c === ')') return args;
      if (c !== ',') this.fail("',' or ')'", undefined, this.pos - 1);
    }
  }

  private leaf(): TagQuery {
    const start = this.pos;
    const category = this.term(CATEGORY_END, 'a tag category');
    if (this.text[this.pos] !== ':') return { op: 'tag', category, value: null };
    this.pos++;
    if (category.kind === 'exact' && category.value === '__activity') return this.activity(start);
    if (category.kind === 'exact' && category.value === '__type') {
      const value = this.term(VALUE_END, 'a type');
      if (value.kind === 'regex' || (value.kind === 'glob' && value.pattern.includes('*'))) this.fail('numeric, histogram or text', '__type matches exactly (no patterns)', start);
      return { op: 'tag', category, value: value.kind === 'glob' ? { kind: 'exact', value: value.pattern } : value };
    }
    return { op: 'tag', category, value: this.term(VALUE_END, 'a tag value') };
  }

  /** One side of a leaf: optional [qualifier], then b"..", b/../, "..", /../ or a literal. */
  private term(ends: ReadonlySet<string>, what: string): Matcher {
    let q = this.qualifier();
    const at = this.pos;
    if (this.text.startsWith('b"', this.pos) || this.text.startsWith('b/', this.pos) || this.text.startsWith('b[', this.pos)) {
      this.pos++;
      q = this.qualifier() ?? q;
      const delim = this.text[this.pos]!;
      if (delim !== '"' && delim !== '/') this.fail('\'"\' or \'/\' after b', undefined);
      const raw = this.delimited(delim);
      if (!BASE64.test(raw) || raw.length % 4 !== 0) this.fail('base64 text', `invalid base64 '${raw}'`, at);
      const decoded = Buffer.from(raw, 'base64').toString('utf8');
      return this.matcher(delim === '/' ? 're' : q ?? 'default', decoded, at);
    }
    if (this.text[this.pos] === '"') return this.matcher(q ?? 'default', this.quoted(), at);
    if (this.text[this.pos] === '/') return this.matcher('re', this.delimited('/'), at);
    let end = this.pos;
    // A comma inside {…} belongs to a graphite alternative, not to the element list.
    let braces = 0;
    while (end < this.text.length && (braces > 0 || !ends.has(this.text[end]!))) {
      if (this.text[end] === '{') braces++;
      else if (this.text[end] === '}' && braces > 0) braces--;
      end++;
    }
    const literal = this.text.slice(this.pos, end).trim();
    if (literal.length === 0 && ends === CATEGORY_END) this.fail(what);
    this.pos = end;
    return this.matcher(q ?? 'default', literal, at);
  }

  private qualifier(): Qualifier | undefined {
    const m = /^\[(\w+)\]/.exec(this.text.slice(this.pos, this.pos + 12));
    if (m === null) return undefined;
    if (!(QUALIFIERS as readonly string[]).includes(m[1]!)) this.fail('[exact], [re], [default] or [graphite]', `unknown qualifier [${m[1]}]`);
    this.pos += m[0].length;
    return m[1] as Qualifier;
  }

  /** Text up to the closing delimiter; `\` escapes the next character. */
  private delimited(delim: string): string {
    const start = this.pos;
    this.pos++;
    let out = '';
    while (this.pos < this.text.length && this.text[this.pos] !== delim) {
      if (this.text[this.pos] === '\\' && this.pos + 1 < this.text.length) {
        // Inside a regex the escape belongs to the pattern; elsewhere it only protects the delimiter.
        out += delim === '/' && this.text[this.pos + 1] !== '/' ? this.text.slice(this.pos, this.pos + 2) : this.text[this.pos + 1];
        this.pos += 2;
        continue;
      }
      out += this.text[this.pos++];
    }
    if (this.done) this.fail(`closing ${delim}`, `unterminated ${delim}...${delim} starting`, start);
    this.pos++;
    return out;
  }

  /** "..." with \" and \\ escapes. */
  private quoted(): string {
    const start = this.pos;
    this.pos++;
    let out = '';
    for (;;) {
      if (this.done) this.fail('closing "', 'unterminated quoted text starting', start);
      const c = this.text[this.pos++]!;
      if (c === '"') return out;
      if (c === '\\') {
        const next = this.text[this.pos++];
        if (next !== '"' && next !== '\\') this.fail('\\" or \\\\', 'only \\" and \\\\ escapes are allowed in quotes', this.pos - 2);
        out += next;
      } else out += c;
    }
  }

  private matcher(q: Qualifier, text: string, at: number): Matcher {
    switch (q) {
      case 'exact':
        return { kind: 'exact', value: text };
      case 're':
        return { kind: 'regex', source: text, test: compiled(() => regexTest(text), at) };
      case 'graphite':
        return { kind: 'graphite', pattern: text, test: compiled(() => graphiteTest(text), at) };
      default:
        if (!text.includes('*')) return { kind: 'exact', value: text };
        return { kind: 'glob', pattern: text, test: globTest(text) };
    }
  }

  /** `__activity:` value: `start-end` (epoch s, either side optional) or `start:end` (relative forms). */
  private activity(start: number): TagQuery {
    let end = this.pos;
    while (end < this.text.length && !VALUE_END.has(this.text[end]!)) end++;
    const raw = this.text.slice(this.pos, end).trim();
    this.pos = end;
    const bad = (why: string): never => this.fail('an activity range such as 1569869100-1569870000 or -2w:-1w', why, start);
    if (raw.includes(':')) {
      const parts = raw.split(':');
      if (parts.length !== 2 || parts[0] === '' || parts[1] === '') bad(`'${raw}' needs both sides of start:end`);
      return { op: 'activity', start: timeExpr(parts[0]!) ?? bad(`bad time '${parts[0]}'`), end: timeExpr(parts[1]!) ?? bad(`bad time '${parts[1]}'`) };
    }
    const m = /^(\d+(?:\.\d+)?)?-(\d+(?:\.\d+)?)?$/.exec(raw);
    if (m === null) bad(`'${raw}' is not start-end in epoch seconds`);
    const side = (s: string | undefined): TimeExpr | null => (s === undefined ? null : { origin: Number(s), offset: 0 });
    return { op: 'activity', start: side(m![1]), end: side(m![2]) };
  }
}

/** `now`, `1569869100`, `-2w`, `now-1h2m`, `1569869100+5m`. */
function timeExpr(text: string): TimeExpr | null {
  const m = /^\s*(now|\d+(?:\.\d+)?)?\s*(?:([+-])\s*(.+))?$/.exec(text);
  if (m === null || (m[1] === undefined && m[2] === undefined)) return null;
  const origin = m[1] === undefined || m[1] === 'now' ? null : Number(m[1]);
  if (m[2] === undefined) return { origin, offset: 0 };
  const d = parseDurationSeconds(m[3]!);
  return d === null ? null : { origin, offset: m[2] === '-' ? -d : d };
}

function compiled(build: () => TextTest, at: number): TextTest {
  try {
    return build();
  } catch (error) {
    if (error instanceof PatternError) throw new TagQueryError(at, 'a valid regular expression', error.message);
    throw error;
  }
}
