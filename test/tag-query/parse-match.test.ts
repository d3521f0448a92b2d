// The tag query language: grammar forms, qualifiers, escapes, synthetic tags, activity,
// error positions, and the postings the index may rely on.
import test from 'ava';
import { literalPrefix, matchTagQuery, parseTagQuery, postingSources, TagQueryError, type MetricView, type TagQuery } from '../../model/tag-query/index.js';

const NOW = 1_700_000_000;
const metric = (over: Partial<MetricView> = {}): MetricView => ({
  name: 'foo',
  checkUuid: '1b988fd7-d1e1-48ec-848e-55709511d43f',
  types: ['numeric'],
  tags: [['region', 'us-east-1'], ['app', 'myapp'], ['~(category)', '<value>'], ['flag', '']],
  activity: [[NOW - 7200, NOW - 3600]],
  ...over,
});
const m = (q: string, v: MetricView = metric()) => matchTagQuery(parseTagQuery(q), v, NOW);
const b64 = (s: string) => Buffer.from(s).toString('base64');

test('and, or, not and nesting', (t) => {
  t.true(m('and(__name:foo,region:us-east-1)'));
  t.false(m('and(__name:foo,region:us-west-1)'));
  t.true(m('or(region:us-west-1,app:myapp)'));
  t.true(m('not(region:us-west-1)'));
  t.false(m('not(region:us-east-1)'));
  t.true(m('or(and(region:us-east-2,app:myapp),and(__name:foo,not(app:other)))'));
  t.true(m(' and( __name:foo , app:myapp ) '), 'spaces around elements');
});

test('globs, regexes, and the catch-all', (t) => {
  t.true(m('and(region:us-*)'));
  t.true(m('and(reg*:*east*)'));
  t.false(m('and(region:us-*-2)'));
  t.true(m('and(region:/us-east-.*/)'));
  t.true(m('and(/^reg/:/east/)'));
  t.false(m('and(region:/^east/)'));
  t.true(m('and(*:*)', metric({ tags: [] })), '*:* is everything');
  t.true(m('and(__name:/^f.o$/)'));
});

test('category alone and empty values', (t) => {
  t.true(m('and(app)'));
  t.false(m('and(host)'));
  t.true(m('and(flag:)'));
});

test('qualifiers: exact, re, default, graphite', (t) => {
  t.false(m('and(region:[exact]us-*)'));
  t.true(m('and(region:[exact]us-*)', metric({ tags: [['region', 'us-*']] })));
  t.true(m('and(region:[re]^us-east)'));
  t.true(m('and(region:[default]us-*)'));
  const dotted = metric({ name: 'prod.web01.requests.count' });
  t.true(m('and(__name:[graphite]prod.*.*.count)', dotted));
  t.false(m('and(__name:[graphite]prod.*.count)', dotted), '* stays within one level');
  t.true(m('and(__name:[graphite]prod.{web01,web02}.requests.count)', dotted));
  t.throws(() => parseTagQuery('and(a:[fuzzy]b)'), { instanceOf: TagQueryError, message: /unknown qualifier \[fuzzy\]/ });
});

test('base64 and quoted terms', (t) => {
  t.true(m(`and(b"${b64('~(category)')}":b"${b64('<value>')}")`));
  t.true(m(`and(region:b/${b64('us-(east|west)')}/)`));
  t.true(m('and("~(category)":"<value>")'));
  t.true(m('and(q:"say \\"hi\\" \\\\ bye")', metric({ tags: [['q', 'say "hi" \\ bye']] })));
  t.true(m('and(x:"a*")', metric({ tags: [['x', 'abc']] })), 'a * inside quotes is still a glob');
  t.false(m('and(x:[exact]"a*")', metric({ tags: [['x', 'abc']] })));
  t.true(m(`and(x:b[exact]"${b64('a*')}")`, metric({ tags: [['x', 'a*']] })));
  t.throws(() => parseTagQuery('and(x:b"@@@")'), { instanceOf: TagQueryError, message: /base64/ });
  t.throws(() => parseTagQuery('and(x:"a\\qb")'), { instanceOf: TagQueryError });
});

test('synthetic tags: __name, __check_uuid, __type', (t) => {
  t.true(m('and(__check_uuid:1b988fd7-d1e1-48ec-848e-55709511d43f)'));
  t.true(m('and(__type:numeric)'));
  t.false(m('and(__type:text)'));
  t.true(m('and(__type:text)', metric({ types: ['numeric', 'text'] })));
  t.throws(() => parseTagQuery('and(__type:num*)'), { instanceOf: TagQueryError, message: /__type matches exactly/ });
});

