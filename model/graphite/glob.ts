// Graphite name globs (irondb-reference §4.6; graphite's metrics/find): a dotted pattern, each
// level matched against one level of a dotted name, with `*` (any run), `?` (one character),
// `[abc]`/`[a-z]`/`[!a]` (a character class) and `{a,b}` (alternatives, each itself a glob).
// Each level compiles to an RE2 (re2js) expression, so matching is linear in the name whatever
// the pattern: nothing here can backtrack on user input.
import { RE2JS } from 're2js';

export class GlobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GlobError';
  }
}

/** A compiled glob: one matcher per dotted level. */
export interface GraphiteGlob {
  levels: readonly LevelMatcher[];
  /** The literal text every matching name starts with (bounds the index scan). */
  literalPrefix: string;
}

export type LevelMatcher = { literal: string } | { re: RE2JS };

export function levelMatches(m: LevelMatcher, level: string): boolean {
  return 'literal' in m ? m.literal === level : m.re.matches(level);
}

const SPECIAL = /[*?[{]/;
/** Characters RE2 needs escaped outside a class. */
const RE_META = /[.+*?()|[\]{}^$\\/-]/g;

export function compileGlob(pattern: string): GraphiteGlob {
  if (pattern.length === 0) throw new GlobError('the query is empty');
  const levels = splitLevels(pattern).map((level, i) => {
    if (level.length === 0) throw new GlobError(`level ${i + 1} of '${pattern}' is empty`);
    if (!SPECIAL.test(level)) return { literal: level };
    const source = translate(level, pattern);
    try {
      return { re: RE2JS.compile(`^(?:${source})$`) };
    } catch (error) {
      throw new GlobError(`level '${level}' of '${pattern}' is not a valid glob: ${(error as Error).message}`);
    }
  });
  const firstSpecial = pattern.search(SPECIAL);
  return { levels, literalPrefix: firstSpecial === -1 ? pattern : pattern.slice(0, firstSpecial) };
}

/** Splits on dots outside `{…}` and `[…]`. */
function splitLevels(pattern: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && depth > 0) depth--;
    else if (c === '.' && depth === 0) {
      out.push(pattern.slice(start, i));
      start = i + 1;
    }
  }
  out.push(pattern.slice(start));
  return out;
}

function translate(glob: string, whole: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) throw new GlobError(`unclosed '[' in '${whole}'`);
      out += charClass(glob.slice(i + 1, close));
      i = close;
    } else if (c === '{') {
      const close = glob.indexOf('}', i + 1);
      if (close === -1) throw new GlobError(`unclosed '{' in '${whole}'`);
      const inner = glob.slice(i + 1, close);
      if (inner.includes('{')) throw new GlobError(`nested '{' in '${whole}'`);
      out += `(?:${inner.split(',').map((alt) => translate(alt, whole)).join('|')})`;
      i = close;
    } else if (c === ']' || c === '}') throw new GlobError(`unmatched '${c}' in '${whole}'`);
    else out += c.replace(RE_META, '\\$&');
  }
  return out;
}

/** `[abc]`, `[a-z]`, `[!abc]` / `[^abc]`: ranges kept, everything else literal. */
function charClass(body: string): string {
  const negate = body.startsWith('!') || body.startsWith('^');
  const chars = negate ? body.slice(1) : body;
  if (chars.length === 0) throw new GlobError(`empty character class '[${body}]'`);
  // RE2 refuses escaped letters and non-ASCII, and needs ASCII punctuation escaped in a class.
  const lit = (c: string) => (/[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]/.test(c) ? `\\${c}` : c);
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const range = c !== '-' && chars[i + 1] === '-' && i + 2 < chars.length;
    out += lit(c);
    if (range) {
      out += `-${lit(chars[i + 2]!)}`;
      i += 2;
    }
  }
  return `[${negate ? '^' : ''}${out}]`;
}
