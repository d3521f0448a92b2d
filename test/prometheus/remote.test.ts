// Prometheus remote write and read with hand-built bodies against a real node.
import test from 'ava';
import { compressSync, uncompressSync } from 'snappy';
import { decodeReadResponse, encodeReadRequest, encodeWriteRequest, type RemoteQuery } from '../../model/prometheus/remote-codec.js';
import type { Labels } from '../../model/prometheus/types.js';
import { getJson, startNode, type TestNode } from '../helpers/node.js';

const ACCOUNT = 7;
const UUID = '3f2c1d4e-0000-4000-8000-00000000abcd';
const OTHER = '3f2c1d4e-0000-4000-8000-00000000ffff';
let n: TestNode;
test.before(async () => {
  n = await startNode();
});
test.after.always(async () => {
  await n?.stop();
});

const T0 = 1_700_000_000_000;

async function write(body: Uint8Array, uuid = UUID, headers: Record<string, string> = { 'content-encoding': 'snappy', 'content-type': 'application/x-protobuf' }) {
  const res = await fetch(`${n.url}/module/prometheus/write/${ACCOUNT}/${uuid}`, { method: 'POST', body, headers });
  const text = await res.text();
  return { status: res.status, text, json: text === '' ? undefined : JSON.parse(text) };
}

async function read(queries: RemoteQuery[], uuid = UUID) {
  const res = await fetch(`${n.url}/module/prometheus/read/${ACCOUNT}/${uuid}`, { method: 'POST', body: encodeReadRequest(queries), headers: { 'content-encoding': 'snappy' } });
  return { status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) };
}

const findTags = (query: string) => getJson(`${n.url}/find/${ACCOUNT}/tags?query=${encodeURIComponent(query)}&activity=0`);

test('remote write stores samples under name and stream tags; remote read returns them', async (t) => {
  const series: { labels: Labels; samples: { value: number; timestamp: number }[] }[] = [
    { labels: { __name__: 'http_requests_total', job: 'api', instance: 'localhost:9090' }, samples: [{ value: 1, timestamp: T0 }, { value: 5, timestamp: T0 + 15_000 }] },
    { labels: { __name__: 'http_requests_total', job: 'web', instance: 'localhost:9091', path: '/a b' }, samples: [{ value: 2, timestamp: T0 }] },
  ];
  const w = await write(encodeWriteRequest(series));
  t.is(w.status, 204, w.text);

  // The labels are stream tags; a value a tag cannot hold plainly stays base64 in the name.
  const found = await findTags('and(__name:http_requests_total)');
  t.deepEqual(found.json.map((r: { metric_name: string }) => r.metric_name).sort(), [
    'http_requests_total|ST[instance:localhost:9090,job:api]',
    `http_requests_total|ST[instance:localhost:9091,job:web,path:b"${Buffer.from('/a b').toString('base64')}"]`,
  ]);
  t.is(found.json[0].uuid, UUID);
  t.is(found.json[0].account_id, ACCOUNT);
  const raw = await getJson(`${n.url}/raw/${UUID}/${encodeURIComponent('http_requests_total|ST[instance:localhost:9090,job:api]')}?start_ts=0.000&end_ts=9999999999.999`);
  t.deepEqual(raw.json, [[T0, 1], [T0 + 15_000, 5]]);

  const r = await read([{ startMs: T0 - 1000, endMs: T0 + 60_000, matchers: [{ type: '=', name: '__name__', value: 'http_requests_total' }] }]);
  t.is(r.status, 200);
  t.is(r.headers.get('content-encoding'), 'snappy');
  t.is(r.headers.get('content-type'), 'application/x-protobuf');
  const [result] = decodeReadResponse(r.body);
  t.deepEqual(result, [
    { labels: { __name__: 'http_requests_total', instance: 'localhost:9090', job: 'api' }, samples: [{ value: 1, timestamp: T0 }, { value: 5, timestamp: T0 + 15_000 }] },
    { labels: { __name__: 'http_requests_total', instance: 'localhost:9091', job: 'web', path: '/a b' }, samples: [{ value: 2, timestamp: T0 }] },
  ]);
});

