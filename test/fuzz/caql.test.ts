// Fuzz: CAQL on /extension/lua/caql_v1 (and /public/caql_v1), GET with a query string and
// POST with a JSON body. Queries come from the grammar — every function of the table called
// as its signature describes (arguments of the parameters' types, the keywords it takes, now
// and then a surplus argument or an unknown keyword), with sources, pipes, operators, vectors,
// durations, strings, directives, long pipelines — then damaged as text; parameters (start,
// end, period, _timeout, format incl. PQ/PQR, explain, account_id) take edge values.
import test from 'ava';
import fc from 'fast-check';
import { FUNCTIONS } from '../../caql/functions/index.js';
import type { Param } from '../../caql/signature.js';
import { damagedText, deepJson, hostileJson, hostileNumber, hostileParam, jsonText, metricNameArb, numberText, shortHostileString, withHostileFields } from './arbitraries.js';
import { caqlError, ferriteError, fuzz, FUZZ_ACCOUNT, FUZZ_METRICS, FUZZ_UUID, useFuzzNode, type ErrorShape } from './harness.js';
import { tagQuery } from './tag-query.js';

const node = useFuzzNode(test);

/**
 * CAQL answers every user error in its own shape; only what Node or Fastify refuse before
 * the route runs (a request head over 16 KiB) comes in another, without one of our codes.
 */
const shape: ErrorShape = (j) => caqlError(j) || (ferriteError(j) && !String((j as { code?: unknown }).code).startsWith('FER_ERR_'));

const NAMES = Object.keys(FUNCTIONS);
/** A CAQL string literal (which has no escapes): in double quotes, else single, else percent-encoded. */
const str = (s: string) => (!s.includes('"') ? `"${s}"` : !s.includes("'") ? `'${s}'` : `p"${encodeURIComponent(s)}"`);
const duration = fc.oneof(fc.constantFrom('1m', '5m', '1h', '1d 6h', '10s', '0s', '100000000d', '2w', 'VIEW_PERIOD', 'VIEW_RANGE'), fc.nat(1000).map((n) => `${n}m`));
const number = fc.oneof(hostileNumber.map(String), fc.constantFrom('0', '1', '2', '0.5', '50', '99', '100', '-1', '1e300', 'VIEW_PERIOD_SECONDS', 'VIEW_RANGE_MINUTES'));
/** Strings the catalogue's string parameters take: label formats, tags, zones, fields, regexes, models, tag queries. */
const text = fc.oneof(
  fc.constantFrom('%n', '%cn', '%d', '%t{host}', '%tv{*}', '%-t{*}', '%tv-{a,b}', '%t{', 'host', 'host:web1', 'a:1', 'env', 'UTC', 'US/Eastern', 'Europe/Berlin', 'Mars/Olympus', 'hour', 'weekday', 'yearday', 'fortnight'),
  fc.constantFrom('(.)', '^fuzz\\.([^.]+)', '(a*)*b', '[', '$1', '\\1', 'linear', 'exp', 'constant', 'rising', 'periodic', 'periodic weekly', 'auto', 'normal', 'uniform', 'zipf', 'start', 'end', 'mean', 'max', '1h', 'fuzz*', '**', 'fuzz.**'),
  tagQuery,
  fc.oneof(metricNameArb, shortHostileString.map((s) => s.slice(0, 40))),
);
const atom = fc.oneof(
  { arbitrary: number, weight: 3 },
  { arbitrary: duration, weight: 2 },
  { arbitrary: text.map(str), weight: 2 },
  { arbitrary: fc.constantFrom(`'single'`, `p'%41%zz'`, `"unterminated`, 'NULL'), weight: 1 },
);
/** An argument for a parameter: mostly of its type, sometimes anything. */
const argFor = (p: Param) => fc.oneof({ arbitrary: p.type === 'number' ? number : p.type === 'duration' ? duration : p.type === 'string' ? text.map(str) : atom, weight: 4 }, { arbitrary: atom, weight: 1 });

