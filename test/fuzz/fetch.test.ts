// Fuzz: POST /fetch with JSON documents and with Fetch FlatBuffers (model/fetch/fbs), answered
// as DF4 JSON or FlatBuffer. Documents name every transform and reducer, with fields of the
// wrong type, edge numbers, bad parameters; FlatBuffers built with the generated builders,
// then damaged; deadline headers among them.
import test from 'ava';
import fc from 'fast-check';
import { Builder } from 'flatbuffers';
import { HISTOGRAM_TRANSFORMS } from '../../model/fetch/histogram.js';
import { NUMERIC_TRANSFORMS } from '../../model/fetch/numeric.js';
import { REDUCE_METHODS } from '../../model/fetch/reduce.js';
import { TEXT_TRANSFORMS } from '../../model/fetch/text.js';
import { Fetch } from '../../model/fetch/generated/fetch/fetch.js';
import { ReduceRequest } from '../../model/fetch/generated/fetch/reduce-request.js';
import { StreamRequest } from '../../model/fetch/generated/fetch/stream-request.js';
import { damagedBytes, damagedText, deepJson, epochSeconds, headerText, hostileJson, hostileNumber, hostileString, jsonText, metricNameArb, numberText, uuidArb, withHostileFields } from './arbitraries.js';
import { fuzz, FUZZ_METRICS, FUZZ_UUID, useFuzzNode, type FuzzRequest } from './harness.js';

const node = useFuzzNode(test);

const TRANSFORMS = [...new Set([...Object.keys(NUMERIC_TRANSFORMS), ...Object.keys(HISTOGRAM_TRANSFORMS), ...Object.keys(TEXT_TRANSFORMS)])];
const METHODS = Object.keys(REDUCE_METHODS);
const KINDS = ['numeric', 'histogram', 'text'];

const param = fc.oneof({ arbitrary: fc.constantFrom('0.5', '50', '0', '1', '100', '-1', '2', '10', 'mean', 'max', 'min', 'quantile', 'host', 'a', 'b'), weight: 4 }, { arbitrary: numberText, weight: 2 }, { arbitrary: hostileString, weight: 1 });
const params = fc.array(param, { maxLength: 4 });

/** Any mix of fields: kinds, transforms and parameters that need not fit together. */
const looseStream = fc.record(
  {
    uuid: uuidArb,
    name: metricNameArb,
    kind: fc.oneof({ arbitrary: fc.constantFrom(...KINDS), weight: 8 }, { arbitrary: hostileString, weight: 1 }),
    transform: fc.oneof({ arbitrary: fc.constantFrom(...TRANSFORMS), weight: 8 }, { arbitrary: hostileString, weight: 1 }),
    transform_params: params,
    label: hostileString,
  },
  { requiredKeys: ['uuid', 'name', 'kind', 'transform'] },
);

const TRANSFORMS_OF: Record<string, string[]> = { numeric: Object.keys(NUMERIC_TRANSFORMS), histogram: Object.keys(HISTOGRAM_TRANSFORMS), text: Object.keys(TEXT_TRANSFORMS) };
const PARAM_OF: Record<string, fc.Arbitrary<string[]>> = {
  none: fc.constant([]),
  number: fc.oneof(fc.double({ noNaN: true }), hostileNumber).map((v) => [String(v)]),
  percent: fc.double({ min: 0, max: 100, noNaN: true }).map((v) => [String(v)]),
  ratio: fc.double({ min: 0, max: 1, noNaN: true }).map((v) => [String(v)]),
};

