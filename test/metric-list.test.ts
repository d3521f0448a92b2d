// FlatBuffer MetricList ingest: both layouts built with the flatc-generated builders,
// decoded by our verifying reader, and posted to a real node.
import test from 'ava';
import fc from 'fast-check';
import { decodeMetricList, MetricListFormatError } from '../model/metric-list/decode.js';
import { buildV1, buildV2, type Point } from './helpers/metric-list.js';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

const EVERY: Point[] = [
  { name: 'i', value: { t: 'int', v: -2147483648 } },
  { name: 'I', value: { t: 'uint', v: 4294967295 } },
  { name: 'l', value: { t: 'long', v: -(2n ** 63n) } },
  { name: 'L', value: { t: 'ulong', v: 2n ** 64n - 1n } },
  { name: 'n', value: { t: 'double', v: 2.5 }, ts: 1_500_000 },
  { name: 's', value: { t: 'string', v: 'hello' } },
  { name: 'h', value: { t: 'hist', v: [[10, 0, 3n], [-25, -2, 2n ** 40n]] } },
  { name: 'an', value: { t: 'absent-n' } },
  { name: 'as', value: { t: 'absent-s' } },
  { name: 'ah', value: { t: 'absent-h' } },
  { name: 'tagged|ST[a:1]', tags: ['b:2', 'a:1'], value: { t: 'int', v: 1 } },
];

for (const [layout, build] of [['v1', () => buildV1(EVERY)], ['v2', () => buildV2(EVERY)]] as const) {
  test(`${layout}: every union member decodes exactly`, (t) => {
    const d = decodeMetricList(build());
    t.is(d.layout, layout);
    t.deepEqual(d.skipped, []);
    const byName = new Map(d.samples.map((s) => [s.name, s]));
    t.deepEqual(byName.get('i')!.value, { kind: 'numeric', value: -2147483648 });
    t.deepEqual(byName.get('I')!.value, { kind: 'numeric', value: 4294967295 });
    t.deepEqual(byName.get('l')!.value, { kind: 'numeric', value: -(2n ** 63n) });
    t.deepEqual(byName.get('L')!.value, { kind: 'numeric', value: 2n ** 64n - 1n });
    t.deepEqual(byName.get('n')!.value, { kind: 'numeric', value: 2.5 });
    t.is(byName.get('n')!.ts, 1_500_000, 'a sample timestamp wins');
    t.is(byName.get('i')!.ts, layout === 'v1' ? 1_000_000 : 2_000_000, 'timestamp 0 means the envelope time');
    t.deepEqual(byName.get('s')!.value, { kind: 'text', value: 'hello' });
    t.deepEqual(byName.get('h')!.value, { kind: 'histogram', cumulative: false, bins: [{ val: 10, exp: 0, count: 3n }, { val: -25, exp: -2, count: 2n ** 40n }] });
    t.deepEqual(byName.get('an')!.value, { kind: 'numeric', value: null });
    t.deepEqual(byName.get('as')!.value, { kind: 'text', value: null });
    t.deepEqual(byName.get('ah')!.value, { kind: 'histogram', bins: null, cumulative: false });
    t.truthy(byName.get('tagged|ST[a:1]|ST[b:2,a:1]'), 'stream_tags are appended for canonicalisation to merge');
    t.is(byName.get('i')!.checkUuid, UUID);
    t.is(byName.get('i')!.accountId, 5);
  });
}

test('layout detection without identifiers, and roots that are not a MetricList', (t) => {
  t.is(decodeMetricList(buildV1(EVERY, undefined, false)).layout, 'v1');
  t.is(decodeMetricList(buildV2(EVERY, undefined, false)).layout, 'v2');
  const bytes = buildV1(EVERY);
  bytes.set(Buffer.from('CIMM'), 4);
  t.throws(() => decodeMetricList(bytes), { instanceOf: MetricListFormatError, message: /not a MetricList/ });
});

test('uuids: 36 ASCII bytes in v2 are lower-cased; other lengths skip the metric', (t) => {
  const ascii = decodeMetricList(buildV2([{ name: 'x', value: { t: 'int', v: 1 } }], Buffer.from(UUID.toUpperCase())));
  t.is(ascii.samples[0]!.checkUuid, UUID);
  const bad = decodeMetricList(buildV2([{ name: 'x', value: { t: 'int', v: 1 } }], Buffer.from([1, 2, 3])));
  t.is(bad.samples.length, 0);
  t.regex(bad.skipped[0]!.reason, /check_uuid/);
  const none = decodeMetricList(buildV2([{ name: 'x', value: { t: 'none' } }]));
  t.regex(none.skipped[0]!.reason, /value type 0/);
});

test('trailing zero padding is tolerated; every truncation is a MetricListFormatError', (t) => {
  const bytes = buildV2(EVERY);
  const padded = Buffer.concat([bytes, Buffer.alloc(16 - (bytes.length % 16))]);
  t.is(decodeMetricList(padded).samples.length, EVERY.length);
  let rejected = 0;
  for (let cut = 0; cut < bytes.length; cut++) {
    try {
      decodeMetricList(bytes.subarray(0, cut));
    } catch (error) {
      t.true(error instanceof MetricListFormatError, `cut at ${cut}: ${String(error)}`);
      rejected++;
    }
  }
  t.true(rejected > bytes.length / 2);
});

