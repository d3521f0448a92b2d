// Numeric rollup deletes (`/nnt`, IRONdb's data-deletion API) and the per-metric records of
// multi-metric deletes whose arguments make them impossible: against a real node.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

const ACCOUNT = { 'x-svc-account-id': '3' };
/** The check of UUID in account 3. */
const CHECK3 = `example.com\`http\`c_3_1::http\`${UUID}`;

const del = (n: TestNode, path: string, headers: Record<string, string>) =>
  fetch(`${n.url}${path}`, { method: 'DELETE', headers }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));

/** One /write/nnt item: count 1, value `value`, for the 60 s period at `offset` s. */
const item = (metric: string, offset: number, value: number) => ({
  metric, id: UUID, offset, count: 1, value, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0,
});

async function seed(n: TestNode): Promise<void> {
  const items = ['n.a', 'n.b'].flatMap((m) => [600, 660, 720, 780].map((s, i) => item(m, s, i + 1)));
  const r = await fetch(`${n.url}/write/nnt`, { method: 'POST', headers: ACCOUNT, body: JSON.stringify(items) });
  if (r.status !== 200) throw new Error(`seed failed: ${await r.text()}`);
  const raw = await put(n.url, mLine('5000.000', 'n.raw', 'n', '1', CHECK3));
  if (raw.status !== 200) throw new Error('raw seed failed');
}

/** The stored periods of a level (nnt engine: no recomputation from raw). */
async function periods(n: TestNode, metric: string, span: number): Promise<number[]> {
  const r = await getJson(`${n.url}/rollup/${UUID}/${metric}?start_ts=0&end_ts=1200&rollup_span=${span}s&get_engine=nnt&type=count`);
  return (r.json as [number, number | null][]).filter(([, v]) => v !== null).map(([ts]) => ts);
}

test('a single-metric /nnt delete removes the periods before the delete time, of every level or those named', async (t) => {
  const n = await startNode();
  let dir = n.dataDir;
  try {
    await seed(n);
    t.deepEqual(await periods(n, 'n.a', 60), [600, 660, 720, 780]);
    t.deepEqual(await periods(n, 'n.a', 300), [600, 900].filter((s) => s < 780));

    const coarse = await del(n, `/nnt/${UUID}/n.a`, { 'x-svc-delete-time': '720', 'x-svc-delete-rollups': '300' });
    t.deepEqual(coarse, { status: 200, json: [] });
    t.deepEqual(await periods(n, 'n.a', 300), [], 'the 300 s period starting at 600 is gone');
    t.deepEqual(await periods(n, 'n.a', 60), [600, 660, 720, 780], 'the 60 s level is untouched');

    t.deepEqual(await del(n, `/nnt/${UUID}/n.a`, { 'x-svc-delete-time': '720' }), { status: 200, json: [] });
    t.deepEqual(await periods(n, 'n.a', 60), [720, 780]);
    t.deepEqual(await periods(n, 'n.b', 60), [600, 660, 720, 780], 'other metrics are untouched');

    await n.stop(false);
    const again = await startNode({}, dir);
    dir = again.dataDir;
    t.deepEqual(await periods(again, 'n.a', 60), [720, 780], 'the delete holds across a restart');
    await again.stop();
  } catch (e) {
    await n.stop().catch(() => undefined);
    throw e;
  }
});

test('pattern and tag-query /nnt deletes report per metric, dry run first', async (t) => {
  const n = await startNode();
  try {
    await seed(n);
    const headers = { ...ACCOUNT, 'x-svc-delete-time': '700' };
    const dry = await del(n, `/nnt/${UUID}/n.*`, headers);
    t.deepEqual(dry.json, [
      { metric_name: 'n.a', delete_result: 'found', payload: '' },
      { metric_name: 'n.b', delete_result: 'found', payload: '' },
      { metric_name: 'n.raw', delete_result: 'no content', payload: '' },
    ]);
    t.deepEqual(await periods(n, 'n.a', 60), [600, 660, 720, 780], 'a dry run deletes nothing');
    const done = await del(n, `/nnt/tags?query=${encodeURIComponent('and(__name:n.a)')}`, { ...headers, 'x-svc-confirm-delete': '1' });
    t.deepEqual(done.json, [{ metric_name: 'n.a', delete_result: 'deleted', payload: '' }]);
    t.deepEqual(await periods(n, 'n.a', 60), [720, 780]);
    t.deepEqual(await periods(n, 'n.b', 60), [600, 660, 720, 780]);
    const again = await del(n, `/nnt/${UUID}/n.a`.replace('n.a', 'n.a*'), { ...headers, 'x-svc-confirm-delete': '1' });
    t.deepEqual(again.json, [{ metric_name: 'n.a', delete_result: 'no content', payload: '' }]);
  } finally {
    await n.stop();
  }
});

test('impossible arguments: a record per metric in multi-metric deletes, an error object for one metric', async (t) => {
  const n = await startNode();
  try {
    await seed(n);
    const confirm = { ...ACCOUNT, 'x-svc-confirm-delete': '1' };
    const status = async (path: string, headers: Record<string, string>) =>
      ((await del(n, path, { ...confirm, ...headers })).json as { delete_result: string; payload: string }[]).map((r) => r.delete_result);

    t.deepEqual(await status(`/nnt/${UUID}/n.*`, { 'x-svc-delete-time': '700', 'x-svc-delete-rollups': '61' }), ['invalid range', 'invalid range', 'invalid range']);
    t.deepEqual(await status(`/nnt/${UUID}/n.*`, { 'x-svc-delete-time': '700', 'x-svc-delete-rollups': 'hourly' }), ['bad request', 'bad request', 'bad request']);
    t.deepEqual(await status(`/nnt/${UUID}/n.*`, {}), ['bad request', 'bad request', 'bad request'], 'no delete time');
    t.deepEqual(await status(`/raw/${UUID}/n.*`, { 'x-svc-delete-time': '99999999999999999' }), ['invalid range', 'invalid range', 'invalid range'], 'past the largest time');
    const raw = await del(n, `/raw/${UUID}/n.*`, { ...confirm, 'x-svc-delete-time': '9999', 'x-svc-delete-rollups': '60' });
    t.is(raw.json[0].delete_result, 'not implemented');
    t.regex(raw.json[0].payload, /rollup levels/);
    t.deepEqual(await periods(n, 'n.a', 60), [600, 660, 720, 780], 'nothing was deleted');

    const one = await del(n, `/raw/${UUID}/n.raw`, { 'x-svc-delete-time': '9999', 'x-svc-delete-rollups': '60' });
    t.is(one.status, 400);
    t.is(one.json.code, 'FER_ERR_NOT_IMPLEMENTED');
    const badLevel = await del(n, `/nnt/${UUID}/n.a`, { 'x-svc-delete-time': '700', 'x-svc-delete-rollups': '61' });
    t.is(badLevel.status, 400);
    t.regex(badLevel.json.error, /61 is not a numeric rollup period/);
    t.is((await getJson(`${n.url}/raw/${UUID}/n.raw?start_ts=0&end_ts=9999`)).json.length, 1, 'raw intact');
  } finally {
    await n.stop();
  }
});
