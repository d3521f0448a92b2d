// Fuzz: Prometheus remote write and read (snappy-compressed protobuf bodies: well-formed with
// edge labels, values and timestamps, then damaged before and after compression) and the
// query API's parameters (PromQL from a small grammar, times, steps, match[] selectors).
import test from 'ava';
import fc from 'fast-check';
import { compressSync, uncompressSync } from 'snappy';
import { encodeReadRequest, encodeWriteRequest } from '../../model/prometheus/remote-codec.js';
import type { MatcherType } from '../../model/prometheus/types.js';
import { accountText, damagedBytes, headerText, hostileNumber, hostileParam, shortHostileString, uuidArb, segment, withHostileFields } from './arbitraries.js';
import { labelName, labelValue, metricName, promqlText, selector } from './promql-arbitraries.js';
import { ferriteError, FUZZ_ACCOUNT, FUZZ_UUID, fuzz, promError, useFuzzNode, type ErrorShape, type FuzzRequest } from './harness.js';

const node = useFuzzNode(test);

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
  fc.tuple(fc.oneof(labelName, fc.constantFrom('U__a_2e_b', 'U__', 'U___zz_', 'U___110000_')), fc.record({ 'match[]': selector, limit: fc.constantFrom('0', '1', '-1', 'x') }, { requiredKeys: [] })).map(([l, p]): ApiCall => [`label/${segment(l)}/values`, p]),
  fc.record({ metric: fc.oneof(metricName, shortHostileString), limit: fc.constantFrom('1', '0', '-5', 'a'), limit_per_metric: fc.constantFrom('0', '1', 'x') }, { requiredKeys: [] }).map((p): ApiCall => ['metadata', p]),
  fc.record({ query: promqlText, start: apiTime, end: apiTime }, { requiredKeys: [] }).map((p): ApiCall => ['query_exemplars', p]),
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
