// The index snapshot against real nodes: a clean stop writes it, the next start reads it
// instead of rebuilding the index, and searches and reads answer as before; a start after a
// crash rebuilds from the name records (the snapshot of an earlier clean stop is not reused).
import test from 'ava';
import { getJson, killSpawnedNodes, mLine, put, spawnNode, tempDir, UUID } from './helpers/node.js';

test.after.always(killSpawnedNodes);

const FLAGS = ['--shards', '2', '--partitions', '4'];
const names = Array.from({ length: 40 }, (_, i) => `snap.m${i}|ST[host:h${i % 4},role:b"Zm9vIGJhcg=="]`);

async function figures(url: string): Promise<{ metrics: number; fromSnapshot: number; found: string[]; raw: unknown }> {
  const state = (await getJson(`${url}/state`)).json;
  const found = ((await getJson(`${url}/find/123/tags?query=${encodeURIComponent('and(host:h1,role:foo bar)')}`)).json as { metric_name: string }[]).map((r) => r.metric_name).sort();
  const raw = (await getJson(`${url}/raw/${UUID}/${encodeURIComponent(names[5]!)}?start_ts=0.000&end_ts=9999999999.000`)).json;
  return { metrics: state.index.metrics, fromSnapshot: state.index.loaded_from_snapshot, found, raw };
}

test.serial('a clean stop leaves a snapshot the next start reads; a crash start rebuilds', async (t) => {
  const dir = tempDir();
  const first = await spawnNode(dir, FLAGS);
  t.is((await put(first.url, names.map((n, i) => mLine(`${1000 + i}.000`, n, 'n', String(i))).join('\n'))).status, 200);
  const before = await figures(first.url);
  t.is(before.metrics, 40);
  t.is(before.found.length, 10);
  first.child.kill('SIGTERM');
  await first.exited;

  const second = await spawnNode(dir, FLAGS);
  const fromSnapshot = await figures(second.url);
  t.is(fromSnapshot.fromSnapshot, 2, 'both shards read their snapshot');
  t.deepEqual({ ...fromSnapshot, fromSnapshot: 0 }, { ...before, fromSnapshot: 0 });
  // New metrics after a snapshot start are indexed as usual, then the node crashes.
  t.is((await put(second.url, mLine('2000.000', 'snap.late|ST[host:h1,role:b"Zm9vIGJhcg=="]', 'n', '1'))).status, 200);
  second.child.kill('SIGKILL');
  await second.exited;

  const third = await spawnNode(dir, FLAGS);
  const rebuilt = await figures(third.url);
  t.is(rebuilt.fromSnapshot, 0, 'no snapshot after a crash');
  t.is(rebuilt.metrics, 41);
  t.deepEqual(rebuilt.found, [...before.found, 'snap.late|ST[host:h1,role:b"Zm9vIGJhcg=="]'].sort());
  t.deepEqual(rebuilt.raw, before.raw);
  third.child.kill('SIGTERM');
  await third.exited;
});
