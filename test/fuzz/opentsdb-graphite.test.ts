// Fuzz: OpenTSDB ingest (POST /opentsdb/<acct>/<uuid>/<check>, POST /api/put with ?summary
// and ?details) and the Graphite API: carbon plaintext ingest, metrics/find globs, tags/find
// expressions, series and series_multi reads, with and without prefixes and FlatBuffer answers.
import test from 'ava';
import fc from 'fast-check';
import { accountText, damagedText, deepJson, epochSeconds, headerText, hostileJson, hostileNumber, hostileParam, jsonText, numberText, segment, shortHostileString, uuidArb, withHostileFields } from './arbitraries.js';
import { ferriteError, fuzz, FUZZ_ACCOUNT, FUZZ_UUID, useFuzzNode, type ErrorShape, type FuzzRequest } from './harness.js';
import { tagQuery } from './tag-query.js';

const node = useFuzzNode(test);

const name = fc.oneof({ arbitrary: fc.constantFrom('sys.cpu.user', 'a.b', 'graphite.fuzz', 'x'), weight: 4 }, { arbitrary: fc.stringMatching(/^[a-z][a-z0-9._-]{0,15}$/), weight: 2 }, { arbitrary: shortHostileString, weight: 1 });
const tsValue = fc.oneof(
  { arbitrary: epochSeconds, weight: 4 },
  { arbitrary: fc.integer({ min: 1_699_990_000_000, max: 1_700_010_000_000 }), weight: 2 },
  { arbitrary: fc.constantFrom('1700000000', '1700000000.123', '1700000000.1', '1700000000000'), weight: 1 },
);

const point = fc.record(
  {
    metric: name,
    timestamp: tsValue,
    value: fc.oneof(hostileNumber, numberText),
    tags: fc.dictionary(fc.oneof(fc.constantFrom('host', 'dc', ''), shortHostileString), fc.oneof(fc.constantFrom('web01', 'east', ''), shortHostileString), { maxKeys: 3 }),
  },
  { requiredKeys: ['metric', 'timestamp', 'value'] },
);
const putBody = fc.oneof(
  { arbitrary: point.map(jsonText), weight: 3 },
  { arbitrary: fc.array(fc.oneof(point, withHostileFields(point)), { maxLength: 4 }).map(jsonText), weight: 4 },
  { arbitrary: damagedText(fc.array(point, { minLength: 1, maxLength: 3 }).map(jsonText)), weight: 2 },
  { arbitrary: fc.oneof(hostileJson.map(jsonText), deepJson), weight: 1 },
);

/** OpenTSDB's own `?summary` / `?details` answer to failed points: `{failed, success[, errors]}` with 400. */
const openTsdbShape: ErrorShape = (j) => ferriteError(j) || (typeof j === 'object' && j !== null && typeof (j as { failed?: unknown }).failed === 'number' && typeof (j as { success?: unknown }).success === 'number');

const openTsdbRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  fc.tuple(fc.oneof(fc.constant(String(FUZZ_ACCOUNT)), accountText.map(segment)), fc.oneof(fc.constant(FUZZ_UUID), uuidArb.map(segment)), fc.oneof(fc.constant('collector'), shortHostileString.map(segment)), putBody).map(([a, u, c, body]) => ({
    method: 'POST' as const,
    path: `/opentsdb/${a}/${u}/${c || 'x'}`,
    body,
  })),
  fc.tuple(fc.constantFrom('', '?summary', '?details', '?summary&details'), putBody, fc.option(headerText(accountText), { freq: 4 }), fc.option(headerText(uuidArb), { freq: 4 })).map(([q, body, account, uuid]) => ({
    method: 'POST' as const,
    path: `/api/put${q}`,
    body,
    headers: { ...(account === null ? {} : { 'x-svc-account-id': account }), ...(uuid === null ? {} : { 'x-svc-check-uuid': uuid }) },
  })),
);

test.serial('OpenTSDB puts: 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), openTsdbRequest, { runs: 1000, shape: openTsdbShape });
});

