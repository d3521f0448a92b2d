// Fuzz: Prometheus remote write and read (snappy-compressed protobuf bodies: well-formed with
// edge labels, values and timestamps, then damaged before and after compression) and the
// query API's parameters (PromQL from a small grammar, times, steps, match[] selectors).
import test from 'ava';
import fc from 'fast-check';
import { compressSync, uncompressSync } from 'snappy';
import { encodeReadRequest, encodeWriteRequest } from '../../model/prometheus/remote-codec.js';
import type { MatcherType } from '../../model/prometheus/types.js';
import { accountText, damagedBytes, damagedText, headerText, hostileNumber, hostileParam, shortHostileString, uuidArb, segment, withHostileFields } from './arbitraries.js';
import { ferriteError, FUZZ_ACCOUNT, FUZZ_UUID, fuzz, promError, useFuzzNode, type ErrorShape, type FuzzRequest } from './harness.js';

const node = useFuzzNode(test);

const labelName = fc.oneof({ arbitrary: fc.constantFrom('job', 'instance', 'le', 'host', '__name__', '__check_uuid', 'a b', ''), weight: 4 }, { arbitrary: shortHostileString, weight: 1 });
const labelValue = fc.oneof({ arbitrary: fc.constantFrom('api', 'localhost:9090', '/a b', '0.5', '+Inf', ''), weight: 4 }, { arbitrary: shortHostileString, weight: 1 });
const metricName = fc.oneof({ arbitrary: fc.constantFrom('up', 'http_requests_total', 'fuzz_m', 'x:y'), weight: 4 }, { arbitrary: shortHostileString, weight: 1 });
const msTime = fc.oneof(
  { arbitrary: fc.integer({ min: 1_699_990_000_000, max: 1_700_010_000_000 }), weight: 4 },
  { arbitrary: fc.constantFrom(0, -1, 2 ** 53, -(2 ** 53), 8.64e15, 9.9e15), weight: 1 },
);
const sampleValue = fc.oneof(fc.double(), hostileNumber);

const series = fc.record({
  labels: fc.tuple(fc.option(metricName, { freq: 8 }), fc.dictionary(labelName, labelValue, { maxKeys: 4 })).map(([name, rest]) => (name === null ? rest : { ...rest, __name__: name })),
  samples: fc.array(fc.record({ value: sampleValue, timestamp: msTime }), { maxLength: 4 }),
});

const MATCHERS: MatcherType[] = ['=', '!=', '=~', '!~'];
const matcher = fc.record({
  type: fc.constantFrom(...MATCHERS),
  name: labelName,
  value: fc.oneof(labelValue, fc.constantFrom('.*', '.+', 'up|fuzz_m', '(a|a)+b', '[', '(?=x)', 'a{1001}')),
});
const readQuery = fc.record({ startMs: msTime, endMs: msTime, matchers: fc.array(matcher, { maxLength: 4 }) });

/** Good compressed bodies, their bytes damaged, the protobuf damaged then compressed, and noise. */
function snappyBodies(good: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const protobuf = good.map((b) => uncompressSync(b, { asBuffer: true }) as Buffer);
  return fc.oneof(
    { arbitrary: good, weight: 5 },
    { arbitrary: damagedBytes(good), weight: 2 },
    { arbitrary: damagedBytes(protobuf).map((b) => compressSync(b)), weight: 2 },
    { arbitrary: protobuf, weight: 1 },
    { arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 1 },
  );
}

const pathAccount = fc.oneof({ arbitrary: fc.constant(String(FUZZ_ACCOUNT)), weight: 6 }, { arbitrary: accountText.map(segment), weight: 1 });
const pathUuid = fc.oneof({ arbitrary: fc.constant(FUZZ_UUID), weight: 6 }, { arbitrary: uuidArb.map(segment), weight: 1 });
const encoding = fc.oneof({ arbitrary: fc.constant('snappy'), weight: 8 }, { arbitrary: fc.constantFrom('gzip', 'identity', 'SNAPPY', ''), weight: 1 });

