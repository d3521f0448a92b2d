// OTLP/HTTP ingest with hand-built requests against a real node: every metric type, partial
// success, bad bodies, NaN/Inf, stale markers and out-of-range timestamps. Expected values
// are worked out from the request in the comments beside them.
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { isWrite } from '../../http/load-shedding.js';
import { decodeResponse, encodeRequest, type OtlpEncoding } from '../../model/otlp/codec.js';
import { getJson, startNode, type TestNode } from '../helpers/node.js';

const ACCOUNT = 12;
const UUID = '6a1f3c2e-0000-4000-8000-0000000071e2';
const NS = 1_000_000n;
let n: TestNode;
test.before(async () => {
  n = await startNode();
});
test.after.always(async () => {
  await n?.stop();
});

const T0 = Math.floor(Date.now() / 60_000) * 60_000 - 30 * 60_000;
const nanos = (ms: number): string => String(BigInt(ms) * NS);
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** One resource (service `svc`), one scope, these metrics. */
const request = (metrics: object[], resourceAttrs: object[] = [attr('service.name', 'svc')]) => ({
  resourceMetrics: [{ resource: { attributes: resourceAttrs }, scopeMetrics: [{ scope: { name: 'lib', version: '2' }, metrics }] }],
});
const gauge = (name: string, points: object[], unit = '') => ({ name, unit, gauge: { dataPoints: points } });
const point = (ms: number, value: number, attributes: object[] = []) => ({ timeUnixNano: nanos(ms), asDouble: value, attributes });

async function post(body: Uint8Array | string, headers: Record<string, string>, path = '/v1/metrics') {
  const res = await fetch(`${n.url}${path}`, { method: 'POST', body, headers: { 'x-svc-account-id': String(ACCOUNT), 'x-svc-check-uuid': UUID, ...headers } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type') ?? '', bytes, text: Buffer.from(bytes).toString('utf8') };
}

async function send(message: object, encoding: OtlpEncoding = 'protobuf') {
  const r = encoding === 'protobuf' ? await post(encodeRequest(message as Record<string, unknown>), { 'content-type': 'application/x-protobuf' }) : await post(JSON.stringify(message), { 'content-type': 'application/json' });
  return { ...r, partial: r.status === 200 ? decodeResponse(r.bytes, encoding) : null };
}

async function raw(canonical: string): Promise<[number, number | null][]> {
  return (await getJson(`${n.url}/raw/${UUID}/${encodeURIComponent(canonical)}?start_ts=0.000&end_ts=9999999999.999`)).json;
}

async function names(name: string): Promise<string[]> {
  const r = await getJson(`${n.url}/find/${ACCOUNT}/tags?query=${encodeURIComponent(`and(__name:${name})`)}&activity=0`);
  return (r.json as { metric_name: string }[]).map((m) => m.metric_name).sort();
}

test('gauges and sums: stored under translated names with resource, scope and point attributes as stream tags', async (t) => {
  const r = await send(
    request([
      gauge('room.temp', [point(T0, 21.5, [attr('room', 'a')])], 'Cel'),
      { name: 'jobs.done', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ timeUnixNano: nanos(T0), asInt: '9007199254740993' }] } },
    ]),
  );
  t.is(r.status, 200, r.text);
  t.is(r.type, 'application/x-protobuf');
  t.is(r.partial, null); // every point accepted: partial_success left unset
  // Tags: point `room`; resource `service.name` (not plain-legal? it is: letters and '.'); scope → otel_scope_*; service.name → job.
  t.deepEqual(await names('room.temp_celsius'), ['room.temp_celsius|ST[job:svc,otel_scope_name:lib,otel_scope_version:2,room:a,service.name:svc]']);
  t.deepEqual(await raw('room.temp_celsius|ST[job:svc,otel_scope_name:lib,otel_scope_version:2,room:a,service.name:svc]'), [[T0, 21.5]]);
  // as_int 2^53 + 1 is kept exactly (a 64-bit value), `_total` added to the monotonic sum.
  const [jobs] = await names('jobs.done_total');
  t.truthy(jobs);
  const text = (await getJson(`${n.url}/raw/${UUID}/${encodeURIComponent(jobs!)}?start_ts=0.000&end_ts=9999999999.999`)).text;
  t.is(text, `[[${T0},9007199254740993]]`);
});