/** Sources that read the fuzz data: metric(), find() and find:<kind>() with tag queries. */
const source = fc.oneof(
  fc.constantFrom(...FUZZ_METRICS.numeric, ...FUZZ_METRICS.histogram, ...FUZZ_METRICS.text).map((n) => `metric(${str(FUZZ_UUID)}, ${str(n)})`),
  fc.constantFrom(...FUZZ_METRICS.histogram).map((n) => `metric:histogram(${str(FUZZ_UUID)}, ${str(n)})`),
  fc.tuple(fc.constantFrom('find', 'find:average', 'find:count', 'find:histogram', 'find:counter', 'find:derivative', 'graphite:find', 'search:metric'), fc.constantFrom('fuzz*', 'up', '*', 'x', 'fuzz.**'), fc.option(tagQuery)).map(
    ([f, pattern, q]) => `${f}(${str(pattern)}${q === null ? '' : `, ${str(q)}`})`,
  ),
);

/**
 * A call of a catalogue function as its signature describes it: positional arguments of the
 * parameters' types (sometimes one too many), keywords it takes (sometimes one it does not).
 */
const callOf = (sources: fc.Arbitrary<string[]>) =>
  fc.constantFrom(...NAMES).chain((name) => {
    const { positional, keywords } = FUNCTIONS[name]!.sig;
    const named = [...positional.filter((p) => !p.variadic), ...keywords];
    const args = fc.tuple(...positional.map((p) => fc.option(argFor(p), { freq: 4 })), fc.option(atom, { freq: 6 })).map((xs) => {
      const given = xs.slice(0, positional.length);
      const cut = given.indexOf(null);
      return [...(cut < 0 ? given : given.slice(0, cut)), ...(cut < 0 && xs[positional.length] !== null ? [xs[positional.length]!] : [])] as string[];
    });
    const kwargs = fc.subarray([...named.map((p) => p.name), 'nonsense', 'limit', 'period']).chain((keys) =>
      fc.tuple(...keys.map((k) => { const p = named.find((q) => q.name === k); return (p === undefined ? atom : argFor(p)).map((v) => `${k}=${v}`); })),
    );
    return fc.tuple(args, kwargs, sources).map(([a, k, srcs]) => `${name}(${[...a, ...k].join(', ')})${srcs.length === 0 ? '' : `{${srcs.join(', ')}}`}`);
  });

const { expr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'xsmall', withCrossShrink: true },
    { arbitrary: source, weight: 4 },
    { arbitrary: atom, weight: 2 },
    { arbitrary: callOf(fc.array(tie('expr'), { maxLength: 2 })), weight: 4 },
    { arbitrary: fc.tuple(tie('expr'), callOf(fc.constant([]))).map(([x, f]) => `${x} | ${f}`), weight: 3 },
    { arbitrary: fc.tuple(tie('expr'), fc.constantFrom('+', '-', '*', '/', '%', '^', '==', '!=', '>=', '<', 'and', 'or'), tie('expr')).map(([a, op, b]) => `${a} ${op} ${b}`), weight: 2 },
    { arbitrary: fc.tuple(fc.constantFrom('-', '!', 'not '), tie('expr')).map(([op, x]) => `${op}(${x})`), weight: 1 },
    { arbitrary: fc.tuple(tie('expr'), fc.constantFrom('vector("%tv{host}")', 'vector("%n", sloppy=1)')).map(([x, v]) => `op:div{${x} | ${v}, ${x} | ${v}} | vector:unpack()`), weight: 1 },
  ),
}));

const directive = fc.constantFrom('', '', '', '', '', '', '', '', '', '', '', '', '#min_period=10s ', '#min_period=1 ', '#min_period=0s ', '#min_period=abc ', '#lang="promql" ', '#lang="promql" #lookback_window=30s ', '#lookback_window=x ', '#lang="sql" ', '#lang ');
const query = fc.oneof(
  { arbitrary: fc.tuple(directive, expr).map(([d, e]) => d + e), weight: 8 },
  { arbitrary: damagedText(expr), weight: 2 },
  { arbitrary: fc.constantFrom('('.repeat(250) + '1' + ')'.repeat(250), '-'.repeat(300) + '1', `1${' | pass()'.repeat(3000)}`, `find("fuzz*")${' | window:sum(1m)'.repeat(200)}`, '#lang="promql" rate(up[5m])', '#lang="promql" sum by (host) (up', '// only a comment'), weight: 1 },
  { arbitrary: shortHostileString, weight: 1 },
);