/** A stream whose kind, transform and parameters fit, mostly over metrics holding that kind. */
const fittingStream = fc.constantFrom(...KINDS).chain((kind) =>
  fc.record({
    uuid: fc.oneof({ arbitrary: fc.constant(FUZZ_UUID), weight: 6 }, { arbitrary: uuidArb, weight: 1 }),
    name: fc.oneof({ arbitrary: fc.constantFrom(...FUZZ_METRICS[kind as keyof typeof FUZZ_METRICS]), weight: 6 }, { arbitrary: metricNameArb, weight: 1 }),
    kind: fc.constant(kind),
    transform: fc.constantFrom(...TRANSFORMS_OF[kind]!),
    label: fc.option(hostileString, { nil: undefined }),
  }).chain((s) => PARAM_OF[kind === 'histogram' ? (HISTOGRAM_TRANSFORMS[s.transform]?.param ?? 'none') : 'none']!.map((p) => ({ ...s, transform_params: p }))),
);
const stream = fc.oneof({ arbitrary: fittingStream, weight: 3 }, { arbitrary: looseStream, weight: 1 });

const looseReduce = fc.record(
  { label: fc.oneof(fc.constantFrom('', 'r'), hostileString), method: fc.oneof({ arbitrary: fc.constantFrom(...METHODS), weight: 8 }, { arbitrary: hostileString, weight: 1 }), method_params: params },
  { requiredKeys: ['method'] },
);
const fittingReduce = fc.constantFrom(
  { label: 'p', method: 'pass', method_params: [] },
  { label: '', method: 'mean', method_params: [] },
  { label: 's', method: 'sum', method_params: [] },
  { label: 'm', method: 'merge', method_params: [] },
  { label: 'g', method: 'groupby_sum', method_params: ['host'] },
  { label: 'g', method: 'groupby_merge', method_params: ['host', 'a'] },
  { label: 't', method: 'topk', method_params: ['2'] },
  { label: 't', method: 'topk', method_params: ['1', 'quantile', '0.99'] },
  { label: 't', method: 'topk', method_params: ['100000000000', 'max'] },
);
const reduce = fc.oneof({ arbitrary: fittingReduce, weight: 3 }, { arbitrary: looseReduce, weight: 1 });
const period = fc.oneof({ arbitrary: fc.constantFrom(60, 300, 10, 1, 0.5, 86400), weight: 8 }, { arbitrary: hostileNumber, weight: 1 });
const count = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 120 }), weight: 8 }, { arbitrary: fc.constantFrom(100_000, 100_001, 0, -1), weight: 1 }, { arbitrary: hostileNumber, weight: 1 });

const recent = fc.integer({ min: 1_699_990_000, max: 1_700_010_000 });
/** A fetch document; numbers sometimes as strings (clients send both), now and then at an edge. */
const document = fc.record({
  start: fc.oneof({ arbitrary: recent, weight: 8 }, { arbitrary: recent.map(String), weight: 1 }, { arbitrary: epochSeconds, weight: 1 }, { arbitrary: numberText, weight: 1 }),
  period: fc.oneof({ arbitrary: period, weight: 8 }, { arbitrary: numberText, weight: 1 }),
  count: fc.oneof({ arbitrary: count, weight: 8 }, { arbitrary: count.map(String), weight: 1 }),
  streams: fc.array(fc.oneof({ arbitrary: stream, weight: 6 }, { arbitrary: withHostileFields(stream), weight: 1 }), { minLength: 1, maxLength: 3 }),
  reduce: fc.array(fc.oneof({ arbitrary: reduce, weight: 6 }, { arbitrary: withHostileFields(reduce), weight: 1 }), { maxLength: 2 }),
});

const jsonBody = fc.oneof(
  { arbitrary: document.map(jsonText), weight: 10 },
  { arbitrary: withHostileFields(document).map(jsonText), weight: 3 },
  { arbitrary: damagedText(document.map(jsonText)), weight: 2 },
  { arbitrary: fc.oneof(hostileJson.map(jsonText), deepJson), weight: 1 },
);

/** Headers any fetch may carry: the answer's encoding, a deadline (then a 504 is the answer it asked for). */
const headers = fc.record(
  {
    accept: fc.constantFrom('application/json', 'x-irondb-df4-flatbuffer', 'application/x-svc-df4-flatbuffer', '*/*'),
    'x-svc-timeout': fc.oneof(fc.constantFrom('30s', '60000', '5m', '1h'), headerText(numberText), headerText(hostileString)),
  },
  { requiredKeys: [] },
);

