// Series limits (maxSeriesPerAccount, maxSeriesPerCheck) over real HTTP: a sample that
// would create a series past a limit is rejected per line naming the limit, samples of
// existing series keep flowing, in every ingest format; /state shows the counts.
import test from 'ava';
import { encodeWriteRequest } from '../model/prometheus/remote-codec.js';
import { decodeResponse } from '../model/otlp/codec.js';
import { buildV1 } from './helpers/metric-list.js';
import { getJson, killSpawnedNodes, put, spawnNode, startNode, tempDir, type TestNode } from './helpers/node.js';

test.after.always(killSpawnedNodes);

const UUID_A = '0a000000-0000-4000-8000-00000000000a';
const UUID_B = '0b000000-0000-4000-8000-00000000000b';
const UUID_C = '0c000000-0000-4000-8000-00000000000c';
const check = (account: number, uuid: string) => `host\`mod\`c_${account}_1::mod\`${uuid}`;
const line = (account: number, uuid: string, name: string, sec: number, value = 1) => ['M', `${sec}.000`, check(account, uuid), name, 'n', String(value)].join('\t');
const lines = (account: number, uuid: string, names: string[], sec: number) => names.map((name) => line(account, uuid, name, sec)).join('\n');
const series = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}.${i}`);

const rawOf = async (url: string, uuid: string, name: string) => (await getJson(`${url}/raw/${uuid}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=9999999999.999`)).json;
const cardinality = async (url: string) => (await getJson(`${url}/state`)).json.cardinality;
const accountSeries = async (url: string, account: number) => ((await cardinality(url)).by_account as { account: number; series: number }[]).find((a) => a.account === account)?.series ?? 0;

async function withNode(t: { teardown(f: () => Promise<void>): void }, overrides: Parameters<typeof startNode>[0]): Promise<TestNode> {
  const n = await startNode({ shards: 2, ...overrides });
  t.teardown(() => n.stop());
  return n;
}

for (const ingestWorkers of [1, 0]) {
  const where = ingestWorkers === 0 ? 'parsed on the main thread' : 'parsed on a lane';
  test(`TSV (${where}): new series past maxSeriesPerAccount are rejected per line; existing ones keep flowing`, async (t) => {
    const n = await withNode(t, { maxSeriesPerAccount: 5, ingestWorkers });
    const names = series('acct', 8);
    const first = await put(n.url, lines(1, UUID_A, names, 1000));
    t.is(first.status, 200);
    t.is(first.json.records, 8);
    t.is(first.json.updated, 5);
    t.is(first.json.errors, 3);
    // The body's order decides which series get in: the first five.
    t.deepEqual(first.json.error_details.map((e: { line: number }) => e.line), [6, 7, 8]);
    t.regex(first.json.error_details[0].reason, /series limit: account 1 has 5 series \(maxSeriesPerAccount 5\)/);

    // Known series keep flowing; the refused ones stay refused; another account is not limited by account 1.
    const second = await put(n.url, [lines(1, UUID_A, names, 1001), lines(2, UUID_B, series('other', 3), 1001)].join('\n'));
    t.is(second.status, 200);
    t.is(second.json.updated, 8);
    t.deepEqual(second.json.error_details.map((e: { line: number }) => e.line), [6, 7, 8]);
    t.deepEqual(await rawOf(n.url, UUID_A, 'acct.0'), [[1_000_000, 1], [1_001_000, 1]]);
    t.is((await getJson(`${n.url}/raw/${UUID_A}/acct.7?start_ts=0.000&end_ts=9999999999.999`)).status, 404);
    t.is(await accountSeries(n.url, 1), 5);
    t.is(await accountSeries(n.url, 2), 3);

    // A body of refused series only is a 400 naming the limit.
    const refused = await put(n.url, line(1, UUID_A, 'acct.6', 1002));
    t.is(refused.status, 400);
    t.regex(refused.json.error, /line 1: series limit: account 1 .*maxSeriesPerAccount 5/);
  });
}

test('maxSeriesPerCheck limits each check uuid; the account limit still holds over both', async (t) => {
  const n = await withNode(t, { maxSeriesPerCheck: 3, maxSeriesPerAccount: 5 });
  const r = await put(n.url, [lines(1, UUID_A, series('a', 4), 1000), lines(1, UUID_B, series('b', 4), 1000)].join('\n'));
  t.is(r.json.updated, 5);
  t.deepEqual(
    r.json.error_details.map((e: { line: number; reason: string }) => [e.line, /maxSeriesPer(\w+)/.exec(e.reason)![1]]),
    [
      [4, 'Check'],
      [7, 'Account'],
      [8, 'Account'],
    ],
  );
  t.regex(r.json.error_details[0].reason, new RegExp(`check ${UUID_A} has 3 series`));
  const state = await cardinality(n.url);
  t.deepEqual(state.limits, { max_series_per_account: 5, max_series_per_check: 3 });
  t.deepEqual(
    state.top_checks.map((c: { uuid: string; series: number; account: number }) => [c.uuid, c.series, c.account]),
    [
      [UUID_A, 3, 1],
      [UUID_B, 2, 1],
    ],
  );
});

test('concurrent writes naming the same new series admit exactly the limit', async (t) => {
  const n = await withNode(t, { maxSeriesPerAccount: 25, ingestWorkers: 2, shards: 2 });
  // Ten bodies, each 10 series of which 5 are shared with the next body: 55 distinct series.
  const bodies = Array.from({ length: 10 }, (_, b) => lines(3, UUID_C, series('race', 55).slice(b * 5, b * 5 + 10), 1000 + b));
  const replies = await Promise.all(bodies.map((body) => put(n.url, body)));
  t.true(replies.every((r) => r.status === 200 || r.status === 400));
  t.is(await accountSeries(n.url, 3), 25);
  // Exactly 25 series were written, each readable; the others were never stored.
  let stored = 0;
  for (const name of series('race', 55)) if ((await getJson(`${n.url}/raw/${UUID_C}/${name}?start_ts=0.000&end_ts=9999999999.999`)).status === 200) stored++;
  t.is(stored, 25);
});

test('a full delete makes room: a refused series is admitted afterwards', async (t) => {
  const n = await withNode(t, { maxSeriesPerAccount: 2 });
  t.is((await put(n.url, lines(1, UUID_A, ['d.0', 'd.1', 'd.2'], 1000))).json.updated, 2);
  // Deleting data leaves the series; deleting the metric entirely frees its place.
  await fetch(`${n.url}/raw/${UUID_A}/d.0`, { method: 'DELETE', headers: { 'x-svc-delete-time': '2000' } });
  t.is((await put(n.url, lines(1, UUID_A, ['d.2'], 1001))).status, 400);
  const del = await fetch(`${n.url}/full/canonical/${UUID_A}/d.0`, { method: 'DELETE', headers: { 'x-svc-account-id': '1' } });
  t.is(del.status, 200, await del.text());
  const again = await put(n.url, lines(1, UUID_A, ['d.1', 'd.2'], 1001));
  t.is(again.json.updated, 2);
  t.is(again.json.errors, 0);
  t.is(await accountSeries(n.url, 1), 2);
});

test('FlatBuffer MetricList: items of refused series are rejected, by index', async (t) => {
  const n = await withNode(t, { maxSeriesPerCheck: 2 });
  const body = buildV1(['f.0', 'f.1', 'f.2', 'f.0'].map((name, i) => ({ name, ts: 3_000_000 + i, value: { t: 'double', v: i } })));
  const res = await fetch(`${n.url}/raw`, { method: 'PUT', body, headers: { 'content-type': 'application/x-svc-metric-list-flatbuffer', 'x-svc-datapoints': '4' } });
  const json = (await res.json()) as any;
  t.is(res.status, 200);
  t.is(json.updated, 3);
  t.deepEqual(json.error_details.map((e: { item: number }) => e.item), [2]);
  t.regex(json.error_details[0].reason, /maxSeriesPerCheck 2/);
});

test('Prometheus remote write: refused series are left out (204, logged), existing ones stored', async (t) => {
  const n = await withNode(t, { maxSeriesPerAccount: 2 });
  const write = (names: string[], ts: number) =>
    fetch(`${n.url}/module/prometheus/write/4/${UUID_A}`, {
      method: 'POST',
      body: encodeWriteRequest(names.map((name) => ({ labels: { __name__: name }, samples: [{ value: 1, timestamp: ts }] }))),
      headers: { 'content-encoding': 'snappy', 'content-type': 'application/x-protobuf' },
    });
  t.is((await write(['p_a', 'p_b', 'p_c'], 1_700_000_000_000)).status, 204);
  t.is((await write(['p_a', 'p_b', 'p_c'], 1_700_000_015_000)).status, 204);
  t.deepEqual(await rawOf(n.url, UUID_A, 'p_b'), [[1_700_000_000_000, 1], [1_700_000_015_000, 1]]);
  t.is(await accountSeries(n.url, 4), 2);
  // Nothing but refused series: 400 naming the limit (Prometheus does not retry a 4xx).
  const only = await write(['p_c'], 1_700_000_030_000);
  t.is(only.status, 400);
  t.regex(((await only.json()) as { error: string }).error, /maxSeriesPerAccount 2/);
});

test('OTLP: refused series are counted in partial_success with the limit named', async (t) => {
  const n = await withNode(t, { maxSeriesPerAccount: 1 });
  const now = Date.now() - 60_000;
  const gauge = (name: string) => ({ name, gauge: { dataPoints: [{ timeUnixNano: String(BigInt(now) * 1_000_000n), asDouble: 1 }] } });
  const body = { resourceMetrics: [{ resource: { attributes: [] }, scopeMetrics: [{ scope: { name: 'x' }, metrics: [gauge('o_a'), gauge('o_b')] }] }] };
  const res = await fetch(`${n.url}/v1/metrics`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-svc-account-id': '6', 'x-svc-check-uuid': UUID_B } });
  t.is(res.status, 200);
  const partial = decodeResponse(new Uint8Array(await res.arrayBuffer()), 'json');
  t.is(partial?.rejectedDataPoints, 1);
  t.regex(partial!.errorMessage, /series limit: account 6 has 1 series \(maxSeriesPerAccount 1\)/);
});

test('JSON writers (/write/text) reject items of refused series', async (t) => {
  const n = await withNode(t, { maxSeriesPerCheck: 1 });
  const items = ['t.a', 't.b'].map((metric) => ({ metric, id: UUID_C, offset: '1000', value: 'x', account_id: 8 }));
  const res = await fetch(`${n.url}/write/text`, { method: 'PUT', body: JSON.stringify(items) });
  const json = (await res.json()) as any;
  t.is(json.updated, 1);
  t.deepEqual(json.error_details.map((e: { item: number }) => e.item), [1]);
  t.regex(json.error_details[0].reason, /maxSeriesPerCheck 1/);
});

test.serial('a crash and restart: replay stores exactly what was acknowledged, and the counts still hold', async (t) => {
  const dir = tempDir();
  const flags = ['--max-series-per-account', '4', '--shards', '2', '--partitions', '4'];
  const first = await spawnNode(dir, flags);
  const r = await put(first.url, lines(9, UUID_A, series('crash', 6), 1000));
  t.is(r.json.updated, 4);
  first.child.kill('SIGKILL');
  await first.exited;
  // Replayed from the journal: the refused series are refused again, whatever the limit is now.
  const second = await spawnNode(dir, ['--shards', '2', '--partitions', '4']);
  t.is(await accountSeries(second.url, 9), 4);
  t.is((await getJson(`${second.url}/raw/${UUID_A}/crash.5?start_ts=0.000&end_ts=9999999999.999`)).status, 404);
  t.deepEqual(await rawOf(second.url, UUID_A, 'crash.3'), [[1_000_000, 1]]);
  second.child.kill('SIGKILL');
  await second.exited;
  // With the limit again, counted from what the shards hold.
  const third = await spawnNode(dir, flags);
  const more = await put(third.url, lines(9, UUID_A, ['crash.0', 'crash.5'], 1001));
  t.is(more.json.updated, 1);
  t.regex(more.json.error_details[0].reason, /account 9 has 4 series/);
  third.child.kill('SIGTERM');
  await third.exited;
});

test.serial('a body naming 50k new series is limited, not fatal; the node answers afterwards', async (t) => {
  const n = await withNode(t, { maxSeriesPerAccount: 20_000 });
  const names = series('big', 50_000);
  const r = await put(n.url, lines(11, UUID_B, names, 1000));
  t.is(r.status, 200);
  t.is(r.json.updated, 20_000);
  t.is(r.json.errors, 30_000);
  t.is(await accountSeries(n.url, 11), 20_000);
  // Again: known series flow, refused ones are refused without asking the shards again.
  const again = await put(n.url, lines(11, UUID_B, names, 1001));
  t.is(again.json.updated, 20_000);
  t.deepEqual(await rawOf(n.url, UUID_B, 'big.19999'), [[1_000_000, 1], [1_001_000, 1]]);
});

test.serial('without limits, a body naming 50k new series is accepted whole', async (t) => {
  const n = await withNode(t, {});
  const r = await put(n.url, lines(12, UUID_C, series('wide', 50_000), 1000));
  t.is(r.status, 200);
  t.is(r.json.updated, 50_000);
  const state = await cardinality(n.url);
  t.is(state.total, 50_000);
  t.deepEqual(state.top_checks[0], { uuid: UUID_C, account: 12, check_name: 'c_12_1::mod', series: 50_000 });
  t.deepEqual(state.limits, { max_series_per_account: 0, max_series_per_check: 0 });
});