function remote(kind: 'write' | 'read', body: fc.Arbitrary<Uint8Array>): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(pathAccount, pathUuid, snappyBodies(body), encoding).map(([account, uuid, b, coding]) => ({
    method: 'POST' as const,
    path: `/module/prometheus/${kind}/${account}/${uuid}`,
    body: b,
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': coding },
  }));
}

/**
 * Found by the remote read fuzzer (seed -288915935): a protobuf body sent as snappy without
 * compression took 18.6 s to be refused, the node answering nothing else meanwhile (snappyjs
 * read a 4-byte literal length as negative and walked back). Six bytes did it for minutes.
 */
const wedges = (kind: 'write' | 'read'): FuzzRequest[] =>
  [[0x0a, 0xfc, 0, 0, 0, 0x80], [0x80, 0x80, 0x80, 0x80, 0x01, 0]].map((bytes) => ({
    method: 'POST',
    path: `/module/prometheus/${kind}/${FUZZ_ACCOUNT}/${FUZZ_UUID}`,
    body: new Uint8Array(bytes),
    headers: { 'content-encoding': 'snappy' },
  }));

test.serial('remote write: snappy protobuf bodies get 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), remote('write', fc.array(series, { maxLength: 4 }).map(encodeWriteRequest)), { runs: 1200, examples: wedges('write') });
});

test.serial('remote read: snappy protobuf bodies get 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), remote('read', fc.array(readQuery, { maxLength: 3 }).map(encodeReadRequest)), { runs: 800, examples: wedges('read') });
});

// PromQL: selectors, range vectors, functions, aggregations, binary operators, offset and @.
const selector = fc
  .tuple(metricName.filter((n) => /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(n)), fc.array(fc.tuple(labelName.filter((n) => /^[a-zA-Z_]\w*$/.test(n)), fc.constantFrom('=', '!=', '=~', '!~'), labelValue), { maxLength: 2 }))
  .map(([name, ms]) => `${name}${ms.length === 0 ? '' : `{${ms.map(([l, op, v]) => `${l}${op}${JSON.stringify(v)}`).join(',')}}`}`);
const range = fc.constantFrom('[5m]', '[1s]', '[1h:1m]', '[0s]', '[100000d]', '[5m:0s]');
const FUNCS = ['rate', 'irate', 'increase', 'delta', 'deriv', 'changes', 'resets', 'avg_over_time', 'sum_over_time', 'quantile_over_time', 'stddev_over_time', 'last_over_time'];
const INSTANT = ['abs', 'ceil', 'sqrt', 'ln', 'sort', 'scalar', 'vector', 'histogram_quantile', 'clamp', 'round', 'label_replace', 'timestamp', 'absent'];
const { promql } = fc.letrec<{ promql: string }>((tie) => ({
  promql: fc.oneof(
    { depthSize: 'xsmall', withCrossShrink: true },
    { arbitrary: selector, weight: 4 },
    { arbitrary: fc.oneof(hostileNumber.map(String), fc.constantFrom('1', '0.5', 'NaN', 'Inf', '-Inf', '1e308')), weight: 1 },
    { arbitrary: fc.tuple(fc.constantFrom(...FUNCS), selector, range).map(([f, s, r]) => (f === 'quantile_over_time' ? `${f}(0.9, ${s}${r})` : `${f}(${s}${r})`)), weight: 3 },
    { arbitrary: fc.tuple(fc.constantFrom(...INSTANT), tie('promql')).map(([f, x]) => (f === 'histogram_quantile' ? `${f}(0.9, ${x})` : f === 'clamp' ? `${f}(${x}, 0, 1)` : `${f}(${x})`)), weight: 2 },
    { arbitrary: fc.tuple(fc.constantFrom('sum', 'avg', 'max', 'count', 'topk', 'quantile', 'stddev'), fc.constantFrom('', ' by (job)', ' without (instance)'), tie('promql')).map(([a, g, x]) => (a === 'topk' ? `${a}${g}(3, ${x})` : a === 'quantile' ? `${a}${g}(0.5, ${x})` : `${a}${g}(${x})`)), weight: 2 },
    { arbitrary: fc.tuple(tie('promql'), fc.constantFrom('+', '-', '*', '/', '%', '^', '==', '> bool', 'and', 'or', 'unless', '+ on(job)', '* ignoring(le)', 'atan2'), tie('promql')).map(([a, op, b]) => `${a} ${op} ${b}`), weight: 2 },
    { arbitrary: fc.tuple(selector, fc.constantFrom(' offset 5m', ' offset -1h', ' @ 1700000000', ' @ start()', ' @ 1e300', ' offset 100000000d')).map(([s, m]) => s + m), weight: 1 },
    { arbitrary: tie('promql').map((x) => `(${x})`), weight: 1 },
  ),
}));
const promqlText = fc.oneof({ arbitrary: promql, weight: 8 }, { arbitrary: damagedText(promql), weight: 2 }, { arbitrary: shortHostileString, weight: 1 });

