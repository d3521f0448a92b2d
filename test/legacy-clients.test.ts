// Reads and writes exactly as IRONdb's existing clients send them (gosnowth, the Prometheus
// adapter): integer-second start_ts/end_ts, /write/nnt and /write/numeric with gosnowth's
// `parts: [0, null]`, the deprecated numeric /read, and /surrogate/activity_rebuild.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startNode({ blockSpanMs: 3_600_000 });
  // 10 s apart in [0, 600 s): 0..59
  await put(n.url, Array.from({ length: 60 }, (_, i) => mLine(`${i * 10}.000`, 'c.num', 'n', String(i))).join('\n'));
});
test.after.always(async () => {
  await n?.stop();
});

const post = (path: string, body: unknown, method = 'POST') =>
  fetch(`${n.url}${path}`, { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));

test('rollup reads with integer seconds, as gosnowth and the Prometheus adapter send them', async (t) => {
  // gosnowth: path.Join("/rollup", uuid, url.QueryEscape(metric)) + "?start_ts=%d&end_ts=%d&rollup_span=%ds&type=%s"
  const r = await getJson(`${n.url}/rollup/${UUID}/${encodeURIComponent('c.num')}?start_ts=0&end_ts=120&rollup_span=60s&type=average`);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.json, [[0, 2.5], [60, 8.5]]);
  const all = await getJson(`${n.url}/rollup/${UUID}/c.num?start_ts=60&end_ts=120&rollup_span=60s&type=all`);
  t.is(all.json[0][1].count, 6);
  // the 3-digit rule still holds when a fraction is given
  t.deepEqual((await getJson(`${n.url}/rollup/${UUID}/c.num?start_ts=0.000&end_ts=120.000&rollup_span=60s`)).json, r.json);
  for (const bad of ['0.1', '0.10', '0.1000', '-1', '1e3', '']) {
    const b = await getJson(`${n.url}/rollup/${UUID}/c.num?start_ts=${bad}&end_ts=120&rollup_span=60s`);
    t.is(b.status, 400, bad);
    t.is(b.json.code, bad === '' ? 'FER_ERR_MISSING_PARAM' : 'FER_ERR_BAD_TIMESTAMP', bad);
  }
});

test('raw reads take integer seconds too', async (t) => {
  const r = await getJson(`${n.url}/raw/${UUID}/c.num?start_ts=10&end_ts=30`);
  t.deepEqual(r.json, [[10000, 1], [20000, 2]]);
  t.deepEqual((await getJson(`${n.url}/raw/${UUID}/c.num?start_ts=10.000&end_ts=30`)).json, r.json);
  t.is((await getJson(`${n.url}/raw/${UUID}/c.num?start_ts=10.5&end_ts=30`)).json.code, 'FER_ERR_BAD_TIMESTAMP');
});

/** One item as gosnowth's NNTData / NumericWrite marshal it: every field, `parts` [0, null]. */
const goItem = (metric: string, offset: number, value: number) => ({
  count: 2, value, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0,
  metric, id: UUID, offset, parts: [0, null],
});

test('/write/nnt accepts parts [0, null] and null; /write/numeric takes the same body', async (t) => {
  const nnt = await post('/write/nnt', [goItem('w.nnt', 600, 7), { ...goItem('w.nnt', 660, 9), parts: null }]);
  t.deepEqual(nnt, { status: 200, json: { records: 2, updated: 2, misdirected: 0, discarded: 0, errors: 0 } });
  const numeric = await post('/write/numeric', [goItem('w.numeric', 600, 4)]);
  t.deepEqual(numeric, { status: 200, json: { records: 1, updated: 1, misdirected: 0, discarded: 0, errors: 0 } });
  t.deepEqual((await getJson(`${n.url}/rollup/${UUID}/w.nnt?start_ts=600&end_ts=720&rollup_span=60s&get_engine=nnt`)).json, [[600, 7], [660, 9]]);
  t.deepEqual((await getJson(`${n.url}/rollup/${UUID}/w.numeric?start_ts=600&end_ts=660&rollup_span=60s&type=count`)).json, [[600, 2]]);
  // real parts are stored (one record per sub-interval); parts with data but no period are errors
  const parts = await post('/write/numeric', [{ ...goItem('w.parts', 600, 0), parts: [60, [{ count: 1, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 }]] }]);
  t.is(parts.json.updated, 1);
  const bad = await post('/write/numeric', [{ ...goItem('w.bad', 600, 0), parts: [0, [{}]] }]);
  t.is(bad.status, 400);
  t.regex(bad.json.error, /parts/);
  t.is((await post('/write/numeric', { not: 'an array' })).json.code, 'FER_ERR_BAD_BODY');
});