function request(body: fc.Arbitrary<string | Uint8Array>, types: string[]): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(body, fc.constantFrom(...types), headers).map(([b, type, h]) => ({
    method: 'POST' as const,
    path: '/fetch',
    body: b,
    headers: { 'content-type': type, ...h },
    mayTimeOut: h['x-svc-timeout'] !== undefined,
  }));
}

const KIND_ENUM: Record<string, number> = { numeric: 1, histogram: 2, text: 4 };

const asString = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');
const asStrings = (v: unknown): string[] => (Array.isArray(v) ? v.map(asString) : []);

/** The Fetch table with the generated builders: u64 start_ms, u32 period_ms and count, kind an i8, the uuid as 36 ASCII or 16 raw bytes. */
const flatBody = fc
  .record({
    startMs: fc.oneof({ arbitrary: fc.integer({ min: 1_699_990_000, max: 1_700_010_000 }).map((s) => BigInt(s) * 1000n), weight: 4 }, { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), weight: 1 }),
    periodMs: fc.oneof({ arbitrary: fc.constantFrom(60_000, 1, 300_000, 0, 500), weight: 4 }, { arbitrary: fc.nat(), weight: 1 }),
    count: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 120 }), weight: 4 }, { arbitrary: fc.constantFrom(100_000, 100_001, 2 ** 32 - 1), weight: 1 }),
    streams: fc.array(fc.tuple(stream, fc.boolean(), fc.integer({ min: -128, max: 127 })), { minLength: 1, maxLength: 3 }),
    reduce: fc.array(reduce, { maxLength: 2 }),
  })
  .map((d) => {
    const b = new Builder(256);
    const strs = (xs: string[]) => xs.map((x) => b.createString(x));
    const streams = d.streams.map(([s, rawUuid, oddKind]) => {
      const uuid = rawUuid && /^[0-9a-f-]{36}$/i.test(s.uuid) ? Buffer.from(s.uuid.replace(/-/g, ''), 'hex') : Buffer.from(s.uuid, 'latin1');
      const kind = KIND_ENUM[String(s.kind)] ?? oddKind;
      return StreamRequest.createStreamRequest(b, StreamRequest.createCheckUuidVector(b, uuid), b.createString(s.name), kind, b.createString(asString(s.transform)), StreamRequest.createTransformParamsVector(b, strs(asStrings(s.transform_params))), b.createString(asString(s.label ?? '')));
    });
    const reduce = d.reduce.map((r) => ReduceRequest.createReduceRequest(b, b.createString(asString(r.label)), b.createString(asString(r.method)), ReduceRequest.createMethodParamsVector(b, strs(asStrings(r.method_params)))));
    b.finish(Fetch.createFetch(b, d.startMs, d.periodMs, d.count, Fetch.createStreamsVector(b, streams), Fetch.createReduceVector(b, reduce)));
    return b.asUint8Array().slice();
  });

/**
 * Found by this fuzzer: 38 slots of 12.4 years (a whole number of minutes, so the 60 s level
 * serves them) asked a multi-get of every day's rollup chunk across 470 years: 5 s.
 */
const wideFetches: FuzzRequest[] = [
  {
    method: 'POST',
    path: '/fetch',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ start: 0, period: 391_936_620, count: 38, streams: [{ uuid: FUZZ_UUID, name: 'fuzz.m', kind: 'numeric', transform: 'counter_stddev', transform_params: [] }], reduce: [] }),
  },
];

test.serial('/fetch JSON documents: 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), request(jsonBody, ['application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', 'text/json', 'application/xml']), { runs: 1500, examples: wideFetches });
});

test.serial('/fetch FlatBuffer documents, well-formed and damaged: 2xx or a 4xx JSON error', async (t) => {
  const body = fc.oneof({ arbitrary: flatBody, weight: 5 }, { arbitrary: damagedBytes(flatBody), weight: 4 }, { arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 1 });
  await fuzz(t, node(), request(body, ['x-irondb-fetch-flatbuffer', 'application/x-irondb-fetch-flatbuffer', 'application/x-svc-fetch-flatbuffer']), { runs: 1500 });
});
