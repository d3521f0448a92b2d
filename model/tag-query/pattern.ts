// Linear-time text patterns for matching user input. A query is matched against many
// metrics, and a backtracking engine lets one pattern (`a*a*a*a*b`, `/^(a|a)+b$/`) hold the
// whole node; so globs use a greedy segment scan and regular expressions run on RE2
// (re2js: no backreferences or lookaround, matching time linear in the text).
import { RE2JS } from 're2js';

/** A compiled pattern: does `text` match? */
export type TextTest = (text: string) => boolean;

/**
 * A `*` wildcard glob, anchored at both ends. Leftmost-first placement of each literal
 * segment is optimal for `*`-only globs, so a single pass decides (at worst text × pattern).
 */
export function globTest(pattern: string): TextTest {
  const parts = pattern.split('*');
  if (parts.length === 1) return (text) => text === pattern;
  const head = parts[0]!;
  const tail = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((p) => p.length > 0);
  const fixed = head.length + tail.length;
  return (text) => {
    if (text.length < fixed || !text.startsWith(head) || !text.endsWith(tail)) return false;
    let at = head.length;
    const end = text.length - tail.length;
    for (const part of middle) {
      const found = text.indexOf(part, at);
      if (found === -1 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

export class PatternError extends Error {}

/** An RE2 regular expression, unanchored (a search, as PCRE's default); throws PatternError when it does not compile. */
export function regexTest(source: string): TextTest {
  const re = compileRe2(source);
  return (text) => re.test(text);
}

/** Graphite name globs: `*` and `?` stay within a dotted level, `{a,b}` alternatives, `[…]` classes; anchored. */
export function graphiteTest(pattern: string): TextTest {
  const re = compileRe2(graphiteSource(pattern));
  return (text) => re.testExact(text);
}

function compileRe2(source: string): RE2JS {
  try {
    return RE2JS.compile(source);
  } catch (error) {
    throw new PatternError(`invalid regular expression /${source}/: ${(error as Error).message}`);
  }
}

/** A Graphite glob as RE2 source; with `globstar`, `**` matches across levels (CAQL's graphite:find). */
export function graphiteSource(pattern: string, globstar = false): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (globstar && pattern.startsWith('**', i)) {
      out += '.*';
      i++;
    } else if (c === '*') out += '[^.]*';
    else if (c === '?') out += '[^.]';
    else if (c === '{') {
      const close = pattern.indexOf('}', i);
      if (close === -1) return RE2JS.quote(pattern);
      out += `(?:${pattern.slice(i + 1, close).split(',').map(RE2JS.quote).join('|')})`;
      i = close;
    } else if (c === '[') {
      const close = pattern.indexOf(']', i + 1);
      if (close === -1) out += RE2JS.quote(c);
      else {
        out += `[${pattern.slice(i + 1, close).replace(/[\\\]]/g, '\\$&')}]`;
        i = close;
      }
    } else out += RE2JS.quote(c);
  }
  return out;
}
