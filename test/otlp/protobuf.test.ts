// The hand-written protobuf walker (model/otlp/protobuf.ts) reads every request exactly as
// protobufjs' own decoding of metrics.proto does (read by request.ts): generated requests of
// every metric type, attribute value kind and edge number, compared field by field.
import test from 'ava';
import fc from 'fast-check';
import { decodeRequest, decodeRequestByReflection, encodeRequest } from '../../model/otlp/codec.js';
import type { AttributeList, ResourceMetrics } from '../../model/otlp/types.js';

const nanos = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String);
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
const uint64 = fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.constantFrom('18446744073709551615', '9007199254740993'));
const double = fc.double();
const text = fc.string({ unit: 'grapheme', maxLength: 8 });

const { anyValue } = fc.letrec<{ anyValue: object }>((tie) => ({
  anyValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text.map((stringValue) => ({ stringValue })),
    int64.map((intValue) => ({ intValue })),
    double.map((doubleValue) => ({ doubleValue })),
    fc.boolean().map((boolValue) => ({ boolValue })),
    fc.uint8Array({ maxLength: 6 }).map((bytesValue) => ({ bytesValue })),
    fc.array(tie('anyValue'), { maxLength: 3 }).map((values) => ({ arrayValue: { values } })),
    fc.array(fc.record({ key: text, value: tie('anyValue') }), { maxLength: 3 }).map((values) => ({ kvlistValue: { values } })),
    fc.constant({}),
  ),
}));
const attributes = fc.array(fc.record({ key: text, value: anyValue }), { maxLength: 3 });
const base = { attributes, startTimeUnixNano: nanos, timeUnixNano: nanos, flags: fc.nat() };
const numberPoint = fc.oneof(fc.record({ ...base, asDouble: double }), fc.record({ ...base, asInt: int64 }), fc.record(base));
const buckets = fc.record({ offset: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), bucketCounts: fc.array(uint64, { maxLength: 4 }) });
const temporality = fc.constantFrom(0, 1, 2);
const data = fc.oneof(
  fc.array(numberPoint, { maxLength: 2 }).map((dataPoints) => ({ gauge: { dataPoints } })),
  fc.record({ dataPoints: fc.array(numberPoint, { maxLength: 2 }), aggregationTemporality: temporality, isMonotonic: fc.boolean() }).map((sum) => ({ sum })),
  fc
    .record({ dataPoints: fc.array(fc.record({ ...base, count: uint64, sum: double, bucketCounts: fc.array(uint64, { maxLength: 4 }), explicitBounds: fc.array(double, { maxLength: 3 }) }, { requiredKeys: [] }), { maxLength: 2 }), aggregationTemporality: temporality })
    .map((histogram) => ({ histogram })),
  fc
    .record({
      dataPoints: fc.array(fc.record({ ...base, count: uint64, sum: double, scale: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), zeroCount: uint64, zeroThreshold: double, positive: buckets, negative: buckets }, { requiredKeys: [] }), { maxLength: 2 }),
      aggregationTemporality: temporality,
    })
    .map((exponentialHistogram) => ({ exponentialHistogram })),
  fc.array(fc.record({ ...base, count: uint64, sum: double, quantileValues: fc.array(fc.record({ quantile: double, value: double }), { maxLength: 2 }) }), { maxLength: 2 }).map((dataPoints) => ({ summary: { dataPoints } })),
  fc.constant({}),
);
const metric = fc.tuple(text, text, data).map(([name, unit, d]) => ({ name, unit, ...d }));
const request = fc
  .array(fc.record({ resource: fc.record({ attributes }), scopeMetrics: fc.array(fc.record({ scope: fc.record({ name: text, version: text, attributes }), metrics: fc.array(metric, { maxLength: 3 }), schemaUrl: text }), { maxLength: 2 }) }), { maxLength: 2 })
  .map((resourceMetrics) => ({ resourceMetrics }));

/** Both readings with attributes decoded and the memo keys (which only the walker has) left out. */
function comparable(resources: ResourceMetrics[]): unknown {
  const attrs = (a: AttributeList) => (Array.isArray(a) ? a : (a as { decode(): unknown }).decode());
  return JSON.parse(
    JSON.stringify(
      resources.map((r) => ({ ...r, scopes: r.scopes.map((s) => ({ ...s, key: null, metrics: s.metrics })) })),
      (k, v: unknown) => (k === 'attributes' ? attrs(v as AttributeList) : typeof v === 'number' && !Number.isFinite(v) ? String(v) : typeof v === 'bigint' ? `${v}n` : v),
    ),
  );
}

test('the protobuf walker reads what protobufjs decodes from metrics.proto', (t) => {
  fc.assert(
    fc.property(request, (message) => {
      const bytes = encodeRequest(message);
      t.deepEqual(comparable(decodeRequest(bytes, 'protobuf')), comparable(decodeRequestByReflection(bytes)));
    }),
    { numRuns: 300 },
  );
});

test('equal attribute bytes give equal keys, different ones different keys', (t) => {
  const bytes = encodeRequest({
    resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'm', gauge: { dataPoints: [1, 1, 2].map((v) => ({ timeUnixNano: '1', asDouble: 0, attributes: [{ key: 'k', value: { intValue: v } }] })) } }] }] }],
  });
  const [p1, p2, p3] = (decodeRequest(bytes, 'protobuf')[0]!.scopes[0]!.metrics[0]!.data as { points: { attributes: { key: string } }[] }).points;
  t.is(p1!.attributes.key, p2!.attributes.key);
  t.not(p1!.attributes.key, p3!.attributes.key);
});
