// Graphite globs, carbon lines and tag expressions (model/graphite) on their own.
import test from 'ava';
import fc from 'fast-check';
import { compileGlob, GlobError, levelMatches } from '../../model/graphite/glob.js';
import { parseCarbonLine } from '../../model/graphite/plaintext.js';
import { matchesTagExprs, parseTagExprs, TagExprError } from '../../model/graphite/tag-expr.js';

const matchesName = (pattern: string, name: string) => {
  const g = compileGlob(pattern);
  const levels = name.split('.');
  return levels.length === g.levels.length && g.levels.every((l, i) => levelMatches(l, levels[i]!));
};

/** A plain recursive reference for `*` and `?` within one level. */
function reference(p: string, s: string): boolean {
  if (p === '') return s === '';
  if (p[0] === '*') return reference(p.slice(1), s) || (s !== '' && reference(p, s.slice(1)));
  return s !== '' && (p[0] === '?' || p[0] === s[0]) && reference(p.slice(1), s.slice(1));
}

test('* and ? agree with a reference matcher', (t) => {
  fc.assert(
    fc.property(fc.stringMatching(/^[ab*?]{1,8}$/), fc.stringMatching(/^[ab]{0,8}$/), (p, s) => {
      if (s === '') return true; // empty levels are not names
      return matchesName(p, s) === reference(p, s);
    }),
  );
  t.pass();
});

test('classes, alternatives, levels and literal punctuation', (t) => {
  t.true(matchesName('a.[b-d]x.{e,f*}', 'a.cx.foo'));
  t.false(matchesName('a.[b-d]x.{e,f*}', 'a.ex.foo'));
  t.true(matchesName('a.[!b]', 'a.c'));
  t.false(matchesName('a.[!b]', 'a.b'));
  t.true(matchesName('a+b.(c)|d$', 'a+b.(c)|d$'), 'regex metacharacters are literal');
  t.false(matchesName('a.*', 'a.b.c'), '* stays within a level');
  t.is(compileGlob('graphite.dev.a*.b').literalPrefix, 'graphite.dev.a');
  for (const bad of ['a.[bc', 'a.{b,c', 'a..b', '', 'a.[]', 'a.{b{c}}']) t.throws(() => compileGlob(bad), { instanceOf: GlobError }, bad);
  // adversarial for backtracking engines; RE2 answers in linear time
  t.false(matchesName('*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(5000)));
});

test('carbon lines', (t) => {
  t.deepEqual(parseCarbonLine('a.b 1.5 1700000000', 'dev'), { metricName: 'graphite.dev.a.b', value: 1.5, ts: 1_700_000_000_000 });
  t.deepEqual(parseCarbonLine('a.b\t2\t1700000000.250', 'dev'), { metricName: 'graphite.dev.a.b', value: 2, ts: 1_700_000_000_250 });
  t.is((parseCarbonLine('m;env=prod 1 1', 'x') as { metricName: string }).metricName, 'graphite.x.m|ST[b"ZW52":b"cHJvZA=="]');
  for (const bad of ['a.b 1', 'a.b x 1', 'a.b 1 1.5', 'a.b 1 -1', 'm;env 1 1', ';x=y 1 1']) t.is(typeof parseCarbonLine(bad, 'x'), 'string', bad);
});

test('tag expressions', (t) => {
  const tags = new Map([['name', 'cpu.user'], ['env', 'prod']]);
  const m = (q: string) => matchesTagExprs(parseTagExprs(q), tags);
  t.true(m('env=prod'));
  t.true(m('name=~cpu,env!=dev'));
  t.false(m('name=~user'), 'a regex matches from the start');
  t.true(m('env=prod,dc='), 'dc= matches series without dc');
  t.false(m('env=prod,env!=~p'));
  t.true(m("seriesByTag('name=cpu.user')"));
  for (const bad of ['env', 'env!=x', 'env=', 'name=~(']) t.throws(() => parseTagExprs(bad), { instanceOf: TagExprError }, bad);
});
