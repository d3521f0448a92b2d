// Fuzz: FlatBuffer MetricList submissions on POST /raw, v1 (CIML) and v2 (CMLS). Well-formed
// lists built with the generated builders hold every union member with edge values; then the
// same bytes damaged (bits set, offsets overwritten, truncated, spliced) and plain noise.
import test from 'ava';
import fc from 'fast-check';
import { buildV1, buildV2, type Envelope, type Point, type Value } from '../helpers/metric-list.js';
import { CANARY_ACCOUNT } from './canary.js';
import { damagedBytes, headerText, hostileString, metricNameArb, numberText, uuidArb } from './arbitraries.js';
import { FUZZ_ACCOUNT, FUZZ_UUID, fuzz, useFuzzNode, type FuzzRequest } from './harness.js';

const node = useFuzzNode(test);

const I64 = 2n ** 63n;
const msTimestamp = fc.oneof(
  { arbitrary: fc.bigInt({ min: 1_699_990_000_000n, max: 1_700_010_000_000n }), weight: 4 },
  { arbitrary: fc.constantFrom(0n, 1n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n, 8_640_000_000_000_000n), weight: 1 },
  { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), weight: 1 },
);

const byte = fc.integer({ min: -128, max: 127 });
const value: fc.Arbitrary<Value> = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((v) => ({ t: 'int' as const, v })),
  fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((v) => ({ t: 'uint' as const, v })),
  fc.bigInt({ min: -I64, max: I64 - 1n }).map((v) => ({ t: 'long' as const, v })),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((v) => ({ t: 'ulong' as const, v })),
  fc.double().map((v) => ({ t: 'double' as const, v })),
  hostileString.map((v) => ({ t: 'string' as const, v })),
  fc.array(fc.tuple(byte, byte, fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })), { maxLength: 6 }).map((v) => ({ t: 'hist' as const, v })),
  fc.constantFrom<Value>({ t: 'absent-n' }, { t: 'absent-s' }, { t: 'absent-h' }, { t: 'none' }),
);

const account = fc.oneof(fc.constant(FUZZ_ACCOUNT), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })).filter((a) => a !== CANARY_ACCOUNT);
const checkName = fc.oneof(
  fc.constantFrom(`web\`http\`c_${FUZZ_ACCOUNT}_1::http`, '', 'c_1_1::x', 'no backticks'),
  hostileString,
);
const v2Uuid = fc.oneof(
  { arbitrary: fc.constant(Buffer.from(FUZZ_UUID.replace(/-/g, ''), 'hex')), weight: 4 },
  { arbitrary: fc.constant(Buffer.from(FUZZ_UUID.toUpperCase())), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 40 }), weight: 1 },
);

function point(uuid: fc.Arbitrary<string | Uint8Array>): fc.Arbitrary<Point> {
  const envelope: fc.Arbitrary<Partial<Envelope>> = fc.record({ ts: msTimestamp, checkName, uuid, account }, { requiredKeys: [] });
  return fc.record(
    {
      name: metricNameArb,
      tags: fc.array(fc.oneof(fc.constantFrom('host:a', 'dc:east', 'b"aGk=":x', ':', 'nocolon'), hostileString), { maxLength: 3 }),
      ts: fc.oneof(fc.constant(0n), msTimestamp),
      value,
      gen: fc.integer({ min: -32768, max: 32767 }),
      envelope,
    },
    { requiredKeys: ['name', 'value'] },
  );
}

const v1Body = fc.array(point(uuidArb), { minLength: 1, maxLength: 5 }).chain((points) => fc.boolean().map((id) => buildV1(points, { ts: 1_700_000_000_000n, uuid: FUZZ_UUID, account: FUZZ_ACCOUNT }, id)));
const v2Body = fc.array(point(v2Uuid), { minLength: 1, maxLength: 5 }).chain((points) => fc.boolean().map((id) => buildV2(points, undefined, id)));

const TYPES = ['application/x-svc-metric-list-flatbuffer', 'application/x-circonus-metric-list-flatbuffer', 'x-circonus-metric-list-flatbuffer'];

function requests(good: fc.Arbitrary<Uint8Array>): fc.Arbitrary<FuzzRequest> {
  const body = fc.oneof({ arbitrary: good, weight: 3 }, { arbitrary: damagedBytes(good), weight: 4 }, { arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 1 });
  const datapoints = fc.oneof({ arbitrary: fc.nat(20).map(String), weight: 6 }, { arbitrary: headerText(numberText), weight: 1 });
  return fc.tuple(body, fc.constantFrom(...TYPES), fc.option(datapoints, { freq: 12 })).map(([bytes, type, points]) => ({
    method: 'POST' as const,
    path: '/raw',
    body: bytes,
    headers: { 'content-type': type, ...(points === null ? {} : { 'x-svc-datapoints': points }) },
  }));
}

const post = (body: Uint8Array): FuzzRequest => ({ method: 'POST', path: '/raw', body, headers: { 'content-type': TYPES[0]!, 'x-svc-datapoints': '1' } });
/** Found by the v2 fuzzer (seed -674779922): a negative account_id reached the index keys and answered 500. */
const negativeAccount = (build: typeof buildV1 | typeof buildV2) => post(build([{ name: 'fuzz.m', value: { t: 'int', v: 1 }, envelope: { account: -2147483632 } }]));

test.serial('MetricList v1: well-formed, damaged and noise bodies get 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), requests(v1Body), { runs: 1200, examples: [negativeAccount(buildV1)] });
});

test.serial('MetricList v2: well-formed, damaged and noise bodies get 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), requests(v2Body), { runs: 1200, examples: [negativeAccount(buildV2)] });
});