test('JSON requests (OTLP JSON mapping) decode like protobuf and get JSON responses', async (t) => {
  const r = await send(request([gauge('json.gauge', [{ timeUnixNano: nanos(T0), asDouble: 'Infinity' }, { timeUnixNano: nanos(T0 + 1000), asInt: '-5' }])]), 'json');
  t.is(r.status, 200, r.text);
  t.is(r.type, 'application/json');
  t.is(r.text, '{}');
  const [name] = await names('json.gauge');
  t.deepEqual(await raw(name!), [[T0, null], [T0 + 1000, -5]]); // /raw JSON writes non-finite values as null
});

test('explicit histograms: cumulative `le` buckets, `_sum` and `_count`; summaries: `{quantile}`, `_sum`, `_count`', async (t) => {
  const r = await send(
    request([
      {
        name: 'rpc.latency',
        unit: 'ms',
        histogram: {
          aggregationTemporality: 2,
          // Buckets (−∞,5] 2, (5,10] 3, (10,+∞) 1 → le 5: 2, le 10: 5, +Inf: count 6.
          dataPoints: [{ timeUnixNano: nanos(T0), count: 6, sum: 40.5, bucketCounts: [2, 3, 1], explicitBounds: [5, 10] }],
        },
      },
      { name: 'gc.pause', summary: { dataPoints: [{ timeUnixNano: nanos(T0), count: 3, sum: 0.75, quantileValues: [{ quantile: 0.5, value: 0.2 }, { quantile: 0.99, value: 0.4 }] }] } },
    ]),
  );
  t.is(r.status, 200, r.text);
  const tags = 'job:svc,otel_scope_name:lib,otel_scope_version:2,service.name:svc';
  t.deepEqual(await raw(`rpc.latency_milliseconds_bucket|ST[${tags},le:5]`), [[T0, 2]]);
  t.deepEqual(await raw(`rpc.latency_milliseconds_bucket|ST[${tags},le:10]`), [[T0, 5]]);
  t.deepEqual(await raw(`rpc.latency_milliseconds_bucket|ST[${tags},le:+Inf]`), [[T0, 6]]);
  t.deepEqual(await raw(`rpc.latency_milliseconds_sum|ST[${tags}]`), [[T0, 40.5]]);
  t.deepEqual(await raw(`rpc.latency_milliseconds_count|ST[${tags}]`), [[T0, 6]]);
  t.deepEqual(await raw(`gc.pause|ST[${tags},quantile:0.5]`), [[T0, 0.2]]);
  t.deepEqual(await raw(`gc.pause|ST[${tags},quantile:0.99]`), [[T0, 0.4]]);
  t.deepEqual(await raw(`gc.pause_sum|ST[${tags}]`), [[T0, 0.75]]);
  t.deepEqual(await raw(`gc.pause_count|ST[${tags}]`), [[T0, 3]]);
});

