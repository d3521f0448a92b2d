// The DELETE endpoints against a real node: dry runs, confirmed deletes that touch exactly
// what they report, header validation, full deletes that stay deleted across restarts.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

const OTHER = '0a2a3f6c-0000-4000-8000-000000000002';
/** A check of another account (a check uuid belongs to one account). */
const THIRD = '0a2a3f6c-0000-4000-8000-00000000000b';
const check = (uuid: string, account = 3) => `host.example\`http\`c_${account}_1::http\`${uuid}`;

async function node(): Promise<TestNode> {
  return startNode({ histogramRollupQuietMs: 0, checkpointIntervalMs: 20 });
}

async function seed(n: TestNode): Promise<void> {
  const lines: string[] = [];
  for (const name of ['d.cpu|ST[env:prod]', 'd.cpu|ST[env:dev]', 'd.mem|ST[env:prod]']) {
    for (let s = 1000; s < 1010; s++) lines.push(mLine(`${s}.000`, name, 'n', String(s), check(UUID)));
  }
  for (let s = 1000; s < 1010; s++) lines.push(mLine(`${s}.000`, 'd.cpu|ST[env:prod]', 'n', '1', check(THIRD, 4))); // other account
  for (let s = 1000; s < 1010; s++) lines.push(mLine(`${s}.000`, 'd.cpu|ST[env:prod]', 'n', '1', check(OTHER))); // other check
  lines.push(mLine('1000.000', 'd.state', 's', 'up', check(UUID)), mLine('1005.000', 'd.state', 's', 'down', check(UUID)));
  lines.push(['H1', '1000.000', check(UUID), 'd.lat', 'AAEKAAAB'].join('\t'), ['H1', '1200.000', check(UUID), 'd.lat', 'AAEKAAAB'].join('\t'));
  const r = await put(n.url, lines.join('\n'));
  if (r.status !== 200 || r.json.errors !== 0) throw new Error(`seed failed: ${JSON.stringify(r.json)}`);
}

const del = (n: TestNode, path: string, headers: Record<string, string>) =>
  fetch(`${n.url}${path}`, { method: 'DELETE', headers }).then(async (r) => ({ status: r.status, json: (await r.json()) as any, headers: r.headers }));
const raw = async (n: TestNode, name: string, uuid = UUID) =>
  ((await getJson(`${n.url}/raw/${uuid}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=99999.000`)).json as [number, number][]).map(([ts]) => ts / 1000);
const find = async (n: TestNode, q: string, account = 3) =>
  ((await getJson(`${n.url}/find/${account}/tags?query=${encodeURIComponent(q)}`)).json as { metric_name: string }[]).map((r) => r.metric_name).sort();

test('single-metric raw delete removes data before the delete time only', async (t) => {
  const n = await node();
  try {
    await seed(n);
    const r = await del(n, `/raw/${UUID}/${encodeURIComponent('d.cpu|ST[env:prod]')}`, { 'x-svc-delete-time': '1005' });
    t.is(r.status, 200);
    t.deepEqual(r.json, []);
    t.deepEqual(await raw(n, 'd.cpu|ST[env:prod]'), [1005, 1006, 1007, 1008, 1009]);
    t.is((await raw(n, 'd.cpu|ST[env:dev]')).length, 10, 'neighbours intact');
    t.is((await raw(n, 'd.cpu|ST[env:prod]', OTHER)).length, 10, 'other checks intact');
    // after sealing and a restart the delete holds
    const dir = n.dataDir;
    await n.stop(false);
    const again = await startNode({}, dir);
    t.deepEqual(await raw(again, 'd.cpu|ST[env:prod]'), [1005, 1006, 1007, 1008, 1009]);
    await again.stop();
  } catch (e) {
    await n.stop();
    throw e;
  }
});