const T0 = 1_700_000_000;
const apiTime = fc.oneof({ arbitrary: fc.integer({ min: T0 - 7200, max: T0 + 7200 }).map(String), weight: 4 }, { arbitrary: fc.constantFrom('2023-11-14T22:13:20Z', '2023-11-14T22:13:20.5+01:00', '1700000000.123'), weight: 1 });
const step = fc.oneof({ arbitrary: fc.constantFrom('60', '15s', '1m', '5m', '0.5', '1h'), weight: 4 }, { arbitrary: fc.constantFrom('0', '-1', '1ms', '1e300', 'abc'), weight: 1 });

/** [route, parameters that fit it]. */
type ApiCall = [route: string, params: Record<string, string>];
const apiCall: fc.Arbitrary<ApiCall> = fc.oneof(
  fc.record({ query: promqlText, time: apiTime }, { requiredKeys: ['query'] }).map((p): ApiCall => ['query', p]),
  fc.record({ query: promqlText, start: apiTime, end: apiTime, step }).map((p): ApiCall => ['query_range', p]),
  fc.record({ 'match[]': fc.oneof(selector, promqlText), start: apiTime, end: apiTime }, { requiredKeys: [] }).map((p): ApiCall => ['series', p]),
  fc.record({ 'match[]': selector, start: apiTime }, { requiredKeys: [] }).map((p): ApiCall => ['labels', p]),
  fc.tuple(labelName, fc.record({ 'match[]': selector }, { requiredKeys: [] })).map(([l, p]): ApiCall => [`label/${segment(l)}/values`, p]),
);
/** Prometheus' shape on its routes; a label name such as `..` can leave them (then our 404). */
const apiShape: ErrorShape = (j) => promError(j) || (ferriteError(j) && (j as { code: string }).code === 'FER_ERR_NOT_FOUND');

const apiRequest: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    apiCall.chain(([route, p]) => fc.oneof({ arbitrary: fc.constant(p), weight: 3 }, { arbitrary: withHostileFields(fc.constant(p), 2, hostileParam), weight: 1 }).map((q) => [route, q] as const)),
    fc.boolean(),
    fc.option(headerText(accountText), { freq: 4 }),
  )
  .map(([[route, p], asPost, account]) => {
    const form = new URLSearchParams(Object.entries(p).map(([k, v]): [string, string] => [k, String(v)])).toString();
    const headers: Record<string, string> = account === null ? {} : { 'x-svc-account-id': account };
    const path = `/api/v1/${route}`;
    return asPost ? { method: 'POST' as const, path, body: form, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' } } : { method: 'GET' as const, path: `${path}?${form}`, headers };
  });

test.serial('query API: PromQL and parameters get 2xx or a 4xx in Prometheus’ error shape', async (t) => {
  await fuzz(t, node(), apiRequest, { runs: 1500, shape: apiShape });
});