test('a delta exponential histogram is stored as it is: buckets spread over the circllhist bins they overlap', async (t) => {
  // Scale 0 (base 2): bucket 1 is (2, 4], count 5; bucket 2 is (4, 8], count 1; zero bucket 2;
  // negative bucket 0 is [−2, −1), count 1.
  // (2, 4] in log10: (0.30103, 0.60206], width 0.30103, over the bins [2.0,2.1) … [3.9,4.0).
  // Cumulative fraction up to 3.0: log10(3/2)/log10(2) = 0.58496 → round(5·0.58496) = 3 counts
  // in the bins below 3.0, 2 in [3.0, 4.0). Below 3.0: up to 2.2 F = log10(1.1)/log10(2) = 0.1375
  // → round(0.69) = 1 in [2.0, 2.2) — bin 2.0 (F 0.0704 → 0) gets 0, bin 2.1 (F 0.1375 → 1) gets 1;
  // the remaining two: F reaches 0.5 (→ round(2.5) = 3) at log10(2·√2 = 2.828…), inside [2.8, 2.9):
  // the next bins take counts where 5·F crosses 1.5 and 2.5: F = 0.3 at 2·2^0.3 = 2.462
  // ([2.4,2.5)) → count 2; F = 0.5 at 2.828 ([2.8,2.9)) → count 3. Then 3.5 at F 0.7 = 2^1.7 = 3.249 ([3.2,3.3)) → 4,
  // 4.5 at F 0.9 = 2^1.9 = 3.732 ([3.7,3.8)) → 5.
  // (4, 8] count 1: round(F) first reaches 1 at F = 0.5, 2^2.5 = 5.657, bin [5.6, 5.7).
  const r = await send(
    request([
      {
        name: 'obj.size',
        exponentialHistogram: {
          aggregationTemporality: 1,
          dataPoints: [{ timeUnixNano: nanos(T0), count: 9, scale: 0, zeroCount: 2, positive: { offset: 1, bucketCounts: [5, 1] }, negative: { offset: 0, bucketCounts: [1] } }],
        },
      },
    ]),
  );
  t.is(r.status, 200, r.text);
  const [name] = await names('obj.size');
  const start = T0 / 1000;
  const rows = (await getJson(`${n.url}/histogram/${start - 60}/${start + 60}/60/${UUID}/${encodeURIComponent(name!)}`)).json;
  // [−2, −1) count 1: F 0.5 at −√2 = −1.414, bin (−1.5, −1.4] labelled −14e-001.
  t.deepEqual(rows, [[start, 60, { '-14e-001': 1, '0': 2, '+21e-001': 1, '+24e-001': 1, '+28e-001': 1, '+32e-001': 1, '+37e-001': 1, '+56e-001': 1 }]]);
});

test('partial success: bad points are rejected and named, the good ones in the same request stored', async (t) => {
  const future = Date.now() + 30 * 86_400_000; // beyond maxClockSkewMs (7 days by default)
  const r = await send(
    request([
      gauge('mixed.good', [point(T0, 1), point(T0 + 1000, NaN)]),
      gauge('mixed.future', [point(future, 2)]),
      gauge('mixed.unset', [{ asDouble: 3 }]),
      { name: 'mixed.delta', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ timeUnixNano: nanos(T0), asDouble: 4 }] } },
      { name: 'mixed.unknown' },
      { name: 'mixed.badhist', histogram: { aggregationTemporality: 2, dataPoints: [{ timeUnixNano: nanos(T0), count: 1, bucketCounts: [1], explicitBounds: [1] }] } },
      gauge('mixed.stale', [{ timeUnixNano: nanos(T0), flags: 1 }]),
      gauge('mixed.badattr', [point(T0, 5, [attr('k', '\uD800')])]), // a lone surrogate: not UTF-8 on the wire
      { name: 'mixed.infbound', histogram: { aggregationTemporality: 2, dataPoints: [{ timeUnixNano: nanos(T0), count: 1, bucketCounts: [1, 0, 0], explicitBounds: [1, Infinity] }] } },
    ]),
  );
  t.is(r.status, 200, r.text);
  // Rejected: the future point, the unset time, the delta sum, the metric of no known type
  // (one point), the histogram with 1 count for 1 bound, the attribute that is not UTF-8, the
  // bound +Inf (the implicit last bucket's): 7 of 10.
  t.is(r.partial!.rejectedDataPoints, 7, r.partial!.errorMessage);
  for (const words of ['further in the future', 'time_unix_nano is not set', 'delta temporality', "metric 'mixed.unknown' has no data", 'one more count than bounds', 'attributes cannot be read', 'must be finite']) {
    t.true(r.partial!.errorMessage.includes(words), `${words} in ${r.partial!.errorMessage}`);
  }
  // NaN is a value (Prometheus' rule); /raw's JSON writes it as null.
  t.deepEqual(await raw((await names('mixed.good'))[0]!), [[T0, 1], [T0 + 1000, null]]);
  // A point flagged "no recorded value" is stored as a null (ferrite's staleness marker).
  t.deepEqual(await raw((await names('mixed.stale'))[0]!), [[T0, null]]);
  t.deepEqual(await names('mixed.future'), []);
  t.deepEqual(await names('mixed.delta'), []);
});

