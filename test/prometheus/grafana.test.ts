// Grafana against a real node: the requests Grafana's built-in Prometheus data source and the
// IRONdb data source (circonus-labs/circonus-irondb-datasource) send, replayed as their code
// sends them (grafana pkg/promlib client.go, healthcheck.go, heuristics.go;
// packages/grafana-prometheus language_provider.ts, resource_clients.ts, datasource.ts; the
// IRONdb plugin's src/datasource.ts), with the answers checked for what that code reads.
import test from 'ava';
import { encodeWriteRequest } from '../../model/prometheus/remote-codec.js';
import { startNode, type TestNode } from '../helpers/node.js';

const ACCOUNT = 7;
const UUID = '6a7b0000-0000-4000-8000-00000000beef';
let node: TestNode;
/** Ten samples every 15 s ending a minute ago: counter c rises 1 per second (0, 15, 30, …). */
const t0 = Math.floor(Date.now() / 1000) * 1000 - 10 * 15_000 - 60_000;
const last = t0 + 9 * 15_000;

test.before(async () => {
  node = await startNode({ defaultAccount: ACCOUNT });
  const samples = (f: (k: number) => number) => Array.from({ length: 10 }, (_, k) => ({ timestamp: t0 + k * 15_000, value: f(k) }));
  const body = encodeWriteRequest([
    { labels: { __name__: 'http_requests_total', job: 'api', instance: 'a:1' }, samples: samples((k) => 15 * k) },
    { labels: { __name__: 'http_requests_total', job: 'web', instance: 'b:1' }, samples: samples((k) => 30 * k) },
    { labels: { __name__: 'req_seconds_bucket', job: 'api', le: '0.5' }, samples: samples((k) => k) },
    { labels: { __name__: 'req_seconds_bucket', job: 'api', le: '+Inf' }, samples: samples((k) => 2 * k) },
    { labels: { __name__: 'req_seconds_count', job: 'api' }, samples: samples((k) => 2 * k) },
    { labels: { __name__: 'temperature', 'http.zone': 'x' }, samples: samples(() => 21.5) },
  ]);
  const res = await fetch(`${node.url}/module/prometheus/write/${ACCOUNT}/${UUID}`, { method: 'POST', headers: { 'content-encoding': 'snappy' }, body });
  if (res.status !== 204) throw new Error(`remote write: ${res.status} ${await res.text()}`);
});

test.after.always(async () => {
  await node?.stop();
});

