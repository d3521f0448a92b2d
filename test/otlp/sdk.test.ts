// The real OpenTelemetry JS SDK (`@opentelemetry/sdk-metrics`) exporting through its OTLP
// protobuf and JSON exporters to a running node; what it sent is read back through `/fetch`,
// `/histogram` and the PromQL API. Expected values are worked out from what each instrument
// was given, in the comments beside them.
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { AggregationTemporalityPreference, OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationType, MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import test from 'ava';
import { getJson, startNode, type TestNode } from '../helpers/node.js';

const ACCOUNT = 11;
const UUID = '6a1f3c2e-0000-4000-8000-0000000071e1';
let n: TestNode;
test.before(async () => {
  n = await startNode({ defaultAccount: ACCOUNT, defaultCheckUuid: UUID });
});
test.after.always(async () => {
  await n?.stop();
});

/** Wraps an exporter so each export's result (code 0 = success) is kept. */
function recording(inner: PushMetricExporter): { exporter: PushMetricExporter; results: { code: number; error?: Error }[] } {
  const results: { code: number; error?: Error }[] = [];
  const exporter: PushMetricExporter = {
    export: (m: ResourceMetrics, done) => inner.export(m, (r) => (results.push(r), done(r))),
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
    selectAggregationTemporality: inner.selectAggregationTemporality?.bind(inner),
    selectAggregation: inner.selectAggregation?.bind(inner),
  };
  return { exporter, results };
}

function provider(exporter: PushMetricExporter, service: string) {
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.namespace': 'shop', 'service.instance.id': 'i-1', 'deployment.environment': 'test' }),
    readers: [reader],
    views: [{ instrumentName: 'payload.size', aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } }],
  });
  return { meter: meterProvider.getMeter('ferrite-test', '1.2.3'), flush: () => meterProvider.forceFlush(), close: () => meterProvider.shutdown() };
}

const promql = async (query: string) => {
  const r = await getJson(`${n.url}/api/v1/query?query=${encodeURIComponent(query)}&time=${Date.now() / 1000}`);
  return r.json as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
};

