// Fuzz: OTLP/HTTP metrics (`/v1/metrics`, `/api/v1/otlp/v1/metrics`). Export requests built
// from every metric type with edge values (NaN/±Inf, int64 extremes, times 0 and 2^64−1,
// scales outside −10…20, buckets past circllhist's range, mismatched bucket lists, unknown
// enums, a metric with no data), sent as protobuf and as JSON, gzipped or not, then damaged:
// bytes of the protobuf, of the gzip stream, of the JSON text, and a wrong Content-Encoding.
import { gzipSync } from 'node:zlib';
import test from 'ava';
import fc from 'fast-check';
import { encodeRequest } from '../../model/otlp/codec.js';
import { damagedBytes, damagedText, hostileNumber, shortHostileString } from './arbitraries.js';
import { FUZZ_ACCOUNT, FUZZ_UUID, fuzz, useFuzzNode, type FuzzRequest } from './harness.js';

const node = useFuzzNode(test);

const NOW_NS = BigInt(Date.now()) * 1_000_000n;
const nanos = fc.oneof(
  { arbitrary: fc.bigInt({ min: NOW_NS - 86_400_000_000_000n, max: NOW_NS }).map(String), weight: 6 },
  { arbitrary: fc.constantFrom('0', '1', '18446744073709551615', String(NOW_NS + 10n ** 18n), '9223372036854775808'), weight: 1 },
);
const int64 = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String), fc.integer().map(String));
const uint64 = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 1000 }), weight: 6 }, { arbitrary: fc.constantFrom('18446744073709551615', '9007199254740993', 0), weight: 1 });
const double = fc.oneof(fc.double(), hostileNumber);

const key = fc.oneof({ arbitrary: fc.constantFrom('service.name', 'host', 'le', '__name', '__check_uuid', 'a b', '', 'job'), weight: 4 }, { arbitrary: shortHostileString, weight: 1 });
const { anyValue } = fc.letrec<{ anyValue: object }>((tie) => ({
  anyValue: fc.oneof(
    { depthSize: 'xsmall', withCrossShrink: true },
    { arbitrary: fc.oneof(shortHostileString, fc.constantFrom('web-1', '/a b', '')).map((stringValue) => ({ stringValue })), weight: 6 },
    { arbitrary: int64.map((intValue) => ({ intValue })), weight: 1 },
    { arbitrary: double.map((doubleValue) => ({ doubleValue })), weight: 1 },
    { arbitrary: fc.boolean().map((boolValue) => ({ boolValue })), weight: 1 },
    { arbitrary: fc.uint8Array({ maxLength: 8 }).map((bytesValue) => ({ bytesValue })), weight: 1 },
    { arbitrary: fc.array(tie('anyValue'), { maxLength: 3 }).map((values) => ({ arrayValue: { values } })), weight: 1 },
    { arbitrary: fc.array(fc.record({ key, value: tie('anyValue') }), { maxLength: 3 }).map((values) => ({ kvlistValue: { values } })), weight: 1 },
  ),
}));
const attributes = fc.array(fc.record({ key, value: anyValue }), { maxLength: 3 });
const flags = fc.oneof({ arbitrary: fc.constant(0), weight: 6 }, { arbitrary: fc.constantFrom(1, 2, 0xffffffff), weight: 1 });
const base = { attributes, startTimeUnixNano: nanos, timeUnixNano: nanos, flags };

const numberPoint = fc.oneof(fc.record({ ...base, asDouble: double }), fc.record({ ...base, asInt: int64 }), fc.record(base));
const histogramPoint = fc.record({ ...base, count: uint64, sum: double, bucketCounts: fc.array(uint64, { maxLength: 5 }), explicitBounds: fc.array(double, { maxLength: 4 }) }, { requiredKeys: ['timeUnixNano', 'count'] });
const buckets = fc.record({ offset: fc.oneof(fc.integer({ min: -40, max: 40 }), fc.constantFrom(-(2 ** 31), 2 ** 31 - 1, 2 ** 20 * 400)), bucketCounts: fc.array(uint64, { maxLength: 6 }) });
const exponentialPoint = fc.record(
  { ...base, count: uint64, sum: double, scale: fc.oneof(fc.integer({ min: -3, max: 8 }), fc.constantFrom(-11, -10, 20, 21, 2 ** 31 - 1)), zeroCount: uint64, zeroThreshold: double, positive: buckets, negative: buckets },
  { requiredKeys: ['timeUnixNano', 'scale'] },
);
const summaryPoint = fc.record({ ...base, count: uint64, sum: double, quantileValues: fc.array(fc.record({ quantile: double, value: double }), { maxLength: 3 }) });
const temporality = fc.oneof({ arbitrary: fc.constantFrom(1, 2), weight: 4 }, { arbitrary: fc.constantFrom(0, 7), weight: 1 });
const points = <T>(p: fc.Arbitrary<T>) => fc.array(p, { maxLength: 3 });