test('deprecated numeric read /read/<start>/<end>/<period>/<uuid>/<type>/<metric>', async (t) => {
  // gosnowth: path.Join("/read", start, end, period, id, type, metric) — the name is not escaped
  const avg = await getJson(`${n.url}/read/0/600/300/${UUID}/average/c.num`);
  t.is(avg.status, 200, avg.text);
  t.deepEqual(avg.json, [[0, 14.5], [300, 44.5]]);
  t.deepEqual((await getJson(`${n.url}/read/0/120/60/${UUID}/count/c.num`)).json, [[0, 6], [60, 6]]);
  const all = await getJson(`${n.url}/read/0/300/300/${UUID}/all/c.num`);
  t.deepEqual(Object.keys(all.json[0][1]).sort(), ['count', 'counter', 'counter2', 'counter2_stddev', 'counter_stddev', 'derivative', 'derivative2', 'derivative2_stddev', 'derivative_stddev', 'stddev', 'value']);
  t.deepEqual((await getJson(`${n.url}/read/600/700/60/${UUID}/average/c.num`)).json, [[600, null], [660, null]], 'no data: null tuples');
  const badType = await getJson(`${n.url}/read/0/600/300/${UUID}/median/c.num`);
  t.is(badType.status, 400);
  t.is(badType.json.code, 'FER_ERR_BAD_PARAM');
  t.is((await getJson(`${n.url}/read/0/600/0/${UUID}/average/c.num`)).status, 400, 'period 0');
  t.is((await getJson(`${n.url}/read/600/0/60/${UUID}/average/c.num`)).status, 400, 'end before start');
  t.is((await getJson(`${n.url}/read/0/600/300/${UUID}/average`)).status, 400, 'no metric segment');
  t.is((await getJson(`${n.url}/read/0/600/300/${UUID}/average/nope`)).status, 404);
});

test('the text read keeps its route: a uuid third segment, metric names with slashes', async (t) => {
  await put(n.url, [mLine('100.000', 'a/b', 's', 'x'), mLine('100.000', '300', 's', 'y')].join('\n'));
  t.deepEqual((await getJson(`${n.url}/read/0/1000/${UUID}/a/b`)).json, [[100000, 'x']]);
  t.deepEqual((await getJson(`${n.url}/read/0/1000/${UUID}/300`)).json, [[100000, 'y']], 'a metric named like a period');
});

test('POST /surrogate/activity_rebuild rebuilds windows from stored data', async (t) => {
  const day = 86_400;
  await put(n.url, [mLine(`${day}.000`, 'act.t', 's', 'old'), mLine(`${3 * day}.000`, 'act.t', 's', 'new')].join('\n'));
  // mLine's check is account 123
  const find = async () => (await getJson(`${n.url}/find/123/tags?query=and(__name:act.t)&activity=1`)).json[0].activity;
  t.deepEqual(await find(), [[day, day + 300], [3 * day, 3 * day + 300]]);
  const del = await fetch(`${n.url}/text/${UUID}/act.t`, { method: 'DELETE', headers: { 'x-svc-delete-time': String(2 * day) } });
  t.is(del.status, 200);
  t.deepEqual(await find(), [[day, day + 300], [3 * day, 3 * day + 300]], 'activity tracking only grows');
  // gosnowth RebuildActivity: POST body [{"check_uuid","metric_name"}]
  const r = await post('/surrogate/activity_rebuild', [
    { check_uuid: UUID, metric_name: 'act.t' },
    { check_uuid: UUID, metric_name: 'c.num' },
    { check_uuid: UUID, metric_name: 'never.written' },
    { check_uuid: 'nope', metric_name: 'x' },
  ]);
  t.is(r.status, 200);
  t.like(r.json, { records: 4, updated: 2, misdirected: 0, errors: 2 });
  t.deepEqual(r.json.error_details.map((e: { item: number }) => e.item), [2, 3]);
  t.deepEqual(r.json.rebuilt[0], { check_uuid: UUID, metric_name: 'act.t', activity: [[3 * day, 3 * day + 300]] });
  t.deepEqual(r.json.rebuilt[1].activity, [[0, 600]], 'raw samples every 10 s in [0, 600)');
  t.deepEqual(await find(), [[3 * day, 3 * day + 300]]);
  for (const body of ['[', '{}', '[1]']) {
    const b = await fetch(`${n.url}/surrogate/activity_rebuild`, { method: 'POST', body });
    t.is(b.status, 400, body);
    t.truthy(((await b.json()) as { code: string }).code);
  }
});