/** One stream's last numeric value through /fetch (average over one period covering the last minutes). */
async function fetchLast(canonical: string): Promise<number | null> {
  const start = Math.floor(Date.now() / 1000) - 600;
  const body = { start, period: 660, count: 1, streams: [{ uuid: UUID, name: canonical, kind: 'numeric', transform: 'average' }], reduce: [] };
  const res = await fetch(`${n.url}/fetch`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-svc-account-id': String(ACCOUNT) } });
  const json = (await res.json()) as { data: (number | null)[][] };
  return json.data[0]![0]!;
}

async function canonicalNames(name: string): Promise<string[]> {
  const r = await getJson(`${n.url}/find/${ACCOUNT}/tags?query=${encodeURIComponent(`and(__name:${name})`)}&activity=0`);
  return (r.json as { metric_name: string }[]).map((m) => m.metric_name).sort();
}

for (const [label, make] of [
  ['protobuf, gzip', (url: string) => new ProtoExporter({ url, compression: 'gzip' as never })],
  ['JSON', (url: string) => new JsonExporter({ url })],
] as const) {
  test.serial(`SDK over OTLP ${label}: counters, up-down counters, gauges and explicit histograms read back exact`, async (t) => {
    const service = label.startsWith('JSON') ? 'checkout-json' : 'checkout-proto';
    const path = label.startsWith('JSON') ? '/api/v1/otlp/v1/metrics' : '/v1/metrics';
    const { exporter, results } = recording(make(`${n.url}${path}`));
    const p = provider(exporter, service);
    const requests = p.meter.createCounter('http.requests', { unit: '{request}' });
    requests.add(3, { route: '/a' });
    requests.add(4, { route: '/a' });
    requests.add(2, { route: '/b' });
    const depth = p.meter.createUpDownCounter('queue.depth');
    depth.add(5);
    depth.add(-2);
    p.meter.createGauge('cpu.temp', { unit: 'Cel' }).record(41.5, { core: '0' });
    const latency = p.meter.createHistogram('http.server.duration', { unit: 's', advice: { explicitBucketBoundaries: [0.1, 1] } });
    for (const v of [0.05, 0.5, 0.7, 3]) latency.record(v);
    await p.flush();
    t.deepEqual(results.map((r) => r.code), [0], String(results[0]?.error));

    // Counter `http.requests`, unit `{request}` (an annotation: no unit suffix), monotonic → `_total`.
    // Labels: the point's `route`, resource attributes, scope name/version, job = namespace/service.
    const q = await promql(`{"http.requests_total", job="shop/${service}"}`);
    t.is(q.status, 'success');
    const byRoute = Object.fromEntries(q.data.result.map((r) => [r.metric.route, Number(r.value[1])]));
    t.deepEqual(byRoute, { '/a': 7, '/b': 2 }); // 3 + 4 on /a, 2 on /b (cumulative)
    const labels = q.data.result.find((r) => r.metric.route === '/a')!.metric;
    t.like(labels, {
      __name__: 'http.requests_total',
      job: `shop/${service}`,
      instance: 'i-1',
      'service.name': service,
      'deployment.environment': 'test',
      otel_scope_name: 'ferrite-test',
      otel_scope_version: '1.2.3',
    });

    // UpDownCounter: a non-monotonic cumulative sum is a gauge: 5 − 2 = 3, no suffix.
    const [depthName] = (await canonicalNames('queue.depth')).filter((c) => c.includes(service));
    t.truthy(depthName);
    t.is(await fetchLast(depthName!), 3);
    // Gauge of unit Cel → `_celsius`.
    const [tempName] = (await canonicalNames('cpu.temp_celsius')).filter((c) => c.includes(service));
    t.is(await fetchLast(tempName!), 41.5);

    // Explicit histogram, bounds [0.1, 1], values 0.05 0.5 0.7 3: buckets (−∞,0.1] 1, (0.1,1] 2,
    // (1,+∞) 1 → cumulative `le` 0.1: 1, 1: 3, +Inf: 4; count 4; sum 0.05+0.5+0.7+3 = 4.25.
    const bucket = await promql(`{"http.server.duration_seconds_bucket", job="shop/${service}"}`);
    t.deepEqual(Object.fromEntries(bucket.data.result.map((r) => [r.metric.le, Number(r.value[1])])), { '0.1': 1, '1': 3, '+Inf': 4 });
    const count = await promql(`{"http.server.duration_seconds_count", job="shop/${service}"}`);
    t.is(Number(count.data.result[0]!.value[1]), 4);
    const sum = await promql(`{"http.server.duration_seconds_sum", job="shop/${service}"}`);
    t.is(Number(sum.data.result[0]!.value[1]), 4.25);
    await p.close();
  });
}

test.serial('SDK exponential histograms (cumulative) become circllhist histograms, each export storing its change', async (t) => {
  const { exporter, results } = recording(new ProtoExporter({ url: `${n.url}/v1/metrics` }));
  const p = provider(exporter, 'payloads');
  const size = p.meter.createHistogram('payload.size', { unit: 'By' });
  size.record(3.05);
  size.record(7.05);
  await p.flush();
  size.record(7.05);
  await p.flush();
  t.deepEqual(results.map((r) => r.code), [0, 0], String(results.find((r) => r.code !== 0)?.error));

  // 3.05 and 7.05 make the SDK downscale from 20 until log2(7.05/3.05)·2^s ≤ 160 buckets: s = 7
  // (1.209·128 = 155). At scale 7, 3.05 is in bucket ⌈log2(3.05)·128⌉ − 1 = 205, (2^(205/128),
  // 2^(206/128)] = (3.036, 3.053], inside circllhist bin [3.0, 3.1); 7.05 in bucket 360,
  // (7.013, 7.051], inside [7.0, 7.1). First export: the cumulative histogram whole (the SDK
  // started after the node): {3.0: 1, 7.0: 1}. Second: cumulative {3.0: 1, 7.0: 2} minus the
  // first = {7.0: 1}. Summed over the periods: {3.0: 1, 7.0: 2}.
  const [name] = await canonicalNames('payload.size_bytes');
  t.truthy(name);
  const now = Math.floor(Date.now() / 1000);
  const rows = (await getJson(`${n.url}/histogram/${now - 600}/${now + 60}/60/${UUID}/${encodeURIComponent(name!)}`)).json as [number, number, Record<string, number>][];
  const total: Record<string, number> = {};
  for (const [, , bins] of rows) for (const [bin, c] of Object.entries(bins)) total[bin] = (total[bin] ?? 0) + c;
  t.deepEqual(total, { '+30e-001': 1, '+70e-001': 2 });
  // The PromQL view of the same histogram: its median over the window is in bin [3.0, 3.1) or [7.0, 7.1).
  const q = await promql(`histogram_quantile(0.9, rate({"payload.size_bytes"}[10m]))`);
  t.is(q.status, 'success');
  const p90 = Number(q.data.result[0]!.value[1]);
  t.true(p90 >= 7 && p90 < 7.1, String(p90));
  await p.close();
});

test.serial('SDK with delta temporality (JSON): exponential histograms stored as they come, delta counters refused', async (t) => {
  const { exporter, results } = recording(new JsonExporter({ url: `${n.url}/v1/metrics`, temporalityPreference: AggregationTemporalityPreference.DELTA }));
  const p = provider(exporter, 'deltas');
  const size = p.meter.createHistogram('payload.size', { unit: 'By' });
  const sent = p.meter.createCounter('delta.sent');
  size.record(5.05);
  sent.add(1);
  await p.flush();
  size.record(5.05);
  size.record(9.05);
  sent.add(1);
  await p.flush();
  // The counter's points are refused (partial success), the histograms' stored: both exports succeed.
  t.deepEqual(results.map((r) => r.code), [0, 0], String(results.find((r) => r.code !== 0)?.error));
  t.deepEqual(await canonicalNames('delta.sent_total'), []);
  // Delta points: {5.05} then {5.05, 9.05}. 5.05 alone stays at scale 20 (bucket far inside
  // [5.0, 5.1)); with 9.05 the SDK picks log2(9.05/5.05)·2^s ≤ 160 → s = 7 (107.7), where 5.05 is
  // in bucket ⌈log2(5.05)·128⌉ − 1 = 299, (2^(299/128), 2^(300/128)] = (5.049, 5.076] ⊂ [5.0, 5.1),
  // and 9.05 in bucket 406, (9.012, 9.061] ⊂ [9.0, 9.1).
  // Summed: {5.0: 2, 9.0: 1}.
  const [name] = (await canonicalNames('payload.size_bytes')).filter((c) => c.includes('deltas'));
  const now = Math.floor(Date.now() / 1000);
  const rows = (await getJson(`${n.url}/histogram/${now - 600}/${now + 60}/60/${UUID}/${encodeURIComponent(name!)}`)).json as [number, number, Record<string, number>][];
  const total: Record<string, number> = {};
  for (const [, , bins] of rows) for (const [bin, c] of Object.entries(bins)) total[bin] = (total[bin] ?? 0) + c;
  t.deepEqual(total, { '+50e-001': 2, '+90e-001': 1 });
  await p.close();
});