test('arbitrary and corrupted bytes decode or raise MetricListFormatError', (t) => {
  const good = buildV1(EVERY);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(good.length - 1), fc.nat(255), (random, at, byte) => {
      for (const bytes of [random, Uint8Array.from(good).fill(byte, at, at + 1)]) {
        try {
          decodeMetricList(bytes);
        } catch (error) {
          t.true(error instanceof MetricListFormatError, String(error));
        }
      }
    }),
  );
});

let n: TestNode;
test.before(async () => {
  n = await startNode();
});
test.after.always(async () => {
  await n?.stop();
});

const post = (body: Uint8Array, headers: Record<string, string>) =>
  fetch(`${n.url}/raw`, { method: 'POST', body, headers }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
const FB = 'application/x-svc-metric-list-flatbuffer';

test('POST /raw stores both layouts; reads give the values back', async (t) => {
  const r1 = await post(buildV1(EVERY), { 'content-type': 'application/x-circonus-metric-list-flatbuffer', 'X-Snowth-Datapoints': '11' });
  t.is(r1.status, 200);
  t.is(r1.json.updated, 11);
  t.is(r1.json.errors, 0);
  t.is((await getJson(`${n.url}/raw/${UUID}/L?start_ts=0.000&end_ts=9999.000`)).text, '[[1000000,18446744073709551615]]');
  t.deepEqual((await getJson(`${n.url}/read/0/9999/${UUID}/s`)).json, [[1000000, 'hello']]);
  t.deepEqual((await getJson(`${n.url}/histogram/960/1000/60/${UUID}/h`)).json, [[960, 60, { '+10e-001': 3, '-25e-003': 2 ** 40 }]]);
  t.deepEqual((await getJson(`${n.url}/raw/${UUID}/${encodeURIComponent('tagged|ST[a:1,b:2]')}?start_ts=0.000&end_ts=9999.000`)).json, [[1000000, 1]]);
  const r2 = await post(buildV2([{ name: 'v2.metric', value: { t: 'double', v: 7.25 } }]), { 'content-type': FB, 'x-svc-datapoints': '99' });
  t.is(r2.status, 200, 'a datapoints hint that differs is not an error');
  t.deepEqual((await getJson(`${n.url}/raw/${UUID}/v2.metric?start_ts=0.000&end_ts=9999.000`)).json, [[2000000, 7.25]]);
});

test('POST /raw FlatBuffer errors: header required, malformed bodies 400 and store nothing', async (t) => {
  const body = buildV2([{ name: 'never.stored', value: { t: 'int', v: 1 } }]);
  t.is((await post(body, { 'content-type': FB })).status, 400);
  t.is((await post(body, { 'content-type': FB, 'x-svc-datapoints': '-1' })).status, 400);
  const bad = await post(body.subarray(0, body.length - 9), { 'content-type': FB, 'x-svc-datapoints': '1' });
  t.is(bad.status, 400);
  t.regex(bad.json.error, /malformed MetricList/);
  t.is((await getJson(`${n.url}/raw/${UUID}/never.stored?start_ts=0.000&end_ts=9999.000`)).status, 404);
});

test('generations: last_* resolvers keep the higher generation, across seals and restarts', async (t) => {
  const last = await startNode({ conflictResolver: 'last_abs_biggest' });
  let node = last;
  const at = 3_000_000;
  const send = async (target: TestNode, points: Point[]) => {
    const r = await fetch(`${target.url}/raw`, { method: 'POST', body: buildV2(points), headers: { 'content-type': FB, 'x-svc-datapoints': '1' } });
    t.is(r.status, 200);
  };
  const value = async (target: TestNode, name: string) => (await getJson(`${target.url}/raw/${UUID}/${name}?start_ts=0.000&end_ts=9999.000`)).json;
  const tsv = (target: TestNode, name: string, v: string) => put(target.url, mLine('3000.000', name, 'n', v, `web\`http\`c_5_1::http\`${UUID}`));
  try {
    for (const target of [n, last]) {
      await send(target, [{ name: 'gen.a', ts: at, value: { t: 'int', v: 5 }, gen: 2 }]);
      await tsv(target, 'gen.a', '1000');
      await send(target, [{ name: 'gen.a', ts: at, value: { t: 'double', v: -999 }, gen: 1 }]);
    }
    t.deepEqual(await value(n, 'gen.a'), [[at, 1000]], 'abs_biggest ignores generations');
    t.deepEqual(await value(last, 'gen.a'), [[at, 5]], 'generation 2 beats larger values of generations 0 and 1');
    // Seal to disk, restart, and collide with the sealed block.
    await last.stop(false);
    node = await startNode({ conflictResolver: 'last_abs_biggest' }, last.dataDir);
    t.deepEqual(await value(node, 'gen.a'), [[at, 5]], 'after a restart');
    await tsv(node, 'gen.a', '-5000');
    await send(node, [{ name: 'gen.a', ts: at, value: { t: 'int', v: 3 }, gen: 2 }]);
    t.deepEqual(await value(node, 'gen.a'), [[at, 5]], 'equal generations fall back to abs_biggest');
    await send(node, [{ name: 'gen.a', ts: at, value: { t: 'int', v: 1 }, gen: 3 }]);
    t.deepEqual(await value(node, 'gen.a'), [[at, 1]], 'a higher generation replaces a sealed value');
  } finally {
    await node.stop();
  }
});