// Graphite.
const tagged = fc.tuple(name, fc.array(fc.tuple(fc.constantFrom('dc', 'host', 'a b', ''), fc.constantFrom('east', 'web01', '=', '')), { maxLength: 3 })).map(([n, tags]) => [n, ...tags.map(([k, v]) => `${k}=${v}`)].join(';'));
const carbonLine = fc.oneof(
  { arbitrary: fc.tuple(tagged, fc.oneof(hostileNumber.map(String), numberText), fc.oneof(epochSeconds.map(String), numberText)).map((f) => f.join(' ')), weight: 6 },
  { arbitrary: fc.array(shortHostileString, { maxLength: 4 }).map((f) => f.join(' ')), weight: 1 },
);
const carbonBody = fc.oneof(
  { arbitrary: fc.array(carbonLine, { minLength: 1, maxLength: 5 }).map((ls) => ls.join('\n')), weight: 4 },
  { arbitrary: damagedText(fc.array(carbonLine, { minLength: 1, maxLength: 3 }).map((ls) => ls.join('\n'))), weight: 1 },
);
const graphiteAccount = fc.oneof({ arbitrary: fc.constant(String(FUZZ_ACCOUNT)), weight: 8 }, { arbitrary: accountText.map(segment), weight: 1 });
const ingest = fc.tuple(fc.constantFrom('POST' as const, 'PUT' as const), graphiteAccount, fc.oneof(fc.constant(FUZZ_UUID), uuidArb.map(segment)), fc.oneof(fc.constant('fuzz'), shortHostileString.map(segment)), carbonBody).map(
  ([method, a, u, c, body]) => ({ method, path: `/graphite/${a}/${u}/${c || 'x'}`, body }),
);

const glob = fc.oneof(
  { arbitrary: fc.constantFrom('*', 'graphite.*', 'graphite.fuzz.*', 'graphite.*.sys.*', '{a,b}.*', '[a-z]*', '[!a]*', 'a?', '**', 'graphite.{fuzz,x}.{a,{b,c}}.*', '*.*.*.*.*.*.*.*'), weight: 4 },
  { arbitrary: fc.constantFrom('{', '[', '[z-a]', '{a,b', 'a]', '{{{{{{{{{{a}}}}}}}}}}', '[[:alpha:]]', '\\', ''), weight: 1 },
  { arbitrary: damagedText(fc.constantFrom('graphite.{fuzz,x}.*', 'a.[bc].d')), weight: 1 },
  { arbitrary: shortHostileString, weight: 1 },
);
const tagExpr = fc.oneof(
  { arbitrary: fc.array(fc.constantFrom('name=sys.cpu.user', 'dc=east', 'host!=web01', 'dc=~e.*', 'host!=~^w', 'name=~.*', 'dc=', 'a=~(a|a)+b', 'x=~['), { minLength: 1, maxLength: 3 }).map((xs) => xs.join(',')), weight: 4 },
  { arbitrary: fc.constantFrom("seriesByTag('name=sys.cpu.user','dc=east')", "seriesByTag('dc!=x')", 'seriesByTag(', "seriesByTag('a=b'"), weight: 1 },
  { arbitrary: shortHostileString, weight: 1 },
);
const timeParam = fc.oneof({ arbitrary: epochSeconds.map(String), weight: 4 }, { arbitrary: hostileParam, weight: 1 });
const base = fc.tuple(graphiteAccount, fc.oneof(fc.constant(''), fc.constantFrom('graphite.', 'graphite.fuzz.', 'x/').map((p) => `${segment(p)}`))).map(([a, prefix]) => `/graphite/${a}${prefix === '' ? '' : `/${prefix}`}`);
const slash = fc.constantFrom('', '/');
const accept = fc.constantFrom(undefined, 'application/json', 'application/x-flatbuffer-metric-find-result-list', 'application/x-flatbuffer-metric-get-result-list');
const query = (p: Record<string, string | undefined>) => new URLSearchParams(Object.entries(p).filter((e): e is [string, string] => e[1] !== undefined)).toString();