const data = fc.oneof(
  points(numberPoint).map((dataPoints) => ({ gauge: { dataPoints } })),
  fc.record({ dataPoints: points(numberPoint), aggregationTemporality: temporality, isMonotonic: fc.boolean() }).map((sum) => ({ sum })),
  fc.record({ dataPoints: points(histogramPoint), aggregationTemporality: temporality }).map((histogram) => ({ histogram })),
  fc.record({ dataPoints: points(exponentialPoint), aggregationTemporality: temporality }).map((exponentialHistogram) => ({ exponentialHistogram })),
  points(summaryPoint).map((dataPoints) => ({ summary: { dataPoints } })),
  fc.constant({}),
);
const metric = fc
  .tuple(fc.oneof({ arbitrary: fc.constantFrom('http.requests', 'fuzz.m', 'a|ST[b]', 'x_total'), weight: 4 }, { arbitrary: shortHostileString, weight: 1 }), fc.constantFrom('', 's', 'By/s', '1', '{req}', '%'), data)
  .map(([name, unit, d]) => ({ name, unit, ...d }));
const exportRequest = fc.array(
  fc.record({ resource: fc.record({ attributes }), scopeMetrics: fc.array(fc.record({ scope: fc.record({ name: fc.constantFrom('lib', ''), version: fc.constantFrom('1', ''), attributes }), metrics: fc.array(metric, { maxLength: 3 }) }), { maxLength: 2 }) }),
  { maxLength: 2 },
).map((resourceMetrics) => ({ resourceMetrics }));

/** The request as protobuf; a value protobufjs cannot encode leaves an empty request. */
function protobuf(message: Record<string, unknown>): Uint8Array {
  try {
    return encodeRequest(message);
  } catch {
    return new Uint8Array(0);
  }
}
const json = (message: object): string => JSON.stringify(message, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));

type Body = { body: string | Uint8Array; type: string; coding?: string };
const bodies: fc.Arbitrary<Body> = fc.oneof(
  { arbitrary: exportRequest.map((m) => ({ body: protobuf(m), type: 'application/x-protobuf' })), weight: 5 },
  { arbitrary: exportRequest.map((m) => ({ body: json(m), type: 'application/json' })), weight: 4 },
  { arbitrary: exportRequest.map((m) => ({ body: gzipSync(protobuf(m)), type: 'application/x-protobuf', coding: 'gzip' })), weight: 2 },
  { arbitrary: damagedBytes(exportRequest.map(protobuf)).map((body) => ({ body, type: 'application/x-protobuf' })), weight: 3 },
  { arbitrary: damagedBytes(exportRequest.map((m) => gzipSync(protobuf(m)))).map((body) => ({ body, type: 'application/x-protobuf', coding: 'gzip' })), weight: 2 },
  { arbitrary: damagedText(exportRequest.map(json)).map((body) => ({ body, type: 'application/json' })), weight: 2 },
  { arbitrary: fc.tuple(exportRequest.map(protobuf), fc.constantFrom('gzip', 'deflate', 'x', '')).map(([body, coding]) => ({ body, type: 'application/x-protobuf', coding })), weight: 1 },
  { arbitrary: fc.tuple(fc.uint8Array({ maxLength: 64 }), fc.constantFrom('application/x-protobuf', 'application/json', 'text/plain', 'application/protobuf; charset=x')).map(([body, type]) => ({ body, type })), weight: 1 },
);

const request: fc.Arbitrary<FuzzRequest> = fc.tuple(bodies, fc.constantFrom('/v1/metrics', '/api/v1/otlp/v1/metrics'), fc.oneof({ arbitrary: fc.constant(String(FUZZ_ACCOUNT)), weight: 12 }, { arbitrary: fc.constantFrom('x', ''), weight: 1 })).map(([b, path, account]) => ({
  method: 'POST' as const,
  path,
  body: b.body,
  headers: { 'content-type': b.type, 'x-svc-account-id': account, 'x-svc-check-uuid': FUZZ_UUID, ...(b.coding === undefined ? {} : { 'content-encoding': b.coding }) },
}));

/** A gzip bomb: 64 MiB of zeros in 64 KiB, refused as too large before it is expanded. */
const bomb: FuzzRequest = {
  method: 'POST',
  path: '/v1/metrics',
  body: gzipSync(Buffer.alloc(64 * 1024 * 1024)),
  headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip', 'x-svc-account-id': String(FUZZ_ACCOUNT), 'x-svc-check-uuid': FUZZ_UUID },
};

/**
 * Found by this fuzzer (seed 1037845206): a point attribute whose string value is not UTF-8
 * (a lone surrogate, ED A0 80) was decoded only when the series was named, outside the
 * request's decoding, and answered 500. Now it rejects that point.
 */
const notUtf8: FuzzRequest = {
  method: 'POST',
  path: '/v1/metrics',
  body: Buffer.from('0a550a0012510a080a036c696212013112450a0d687474702e72657175657374732a340a321100aff4dd4bd4ea181900aff4dd4bd4ea182100000000000000003a150a0c736572766963652e6e616d6512050a03eda080', 'hex'),
  headers: { 'content-type': 'application/x-protobuf', 'x-svc-account-id': String(FUZZ_ACCOUNT), 'x-svc-check-uuid': FUZZ_UUID },
};

test.serial('OTLP metrics: protobuf and JSON export requests, damaged or not, get 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), request, { runs: 1500, examples: [bomb, notUtf8] });
});