test('remote read applies all four matchers, the time range and the check uuid', async (t) => {
  const mk = (env: string, host: string, v: number): { labels: Labels; samples: { value: number; timestamp: number }[] } => ({
    labels: { __name__: 'rr_metric', env, host },
    samples: [{ value: v, timestamp: T0 + 1000 }, { value: v + 1, timestamp: T0 + 120_000 }],
  });
  t.is((await write(encodeWriteRequest([mk('prod', 'a1', 10), mk('prod', 'b1', 20), mk('dev', 'a2', 30)]))).status, 204);
  t.is((await write(encodeWriteRequest([mk('prod', 'a1', 99)]), OTHER)).status, 204);
  const q = (matchers: RemoteQuery['matchers'], startMs = T0, endMs = T0 + 200_000) => read([{ startMs, endMs, matchers: [{ type: '=', name: '__name__', value: 'rr_metric' }, ...matchers] }]);
  const hosts = async (matchers: RemoteQuery['matchers'], startMs?: number, endMs?: number) =>
    decodeReadResponse((await q(matchers, startMs, endMs)).body)[0]!.map((s) => `${s.labels.host}:${s.samples.map((p) => p.value).join(',')}`).sort();

  t.deepEqual(await hosts([{ type: '=', name: 'env', value: 'prod' }]), ['a1:10,11', 'b1:20,21']);
  t.deepEqual(await hosts([{ type: '!=', name: 'env', value: 'prod' }]), ['a2:30,31']);
  t.deepEqual(await hosts([{ type: '=~', name: 'host', value: 'a.' }]), ['a1:10,11', 'a2:30,31']);
  // Fully anchored: `a` alone matches no host.
  t.deepEqual(await hosts([{ type: '=~', name: 'host', value: 'a' }]), []);
  t.deepEqual(await hosts([{ type: '!~', name: 'host', value: 'a.*' }]), ['b1:20,21']);
  // A label no series has matches the empty string.
  t.deepEqual(await hosts([{ type: '=', name: 'zone', value: '' }, { type: '=', name: 'host', value: 'b1' }]), ['b1:20,21']);
  t.deepEqual(await hosts([{ type: '=', name: 'env', value: 'prod' }], T0, T0 + 60_000), ['a1:10', 'b1:20']);
  // Several queries get one result each.
  const two = decodeReadResponse(
    (await read([
      { startMs: T0, endMs: T0 + 200_000, matchers: [{ type: '=', name: 'host', value: 'a1' }] },
      { startMs: T0, endMs: T0 + 200_000, matchers: [{ type: '=', name: 'host', value: 'zz' }] },
    ])).body,
  );
  t.is(two.length, 2);
  t.is(two[0]!.length, 1);
  t.deepEqual(two[1], []);
  const other = decodeReadResponse((await read([{ startMs: T0, endMs: T0 + 200_000, matchers: [{ type: '=', name: 'host', value: 'a1' }] }], OTHER)).body);
  t.deepEqual(other[0]!.map((s) => s.samples[0]!.value), [99]);
  const badRe = await q([{ type: '=~', name: 'host', value: '(' }]);
  t.is(badRe.status, 400);
});