/** Grafana's POST: a form body, `Content-Type: application/x-www-form-urlencoded` (client.go createRequest). */
async function post(path: string, form: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${node.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  return { status: res.status, body: await res.json() };
}

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${node.url}${path}`, { headers });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

const seconds = (ms: number): string => String(ms / 1000);
const range = `start=${seconds(t0 - 3600_000)}&end=${seconds(last + 60_000)}`;

test('Prometheus data source: the health check (`1+1` at time 4) and buildinfo heuristics', async (t) => {
  // healthcheck.go: an instant query `1+1`, time range 1..4 s, by the configured method (POST by default).
  const health = await post('/api/v1/query', { query: '1+1', time: '4' });
  t.is(health.status, 200);
  t.deepEqual(health.body, { status: 'success', data: { resultType: 'scalar', result: [4, '2'] } });
  // heuristics.go: buildinfo must be 200 JSON; no `features` means "Prometheus" (not Mimir, no ruler API).
  const info = await get('/api/v1/status/buildinfo');
  t.is(info.status, 200);
  t.is(info.body.status, 'success');
  t.regex(info.body.data.version, /^\d+\.\d+\.\d+$/);
  t.is(info.body.data.features, undefined);
});

test('Prometheus data source: the language provider’s start (metric names, metadata, label names)', async (t) => {
  // language_provider.ts start(): label values of __name__ over the snapped time range.
  const names = await get(`/api/v1/label/__name__/values?${range}`);
  t.deepEqual(names.body, { status: 'success', data: ['http_requests_total', 'req_seconds_bucket', 'req_seconds_count', 'temperature'] });
  // loadMetricsMetadata(): /api/v1/metadata, read as {name: [{type, help}]}; types inferred from the series.
  const meta = await get('/api/v1/metadata');
  t.deepEqual(meta.body.data, {
    http_requests_total: [{ type: 'counter', help: '', unit: '' }],
    req_seconds: [{ type: 'histogram', help: '', unit: '' }],
    temperature: [{ type: 'unknown', help: '', unit: '' }],
  });
  t.deepEqual((await get('/api/v1/metadata?metric=http_requests_total&limit=1')).body.data, { http_requests_total: [{ type: 'counter', help: '', unit: '' }] });
  // fetchLabels(): POST /api/v1/labels with start, end and a match[] per query's metric.
  const labels = await post('/api/v1/labels', { start: seconds(t0), end: seconds(last), 'match[]': 'http_requests_total' });
  t.deepEqual(labels.body.data, ['__name__', 'instance', 'job']);
});

test('Prometheus data source: resource clients (series, labels, label values with limit and UTF-8 escaping)', async (t) => {
  // resource_clients.ts querySeries: match[] = {__name__!=""} (MATCH_ALL_LABELS), limit 40000.
  const series = await get(`/api/v1/series?${range}&match[]=${encodeURIComponent('{__name__!=""}')}&limit=40000`);
  t.is(series.body.data.length, 6);
  t.deepEqual((await get(`/api/v1/series?${range}&match[]=http_requests_total&limit=1`)).body.data, [{ __name__: 'http_requests_total', instance: 'a:1', job: 'api' }]);
  // LabelsApiClient.queryLabelValues: /api/v1/label/<name>/values?limit&start&end&match[].
  const jobs = await get(`/api/v1/label/job/values?limit=40000&${range}&match[]=http_requests_total`);
  t.deepEqual(jobs.body.data, ['api', 'web']);
  // escapeForUtf8Support: a name that is not a plain identifier goes as U__ + escapes ('.' is _2e_).
  const zones = await get(`/api/v1/label/U__http_2e_zone/values?${range}`);
  t.deepEqual(zones.body.data, ['x']);
  // getTagValues / metric_find_query label_values(job): the same route without match[].
  t.deepEqual((await get('/api/v1/label/job/values')).body.data, ['api', 'web']);
});

test('Prometheus data source: query_range and instant queries as the backend sends them', async (t) => {
  // client.go QueryRange: query, start, end (epoch seconds), step (seconds, Go's 'f' -1 form), timeout.
  const end = Math.floor(last / 15_000) * 15; // a step-aligned end, as Grafana aligns ranges
  const q = await post('/api/v1/query_range', { query: 'sum by (job) (rate(http_requests_total[1m0s]))', start: String(end - 30), end: String(end), step: '15', timeout: '30s' });
  t.is(q.status, 200);
  t.is(q.body.data.resultType, 'matrix');
  // Counters rising 1/s and 2/s: rate over a minute of samples is exactly that.
  const byJob = Object.fromEntries(q.body.data.result.map((s: { metric: { job: string }; values: [number, string][] }) => [s.metric.job, s.values.map((v) => Math.round(Number(v[1]) * 1e9) / 1e9)]));
  t.deepEqual(byJob, { api: [1, 1, 1], web: [2, 2, 2] });
  // client.go QueryInstant: query and time (the range's end).
  const instant = await post('/api/v1/query', { query: 'histogram_quantile(0.5, rate(req_seconds_bucket[1m]))', time: seconds(last) });
  // Buckets 0.5: 1/s, +Inf: 2/s: rank 1 of 2 is the top of the first bucket.
  t.deepEqual(instant.body.data.result, [{ metric: { job: 'api' }, value: [last / 1000, '0.5'] }]);
  // A bad query is Prometheus' 400 bad_data, which Grafana shows as the error.
  const bad = await post('/api/v1/query_range', { query: 'rate(http_requests_total)', start: '1', end: '2', step: '1' });
  t.is(bad.status, 400);
  t.is(bad.body.errorType, 'bad_data');
});

test('Prometheus data source: exemplars and rules probes find the features off, not broken', async (t) => {
  // datasource.ts areExemplarsAvailable(): query=test with start/end in milliseconds.
  const ex = await get(`/api/v1/query_exemplars?query=test&start=${Date.now() - 1800_000}&end=${Date.now()}`);
  t.deepEqual(ex.body, { status: 'success', data: [] });
  // loadRules(): /api/v1/rules, read as data.groups.
  t.deepEqual((await get('/api/v1/rules')).body, { status: 'success', data: { groups: [] } });
  t.deepEqual((await get('/api/v1/alerts')).body, { status: 'success', data: { alerts: [] } });
});

// The IRONdb data source, standalone mode: requests go to the node itself with
// `X-Circonus-Account` and `X-Snowth-Advisory-Limit` headers (searchRequest/dataRequest).
const irondbHeaders = { 'Content-Type': 'application/json', 'X-Snowth-Advisory-Limit': '100', 'X-Circonus-Account': String(ACCOUNT) };

test('IRONdb data source: testDatasource, metric and tag searches as the plugin builds them', async (t) => {
  // testDatasource(): metricTagsQuery('and(__name:ametric)'), the query unencoded in the URL.
  const probe = await get(`/find/${ACCOUNT}/tags?query=and(__name:ametric)`, irondbHeaders);
  t.is(probe.status, 200);
  t.deepEqual(probe.body, []);
  // metricFindQuery 'metric names': and(__name:…) with activity bounds; rows' metric_name read.
  const from = Math.floor(t0 / 1000) - 60;
  const to = Math.ceil(last / 1000) + 60;
  const found = await get(`/find/${ACCOUNT}/tags?query=and(__name:http_requests_total)&activity_start_secs=${from}&activity_end_secs=${to}`, irondbHeaders);
  t.is(found.body.length, 2);
  t.is(found.headers.get('x-snowth-search-result-count'), '2');
  t.true(found.body.every((r: { metric_name: string; uuid: string; type: string }) => r.metric_name.startsWith('http_requests_total|ST[') && r.uuid === UUID && r.type === 'numeric'));
  // 'last value': latest=2, then result.latest.numeric's last [t, v] is read.
  const latest = await get(`/find/${ACCOUNT}/tags?query=and(__name:temperature)&latest=2`, irondbHeaders);
  t.is(latest.status, 200);
  t.is(latest.body.length, 1);
  // 'tag values' and 'tag categories'.
  t.deepEqual((await get(`/find/${ACCOUNT}/tag_vals?category=job&query=and(__name:http_requests_total)`, irondbHeaders)).body, ['api', 'web']);
  t.deepEqual((await get(`/find/${ACCOUNT}/tag_cats?query=and(__name:http_requests_total)`, irondbHeaders)).body.sort(), ['instance', 'job']);
  // metricGraphiteQuery(): /graphite/<account>/<queryPrefix>/metrics/find; an empty prefix leaves `//`.
  const graphite = await get(`/graphite/${ACCOUNT}//metrics/find?query=*&activity=0&include_type=1`, irondbHeaders);
  t.is(graphite.status, 200);
  t.true(Array.isArray(graphite.body));
});