const T0 = 1_700_000_000;
/** Parameters for views of at most a few days at 60 s: the edges come from hostile replacements. */
const params = fc.record(
  {
    query,
    start: fc.integer({ min: T0 - 86_400, max: T0 }),
    end: fc.integer({ min: T0 + 60, max: T0 + 86_400 }),
    period: fc.constantFrom(60, 300, 10, 3600),
    format: fc.oneof({ arbitrary: fc.constantFrom('DF1', 'DF4'), weight: 6 }, { arbitrary: fc.constantFrom('df4', 'PQ', 'PQR'), weight: 1 }),
    explain: fc.oneof({ arbitrary: fc.boolean(), weight: 6 }, { arbitrary: fc.constantFrom('true', 1, 'maybe'), weight: 1 }),
    account_id: fc.constant(FUZZ_ACCOUNT),
  },
  { requiredKeys: ['query', 'start', 'end'] },
);

const getRequest = fc
  .tuple(fc.constantFrom('/extension/lua/caql_v1', '/extension/lua/public/caql_v1'), fc.oneof({ arbitrary: params, weight: 3 }, { arbitrary: withHostileFields(params, 2, hostileParam), weight: 1 }), fc.boolean())
  .map(([path, p, useQ]) => {
    const q = Object.fromEntries(Object.entries(p).map(([k, v]) => [k === 'query' && useQ ? 'q' : k, String(v)]));
    return { method: 'GET' as const, path: `${path}?${new URLSearchParams(q).toString()}`, headers: { 'x-svc-account-id': String(FUZZ_ACCOUNT) }, mayTimeOut: true };
  });

const postBody = fc.oneof(
  { arbitrary: params.map(jsonText), weight: 6 },
  { arbitrary: withHostileFields(params, 3, fc.oneof(hostileJson, numberText)).map(jsonText), weight: 3 },
  { arbitrary: damagedText(params.map(jsonText)), weight: 1 },
  { arbitrary: fc.oneof(hostileJson.map(jsonText), deepJson, fc.constant('')), weight: 1 },
);
const post = {
  method: 'POST' as const,
  path: '/extension/lua/caql_v1',
  headers: { 'content-type': 'application/json', 'x-svc-account-id': String(FUZZ_ACCOUNT) },
  // Every CAQL call has a deadline (_timeout, 4.5 s by default): a 504 is its documented answer.
  mayTimeOut: true,
};
const postRequest = fc.tuple(fc.constantFrom('/extension/lua/caql_v1', '/extension/lua/public/caql_v1'), postBody).map(([path, body]) => ({ ...post, path, body }));

test.serial('CAQL over GET: 2xx or a 4xx user error, promptly', async (t) => {
  const examples = [{ method: 'GET' as const, path: `/extension/lua/caql_v1?${new URLSearchParams({ query: emptyWithVectors, start: String(T0 - 86_400), end: String(T0 + 60) }).toString()}`, headers: { 'x-svc-account-id': String(FUZZ_ACCOUNT) }, mayTimeOut: true }];
  await fuzz(t, node(), getRequest, { runs: 1200, shape, examples });
});

/** Found by this fuzzer (seed -331773485): an operator pairing an empty source with vectors answered 500. */
const emptyWithVectors = `find("nothing") + op:div{metric(${str(FUZZ_UUID)}, "fuzz.m") | vector("%tv{host}"), metric(${str(FUZZ_UUID)}, "fuzz.m") | vector("%tv{host}")} | vector:unpack()`;

/** Found by this fuzzer (seed -199392815): find() with a tag query nested 2,500 deep answered 500 (stack overflow). */
const deepFind = `-(find("fuzz*", "${'and('.repeat(2500)}a:b${')'.repeat(2500)}"))`;

test.serial('CAQL over POST: 2xx or a 4xx user error, promptly', async (t) => {
  const examples = [{ ...post, body: JSON.stringify({ query: deepFind, start: T0, end: T0 + 600 }) }];
  await fuzz(t, node(), postRequest, { runs: 1200, shape, examples });
});
