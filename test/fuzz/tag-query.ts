// Tag queries (docs/tag-query.md) as fuzz input: generated from the grammar — and/or/not/hint
// around leaves whose categories and values take every matcher form (globs, regexes, base64,
// quoted, qualifiers, synthetic tags, activity ranges) — then damaged as text.
import fc from 'fast-check';
import { damagedText, shortHostileString } from './arbitraries.js';
import { FUZZ_UUID } from './harness.js';

/** Regexes RE2 takes (some of them backtracking horrors elsewhere), and some it refuses. */
const REGEXES = ['^fuzz', 'm$', '(a|a)+b', '(a*)*b', '^(([a-z])+.)+[A-Z]([a-z])+$', 'a{1000}', '(?i)CPU', '[[:alpha:]]+', '\\pL', '\\d+', '.*.*.*.*.*=', ''];
const BAD_REGEXES = ['a{1001}', '(?=x)', '\\1', '[', '(', '*'];
const GLOBS = ['*', 'fuzz*', '*m', 'a*a*a*a*a*a*a*a*a*a*a*a*b', '*.*.*', 'c?u', '**', 'web1'];
const ACTIVITY = ['0-2000000000', '1699999000-', '-1700000000', 'now-1d:now', '1700000000+1h:now', 'now-99999999999w:now', '5-3', '1e9-2e9', 'now:1700000000-5m'];

const category = fc.oneof(
  { arbitrary: fc.constantFrom('__name', '__check_uuid', 'host', 'a', 'b', 'dc', '*'), weight: 6 },
  { arbitrary: fc.constantFrom('b"aG9zdA=="', '"host"', '"ho\\"st"', '[exact]host', '[re]ho.t', '/^ho/', 'b/aG8=/'), weight: 2 },
  { arbitrary: fc.stringMatching(/^[a-z_]{1,6}$/), weight: 1 },
);

const value = fc.oneof(
  { arbitrary: fc.constantFrom('fuzz.m', 'up', 'web1', 'cpu', FUZZ_UUID), weight: 4 },
  { arbitrary: fc.constantFrom(...GLOBS), weight: 3 },
  { arbitrary: fc.constantFrom(...REGEXES).map((r) => `/${r}/`), weight: 3 },
  { arbitrary: fc.constantFrom(...GLOBS, ...REGEXES).map((r) => `b"${Buffer.from(r).toString('base64')}"`), weight: 1 },
  { arbitrary: fc.constantFrom('"quoted value"', '"a\\"b"', '"\\\\"'), weight: 1 },
  { arbitrary: fc.constantFrom('[exact]fuzz*', '[re]^fu', '[graphite]fuzz.*.{b,c}', '[graphite]a.?.c', '[default]*', 'b[exact]"ZnV6eg=="'), weight: 2 },
);

/** Values no category takes: refused regexes, bad base64, unknown qualifiers, stray syntax. */
const badValue = fc.oneof(
  fc.constantFrom(...BAD_REGEXES).map((r) => `/${r}/`),
  fc.constantFrom('b"!!"', '"unterminated', '[bogus]x', '/unterminated', 'a(b', 'a,b', ''),
  shortHostileString,
);

const leaf = fc.oneof(
  { arbitrary: fc.tuple(category, value).map(([c, v]) => `${c}:${v}`), weight: 8 },
  { arbitrary: fc.constantFrom(...ACTIVITY).map((a) => `__activity:${a}`), weight: 1 },
  { arbitrary: fc.constantFrom('numeric', 'histogram', 'text', 'numeric*').map((a) => `__type:${a}`), weight: 1 },
  { arbitrary: category, weight: 1 },
  { arbitrary: fc.constant('*:*'), weight: 1 },
  { arbitrary: fc.tuple(fc.oneof(category, fc.constantFrom('__activity', '__type')), badValue).map(([c, v]) => `${c}:${v}`), weight: 1 },
);

const { query } = fc.letrec<{ query: string }>((tie) => ({
  query: fc.oneof(
    { depthSize: 'xsmall', withCrossShrink: true },
    { arbitrary: leaf, weight: 4 },
    { arbitrary: fc.tuple(fc.constantFrom('and', 'or', 'hint'), fc.array(tie('query'), { minLength: 1, maxLength: 3 })).map(([op, args]) => `${op}(${args.join(',')})`), weight: 2 },
    { arbitrary: tie('query').map((q) => `not(${q})`), weight: 1 },
  ),
}));

/** Deep or wide queries, as large as a URL may carry (Node refuses request heads over 16 KiB). */
const huge = fc.constantFrom(
  'and('.repeat(2500) + 'a:b' + ')'.repeat(2500),
  'not('.repeat(500) + '__name:x' + ')'.repeat(500),
  `or(${Array.from({ length: 1200 }, (_, i) => `host:h${i}`).join(',')})`,
  `and(__name:${'a*'.repeat(2000)}b)`,
  `and(__name:/${'(a|a)'.repeat(200)}+b/)`,
);

/** A tag query: mostly an and(...) root as clients send, sometimes anything. */
export const tagQuery: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.array(query, { minLength: 1, maxLength: 3 }).map((qs) => `and(${qs.join(',')})`), weight: 14 },
  { arbitrary: query, weight: 1 },
  { arbitrary: damagedText(query), weight: 2 },
  { arbitrary: shortHostileString, weight: 1 },
  { arbitrary: huge, weight: 1 },
);