test('pattern and tag-query deletes report first, then delete exactly that', async (t) => {
  const n = await node();
  try {
    await seed(n);
    const headers = { 'x-svc-delete-time': '1003', 'x-svc-account-id': '3' };
    const dry = await del(n, `/raw/${UUID}/d.cpu*`, headers);
    t.is(dry.status, 200);
    t.deepEqual(dry.json, [
      { metric_name: 'd.cpu|ST[env:dev]', delete_result: 'found', payload: '' },
      { metric_name: 'd.cpu|ST[env:prod]', delete_result: 'found', payload: '' },
    ]);
    t.is((await raw(n, 'd.cpu|ST[env:dev]')).length, 10, 'a dry run deletes nothing');
    const done = await del(n, `/raw/${UUID}/d.cpu*`, { ...headers, 'x-svc-confirm-delete': '1' });
    t.deepEqual(done.json.map((r: any) => r.delete_result), ['deleted', 'deleted']);
    t.is(done.headers.get('x-svc-incomplete-results'), 'false');
    t.deepEqual(await raw(n, 'd.cpu|ST[env:dev]'), [1003, 1004, 1005, 1006, 1007, 1008, 1009]);
    t.is((await raw(n, 'd.mem|ST[env:prod]')).length, 10);
    const again = await del(n, `/raw/${UUID}/d.cpu*`, { ...headers, 'x-svc-confirm-delete': '1' });
    t.deepEqual(again.json.map((r: any) => r.delete_result), ['no content', 'no content']);
    const tags = await del(n, `/raw/tags?query=${encodeURIComponent('and(env:prod)')}`, { ...headers, 'x-svc-delete-time': '1008', 'x-svc-confirm-delete': '1', 'x-svc-advisory-limit': '1' });
    t.deepEqual(tags.json, [{ metric_name: 'd.cpu|ST[env:prod]', delete_result: 'deleted', payload: '' }]);
    t.is(tags.headers.get('x-svc-incomplete-results'), 'true');
    t.deepEqual(await raw(n, 'd.cpu|ST[env:prod]'), [1008, 1009]);
    t.is((await raw(n, 'd.mem|ST[env:prod]')).length, 10, 'beyond the advisory limit: untouched');
  } finally {
    await n.stop();
  }
});

test('text and histogram deletes, by metric and by check', async (t) => {
  const n = await node();
  try {
    await seed(n);
    const text = await del(n, `/text/${UUID}`, { 'x-svc-delete-time': '1003', 'x-svc-account-id': '3', 'x-svc-confirm-delete': '1' });
    t.deepEqual(text.json, [{ metric_name: 'd.state', delete_result: 'deleted', payload: '' }]);
    t.deepEqual((await getJson(`${n.url}/read/0/99999/${UUID}/d.state?get_specific_range=true`)).json, [[1005000, 'down']]);
    const hist = await del(n, `/histogram/${UUID}/d.lat`, { 'x-svc-delete-time': '1100', 'x-svc-full-delete': '1' });
    t.deepEqual(hist.json, []);
    t.deepEqual((await getJson(`${n.url}/histogram/0/99999/60/${UUID}/d.lat`)).json, [[1200, 60, { '+10e-001': 1 }]]);
    const rollups = await del(n, `/histogram/${UUID}/d.lat`, { 'x-svc-delete-time': '99999', 'x-svc-delete-rollups': '60,300' });
    t.is(rollups.status, 200);
    t.deepEqual((await getJson(`${n.url}/histogram/0/99999/60/${UUID}/d.lat`)).json, []);
    const badRollup = await del(n, `/histogram/${UUID}/d.lat`, { 'x-svc-delete-time': '1', 'x-svc-delete-rollups': '61' });
    t.is(badRollup.status, 400);
  } finally {
    await n.stop();
  }
});

test('missing or malformed headers are 400; unknown metrics 404', async (t) => {
  const n = await node();
  try {
    await seed(n);
    const name = encodeURIComponent('d.cpu|ST[env:prod]');
    t.is((await del(n, `/raw/${UUID}/${name}`, {})).status, 400);
    t.regex((await del(n, `/raw/${UUID}/${name}`, {})).json.error, /x-svc-delete-time/);
    t.is((await del(n, `/raw/${UUID}/${name}`, { 'x-svc-delete-time': 'soon' })).status, 400);
    t.is((await del(n, `/raw/${UUID}/d.*`, { 'x-svc-delete-time': '5' })).status, 400, 'pattern needs an account');
    t.is((await del(n, `/raw/tags?query=and(env:prod`, { 'x-svc-delete-time': '5', 'x-svc-account-id': '3' })).status, 400);
    t.is((await del(n, `/raw/tags?query=and(env:prod)`, { 'x-svc-delete-time': '5', 'x-svc-account-id': '3', 'x-svc-advisory-limit': 'x' })).status, 400);
    t.is((await del(n, `/text/${UUID}/d.state`, { 'x-svc-delete-time': '5', 'x-svc-full-delete': '2' })).status, 400);
    t.is((await del(n, `/raw/${UUID}/never.seen`, { 'x-svc-delete-time': '5' })).status, 404);
    t.is((await del(n, `/raw/not-a-uuid/x`, { 'x-svc-delete-time': '5' })).status, 400);
    t.is((await raw(n, 'd.cpu|ST[env:prod]')).length, 10, 'failed deletes delete nothing');
  } finally {
    await n.stop();
  }
});