test('IRONdb data source: a /fetch of a metric and a CAQL query as dataRequest sends them', async (t) => {
  const rows = (await get(`/find/${ACCOUNT}/tags?query=and(__name:http_requests_total,job:api)`, irondbHeaders)).body as { metric_name: string; uuid: string }[];
  const start = Math.floor(t0 / 60_000) * 60;
  // dataRequest(): POST /fetch {streams: [{transform, name, uuid, kind}], period, start, count, reduce: [{label: '', method: 'pass'}]}.
  const fetchBody = { streams: [{ transform: 'average', name: rows[0]!.metric_name, uuid: rows[0]!.uuid, kind: 'numeric' }], period: 60, start, count: 4, reduce: [{ label: '', method: 'pass' }] };
  const res = await fetch(`${node.url}/fetch`, { method: 'POST', headers: { ...irondbHeaders, Accept: 'application/json' }, body: JSON.stringify(fetchBody) });
  t.is(res.status, 200);
  const df4 = (await res.json()) as { version: string; head: { count: number; start: number; period: number }; data: (number | null)[][]; meta: unknown[] };
  t.is(df4.version, 'DF4');
  t.deepEqual(df4.head, { count: 4, start, period: 60 });
  t.is(df4.data.length, 1);
  t.is(df4.meta.length, 1);
  // The CAQL path: POST /extension/lua/caql_v1 {start, end (toFixed(3) strings), period, format: 'DF4', q}.
  const caql = await fetch(`${node.url}/extension/lua/caql_v1`, {
    method: 'POST',
    headers: irondbHeaders,
    body: JSON.stringify({ start: start.toFixed(3), end: (start + 240).toFixed(3), period: 60, format: 'DF4', q: 'find("http_requests_total", "and(job:api)")' }),
  });
  t.is(caql.status, 200);
  const answer = (await caql.json()) as { version: string; data: unknown[] };
  t.is(answer.version, 'DF4');
  t.is(answer.data.length, 1);
});