test('malformed bodies are 400 and store nothing', async (t) => {
  const good = encodeWriteRequest([{ labels: { __name__: 'malformed_probe', a: 'b' }, samples: [{ value: 1, timestamp: T0 }] }]);
  const proto = uncompressSync(good, { asBuffer: true }) as Buffer;
  const cases: [string, Uint8Array, RegExp][] = [
    ['bad snappy', new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]), /snappy/],
    ['truncated snappy', good.subarray(0, good.length - 4), /snappy/],
    ['truncated protobuf', compressSync(proto.subarray(0, proto.length - 3)), /WriteRequest/],
    ['not protobuf', compressSync(new TextEncoder().encode('{"hello": "json"}')), /WriteRequest/],
    ['empty body', new Uint8Array(0), /empty/],
    // A literal whose 4-byte length has the top bit set: snappyjs looped for minutes on it (issue 17's fuzzers).
    ['negative literal length', new Uint8Array([0x0a, 0xfc, 0, 0, 0, 0x80]), /snappy/],
    ['6 bytes declaring 256 MiB', new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x01, 0]), /declares 268435456 bytes/],
  ];
  for (const [what, body, error] of cases) {
    const r = await write(body);
    t.is(r.status, 400, what);
    t.is(r.json.code, 'FER_ERR_BAD_BODY', what);
    t.regex(r.json.error, error, what);
  }
  const gzip = await write(good, UUID, { 'content-encoding': 'gzip' });
  t.is(gzip.status, 415);
  t.deepEqual((await findTags('and(__name:malformed_probe)')).json, []);
  const badPath = await write(good, 'not-a-uuid');
  t.is(badPath.status, 400);
  t.is(badPath.json.code, 'FER_ERR_BAD_UUID');
  const badAccount = await fetch(`${n.url}/module/prometheus/write/x/${UUID}`, { method: 'POST', body: good });
  t.is(badAccount.status, 400);
  const badRead = await fetch(`${n.url}/module/prometheus/read/${ACCOUNT}/${UUID}`, { method: 'POST', body: new Uint8Array([1, 2, 3]) });
  t.is(badRead.status, 400);
});

test('series that cannot be stored are rejected; the rest of the body is stored', async (t) => {
  const noName = await write(encodeWriteRequest([{ labels: { job: 'x' }, samples: [{ value: 1, timestamp: T0 }] }]));
  t.is(noName.status, 400);
  t.is(noName.json.code, 'FER_ERR_NO_VALID_RECORDS');
  t.regex(noName.json.error, /__name__/);
  const mixed = await write(
    encodeWriteRequest([
      { labels: { __name__: 'partial_ok', job: 'x' }, samples: [{ value: 3, timestamp: T0 }] },
      { labels: { __name__: 'partial_bad', __check_uuid: 'x' }, samples: [{ value: 4, timestamp: T0 }] },
      { labels: { __name__: 'partial_future' }, samples: [{ value: 4, timestamp: Date.now() + 30 * 86400_000 }] },
    ]),
  );
  t.is(mixed.status, 204);
  t.is((await findTags('and(__name:partial_ok)')).json.length, 1);
  t.is((await findTags('or(__name:partial_bad,__name:partial_future)')).json.length, 0);
  // An empty label value is no label (Prometheus' rule).
  t.is((await write(encodeWriteRequest([{ labels: { __name__: 'empty_label', a: '' }, samples: [{ value: 1, timestamp: T0 }] }]))).status, 204);
  t.deepEqual((await findTags('and(__name:empty_label)')).json.map((r: { metric_name: string }) => r.metric_name), ['empty_label']);
});

test('CAQL #lang="promql" evaluates through the PromQL engine', async (t) => {
  // Written by the first test: api 1 → 5 (at T0 + 15 s), web 2; the lookback carries them.
  const w = await write(encodeWriteRequest([{ labels: { __name__: 'caql_promql', job: 'x' }, samples: [{ value: 3, timestamp: T0 }] }]));
  t.is(w.status, 204);
  const q = (query: string) => getJson(`${n.url}/extension/lua/caql_v1?account_id=${ACCOUNT}&start=1700000040&end=1700000160&period=60&query=${encodeURIComponent(query)}`);
  t.deepEqual((await q('#lang="promql" caql_promql * 2')).json, [[1700000040, [6]], [1700000100, [6]]]);
  const df4 = await getJson(`${n.url}/extension/lua/caql_v1?account_id=${ACCOUNT}&start=1700000040&end=1700000160&period=60&format=DF4&query=${encodeURIComponent('#lang="promql" caql_promql')}`);
  t.deepEqual(df4.json.meta.map((m: { label: string }) => m.label), ['caql_promql{job="x"}']);
  const bad = await q('#lang="promql" info(caql_promql)');
  t.is(bad.status, 400);
  t.regex(bad.json.user_error.message, /info/);
});