test('bad bodies: 400 or 415 naming the problem, and nothing of them stored', async (t) => {
  const good = encodeRequest(request([gauge('bad.body', [point(T0, 1)])]));
  const damaged = Buffer.from(good);
  damaged[0] = 0x0f; // field 1 with wire type 7, which protobuf does not have
  const cases: [string, Promise<Awaited<ReturnType<typeof post>>>, number, string][] = [
    ['damaged protobuf', post(damaged, { 'content-type': 'application/x-protobuf' }), 400, 'wire type 7'],
    ['truncated protobuf', post(good.subarray(0, good.length - 4), { 'content-type': 'application/x-protobuf' }), 400, 'not an ExportMetricsServiceRequest'],
    ['gzip header, not gzip', post(good, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }), 400, 'not gzip'],
    ['unknown content encoding', post(good, { 'content-type': 'application/x-protobuf', 'content-encoding': 'br' }), 415, 'Content-Encoding br'],
    ['unknown media type', post(good, { 'content-type': 'text/plain' }), 415, 'application/x-protobuf or application/json'],
    ['JSON that is not JSON', post('{"resourceMetrics": [', { 'content-type': 'application/json' }), 400, 'not JSON'],
    ['JSON of the wrong shape', post('{"resourceMetrics": {"a": 1}}', { 'content-type': 'application/json' }), 400, 'resourceMetrics must be a list'],
    ['JSON int64 that is no number', post(JSON.stringify(request([gauge('bad.json', [{ timeUnixNano: 'soon', asDouble: 1 }])])), { 'content-type': 'application/json' }), 400, 'not a uint64'],
    ['only bad points', post(encodeRequest(request([gauge('bad.only', [point(Date.now() + 30 * 86_400_000, 1)])])), { 'content-type': 'application/x-protobuf' }), 400, 'further in the future'],
  ];
  for (const [what, pending, status, words] of cases) {
    const r = await pending;
    t.is(r.status, status, `${what}: ${r.text}`);
    const body = JSON.parse(r.text) as { error: string; code: string };
    t.true(body.error.includes(words), `${what}: ${body.error}`);
    t.regex(body.code, /^FER_ERR_/);
  }
  t.deepEqual(await names('bad.body'), []);
  // The same body gzipped is fine, on Prometheus' path too.
  const ok = await post(gzipSync(good), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, '/api/v1/otlp/v1/metrics');
  t.is(ok.status, 200, ok.text);
  t.is((await names('bad.body')).length, 1);
});

test('account and check come from the headers, else the configured defaults, else 400', async (t) => {
  const body = encodeRequest(request([gauge('no.scope', [point(T0, 1)])]));
  const res = await fetch(`${n.url}/v1/metrics`, { method: 'POST', body, headers: { 'content-type': 'application/x-protobuf' } });
  t.is(res.status, 400);
  t.true(((await res.json()) as { error: string }).error.includes('x-svc-account-id'));
});

test('both OTLP paths are writes for load shedding (503 with Retry-After when overloaded)', (t) => {
  t.true(isWrite({ method: 'POST', url: '/v1/metrics' }));
  t.true(isWrite({ method: 'POST', url: '/api/v1/otlp/v1/metrics' }));
  t.false(isWrite({ method: 'GET', url: '/api/v1/query' }));
});

test('series names memoised by attribute bytes still tell resources, scopes and metrics apart', async (t) => {
  const twoResources = {
    resourceMetrics: ['a', 'b'].map((svc) => ({
      resource: { attributes: [attr('service.name', svc)] },
      scopeMetrics: ['s1', 's2'].map((scope) => ({ scope: { name: scope }, metrics: [gauge('memo.g', [point(T0, 1, [attr('k', 'v')])]), gauge('memo.h', [point(T0, 2, [attr('k', 'v')])])] })),
    })),
  };
  // Twice: the second time every name comes from the memo.
  for (let i = 0; i < 2; i++) t.is((await send(twoResources)).status, 200);
  // 2 resources × 2 scopes per metric name, each its own series with one sample.
  const g = await names('memo.g');
  t.deepEqual(g, ['a', 'b'].flatMap((svc) => ['s1', 's2'].map((scope) => `memo.g|ST[job:${svc},k:v,otel_scope_name:${scope},service.name:${svc}]`)).sort());
  for (const name of g) t.deepEqual(await raw(name), [[T0, 1]]);
  t.is((await names('memo.h')).length, 4);
});