test('__activity: hyphen and colon forms', (t) => {
  t.true(m(`and(__activity:${NOW - 5000}-${NOW - 4000})`));
  t.false(m(`and(__activity:${NOW - 100}-${NOW})`));
  t.true(m(`and(__activity:-${NOW})`), 'missing start = beginning of time');
  t.true(m(`and(__activity:${NOW - 4000}-)`), 'missing end = end of time');
  t.true(m('and(__activity:now-2h:now-1h)'));
  t.true(m('and(__activity:-1h30m:now)'));
  t.false(m('and(__activity:-30m:now)'));
  t.true(m(`and(__activity:${NOW - 7200}:${NOW - 7200}+1h)`));
  t.throws(() => parseTagQuery('and(__activity:-1h)'), { instanceOf: TagQueryError });
  t.throws(() => parseTagQuery('and(__activity:now-1x:now)'), { instanceOf: TagQueryError });
});

test('errors name the position and what was expected', (t) => {
  const err = (q: string) => t.throws(() => parseTagQuery(q), { instanceOf: TagQueryError }) as TagQueryError;
  t.is(err('and(a:b').position, 7);
  t.regex(err('and(a:b').message, /expected ',' or '\)' at position 7/);
  t.is(err('__name:foo').expected, "'and(', 'or(' or 'not('");
  t.regex(err('not(a:b,c:d)').message, /exactly one element/);
  t.regex(err('and()').message, /expected a query element at position 4/);
  t.is(err('and(a:b))').position, 8);
  t.regex(err('and(x:/[/)').message, /invalid regular expression/);
  t.regex(err('and(x:"open)').message, /unterminated/);
  t.throws(() => parseTagQuery(''), { instanceOf: TagQueryError });
});

test('nesting is bounded: 64 levels parse, the 65th is an error at its position', (t) => {
  const nested = (depth: number, op = 'and') => `${op}(`.repeat(depth) + 'a:b' + ')'.repeat(depth);
  t.false(m(nested(64)));
  t.true(m(nested(63, 'not')), 'an odd number of not() negates');
  const e = t.throws(() => parseTagQuery(nested(65)), { instanceOf: TagQueryError }) as TagQueryError;
  t.is(e.position, 64 * 4);
  t.regex(e.message, /at most 64 levels/);
  // The fuzzers' counterexample: 2,500 levels overflowed the stack after parsing (500).
  t.throws(() => parseTagQuery(nested(2500)), { instanceOf: TagQueryError });
});

/** (category, value kind or null, literal prefix) of each posting source. */
const sources = (q: string) => postingSources(parseTagQuery(q)).map((s) => [s.category, s.value?.kind ?? null, s.literalPrefix]);

test('posting sources: top-level conjuncts with an exact category', (t) => {
  t.deepEqual(sources('and(__name:foo,region:us-*,and(app:myapp))'), [
    ['__name', 'exact', 'foo'],
    ['region', 'glob', 'us-'],
    ['app', 'exact', 'myapp'],
  ]);
  t.deepEqual(sources('or(__name:foo,__name:bar)'), []);
  t.deepEqual(sources('and(not(__name:foo))'), []);
  t.deepEqual(sources('and(__type:numeric)'), []);
  t.deepEqual(sources('and(/reg/:x)'), []);
  t.deepEqual(sources('and(host)'), [['host', null, '']]);
  t.deepEqual(sources('and(host:*)'), [['host', null, '']]);
  t.deepEqual(sources('and("a b":"c d")'), [['a b', 'exact', 'c d']]);
});

test('literal prefixes never exclude a value the matcher accepts', (t) => {
  const valueOf = (q: string) => ((parseTagQuery(q) as Extract<TagQuery, { op: 'and' | 'or' }>).args[0] as Extract<TagQuery, { op: 'tag' }>).value!;
  const cases: [string, string][] = [
    ['and(h:web*)', 'web'],
    ['and(h:*web)', ''],
    ['and(h:/^web-[0-9]+$/)', 'web-'],
    ['and(h:/^webs?x/)', 'web'],
    ['and(h:/^web*/)', 'we'],
    ['and(h:/^ab|cd/)', ''],
    ['and(h:/web/)', ''],
    ['and(h:/^a\\.b/)', 'a'],
    ['and(h:[graphite]a.b*.c)', 'a.b'],
  ];
  for (const [q, prefix] of cases) t.is(literalPrefix(valueOf(q)), prefix, q);
  const samples = ['web', 'web-1', 'webx', 'wex', 'we', 'cd', 'abc', 'a.b', 'a.bz.c', 'x-web'];
  for (const [q] of cases) {
    const m = valueOf(q);
    for (const v of samples) if ('test' in m && m.test(v)) t.true(v.startsWith(literalPrefix(m)), `${q} ${v}`);
  }
});

test('hint() evaluates its query', (t) => {
  t.true(m('and(hint(__name:foo,index:none))'));
});