test('full deletes remove data and metadata for good; new data starts fresh', async (t) => {
  const n = await node();
  let dir = n.dataDir;
  try {
    await seed(n);
    const headers = { 'x-svc-account-id': '3' };
    const query = encodeURIComponent(`and(env:prod,__check_uuid:${UUID})`);
    const dry = await del(n, `/full/tags?query=${query}`, headers);
    t.deepEqual(dry.json.map((r: any) => r.delete_result), ['found', 'found']);
    const done = await del(n, `/full/tags?query=${query}`, { ...headers, 'x-svc-confirm-delete': '1' });
    t.deepEqual(done.json.map((r: any) => [r.metric_name, r.delete_result]), [['d.cpu|ST[env:prod]', 'deleted'], ['d.mem|ST[env:prod]', 'deleted']]);
    t.deepEqual(await find(n, 'and(env:*)'), ['d.cpu|ST[env:dev]', 'd.cpu|ST[env:prod]'], 'the other check keeps its metric');
    t.is((await getJson(`${n.url}/raw/${UUID}/d.mem${encodeURIComponent('|ST[env:prod]')}?start_ts=0.000&end_ts=99999.000`)).status, 404);
    t.is((await raw(n, 'd.cpu|ST[env:prod]', OTHER)).length, 10, 'same name in another check intact');
    t.deepEqual(await find(n, 'and(env:prod)', 4), ['d.cpu|ST[env:prod]'], 'same name in another account intact');
    const single = await del(n, `/full/canonical/${UUID}/d.state`, headers);
    t.deepEqual(single.json, { status: 'succeeded' });
    t.is((await del(n, `/full/canonical/${UUID}/d.state`, headers)).status, 404);
    // restart: nothing comes back from the journal
    await n.stop(false);
    const again = await startNode({}, dir);
    dir = again.dataDir;
    t.deepEqual(await find(again, `and(env:*,__check_uuid:${UUID})`), ['d.cpu|ST[env:dev]']);
    t.deepEqual(await find(again, 'and(__name:d.state)'), []);
    // new data makes a fresh metric with only the new samples
    await put(again.url, mLine('2000.000', 'd.mem|ST[env:prod]', 'n', '7', check(UUID)));
    t.deepEqual(await raw(again, 'd.mem|ST[env:prod]'), [2000]);
    t.deepEqual(await find(again, `and(env:prod,__check_uuid:${UUID})`), ['d.mem|ST[env:prod]']);
    await again.stop();
  } catch (e) {
    await n.stop().catch(() => undefined);
    throw e;
  }
});

test('writes to other metrics during a delete lose nothing', async (t) => {
  const n = await node();
  try {
    await seed(n);
    const writes = Array.from({ length: 20 }, (_, i) =>
      put(n.url, Array.from({ length: 50 }, (_, j) => mLine(`${3000 + i * 50 + j}.000`, 'd.busy', 'n', '1', check(UUID))).join('\n')),
    );
    const deletes = del(n, `/raw/tags?query=${encodeURIComponent('and(env:*)')}`, { 'x-svc-delete-time': '99999', 'x-svc-account-id': '3', 'x-svc-confirm-delete': '1' });
    const results = await Promise.all([...writes, deletes]);
    t.true(results.every((r) => r.status === 200));
    t.is((await raw(n, 'd.busy')).length, 1000);
    t.is((await raw(n, 'd.cpu|ST[env:dev]')).length, 0);
  } finally {
    await n.stop();
  }
});

test('a full delete survives a crash: the journal replayed at the next start does not name the metric again', async (t) => {
  const { spawnNode, tempDir, killSpawnedNodes } = await import('./helpers/node.js');
  t.teardown(killSpawnedNodes);
  const dir = tempDir();
  const flags = ['--shards', '1', '--partitions', '2'];
  const first = await spawnNode(dir, flags);
  const names = ['gone.a|ST[env:x]', 'kept.b|ST[env:x]', 'kept.c|ST[env:x]'];
  // Open buffers only: the journal still holds the write that named the metrics when the node dies.
  t.is((await put(first.url, names.map((n, i) => mLine(`${1000 + i}.000`, n, 'n', String(i), check(UUID))).join('\n'))).status, 200);
  const deleted = await fetch(`${first.url}/full/canonical/${UUID}/${encodeURIComponent(names[0]!)}`, { method: 'DELETE', headers: { 'x-svc-account-id': '3' } });
  t.is(deleted.status, 200);
  first.child.kill('SIGKILL');
  await first.exited;
  const second = await spawnNode(dir, flags);
  const found = ((await getJson(`${second.url}/find/3/tags?query=${encodeURIComponent('and(env:x)')}`)).json as { metric_name: string }[]).map((r) => r.metric_name).sort();
  t.deepEqual(found, names.slice(1));
  t.is((await getJson(`${second.url}/raw/${UUID}/${encodeURIComponent(names[1]!)}?start_ts=0.000&end_ts=99999.000`)).json.length, 1, 'the other metrics\' samples are replayed');
  second.child.kill('SIGTERM');
  await second.exited;
});