const finds = fc.tuple(base, slash, fc.boolean(), glob, tagExpr, fc.option(tagQuery, { freq: 4 }), fc.option(timeParam), accept, fc.option(headerText(fc.constantFrom('1', '10', 'none', '0', '-5')), { freq: 3 })).map(
  ([b, s, metrics, g, expr, filter, since, acc, limit]): FuzzRequest => ({
    method: 'GET',
    path: metrics ? `${b}/metrics/find${s}?${query({ query: g, irondb_tag_filter: filter ?? undefined, activity_start_secs: since ?? undefined })}` : `${b}/tags/find${s}?${query({ query: expr })}`,
    headers: { ...(acc === undefined ? {} : { accept: acc }), ...(limit === null ? {} : { 'x-svc-advisory-limit': limit }) },
  }),
);

const seriesName = fc.oneof(fc.constantFrom('graphite.fuzz.sys.cpu.user', 'sys.cpu.user', 'graphite.fuzz.a.b;dc=east'), shortHostileString);
const range = fc.record({ start: timeParam, end: timeParam, step: fc.oneof(fc.constantFrom('60', '1', '300'), hostileParam) }, { requiredKeys: ['start', 'end'] });
const series = fc.tuple(base, slash, range, seriesName, accept).map(([b, s, r, n, acc]): FuzzRequest => ({ method: 'GET', path: `${b}/series${s}?${query({ ...r, name: n })}`, headers: acc === undefined ? {} : { accept: acc } }));
const leaf = fc.record({ leaf_name: seriesName, leaf_data: fc.record({ uuid: uuidArb, name: seriesName }) });
const multiDoc = fc.record({ start: fc.oneof(epochSeconds, timeParam), end: fc.oneof(epochSeconds, timeParam), names: fc.array(fc.oneof(seriesName, leaf), { maxLength: 3 }), step: fc.oneof(fc.constantFrom(60, 300), hostileNumber) }, { requiredKeys: ['start', 'end', 'names'] });
const seriesMulti = fc.tuple(base, slash, fc.oneof({ arbitrary: multiDoc.map(jsonText), weight: 4 }, { arbitrary: withHostileFields(multiDoc).map(jsonText), weight: 2 }, { arbitrary: damagedText(multiDoc.map(jsonText)), weight: 1 }, { arbitrary: deepJson, weight: 1 }), accept).map(
  ([b, s, body, acc]): FuzzRequest => ({ method: 'POST', path: `${b}/series_multi${s}`, body, headers: { 'content-type': 'application/json', ...(acc === undefined ? {} : { accept: acc }) } }),
);

/**
 * Found by this fuzzer (seed -49295490): a series from 0 to now at step 300 (5.7 M points) took
 * 62 s to answer, at step 60 147 s and then 500 "Map maximum size exceeded"; without a step and
 * an end far in the future, likewise. Now 400 beyond 100 000 points.
 */
const longSeries: FuzzRequest[] = [
  { method: 'GET', path: '/graphite/17/graphite./series?start=0&end=1700003866&step=300&name=sys.cpu.user', headers: { accept: 'application/x-flatbuffer-metric-find-result-list' } },
  { method: 'GET', path: '/graphite/17/series?start=0&end=100000000000000&name=graphite.fuzz.sys.cpu.user' },
  { method: 'POST', path: '/graphite/17/series_multi', body: JSON.stringify({ start: 0, end: 1700000000, step: 60, names: ['graphite.fuzz.sys.cpu.user'] }) },
];
/** Found by this fuzzer (seed -1397232163): a leaf whose name is no metric name ('' here) answered 500. */
const badLeaf = (name: string): FuzzRequest => ({
  method: 'POST',
  path: '/graphite/17/graphite./series_multi',
  body: JSON.stringify({ start: '1699990000', end: 1699990001, names: [{ leaf_name: 'graphite.fuzz.sys.cpu.user', leaf_data: { uuid: '00000000-0000-1000-8000-000000000000', name } }] }),
});

test.serial('Graphite ingest, finds and series reads: 2xx or a 4xx JSON error', async (t) => {
  const request = fc.oneof({ arbitrary: ingest, weight: 2 }, { arbitrary: finds, weight: 3 }, { arbitrary: series, weight: 2 }, { arbitrary: seriesMulti, weight: 2 });
  await fuzz(t, node(), request, { runs: 2000, examples: [...longSeries, badLeaf(''), badLeaf('x|ST['), badLeaf('y'.repeat(5000))] });
});
