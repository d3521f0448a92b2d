// Packed name records (storage/metric-index/name-blocks.ts) against real nodes: a node's
// checkpoints pack whole ranges of names; a start after a clean stop (index snapshot) and one
// after a crash (index rebuilt from the store) know every metric; a full delete of a packed
// metric is gone for good either way. Activity windows (packed per range too) come back either way.
import test from 'ava';
import { getJson, killSpawnedNodes, mLine, put, spawnNode, tempDir, UUID } from './helpers/node.js';
import { NAME_BLOCK_IDS } from '../storage/metric-index/name-blocks.js';

test.after.always(killSpawnedNodes);

const FLAGS = ['--shards', '1', '--partitions', '2'];
const SERIES = NAME_BLOCK_IDS + 60;
const names = Array.from({ length: SERIES }, (_, i) => `packed.m${i}|ST[host:h${i % 7}]`);

async function state(url: string): Promise<{ metrics: number; nameBlocks: number; fromSnapshot: number }> {
  const s = (await getJson(`${url}/state`)).json;
  return { metrics: s.index.metrics, nameBlocks: s.index.name_blocks, fromSnapshot: s.index.loaded_from_snapshot };
}

const found = async (url: string, query: string): Promise<string[]> => ((await getJson(`${url}/find/123/tags?query=${encodeURIComponent(query)}`)).json as { metric_name: string }[]).map((r) => r.metric_name).sort();

/** The activity windows find reports for `name`. */
const activity = async (url: string, name: string): Promise<unknown> => ((await getJson(`${url}/find/123/tags?query=${encodeURIComponent(`and(__name:${name.split('|')[0]})`)}&activity=1`)).json as { activity: unknown }[])[0]?.activity;
const slice = (s: number) => s - (s % 300);
const LATER_S = 200_000;

async function fullDelete(url: string, name: string): Promise<number> {
  return (await fetch(`${url}/full/canonical/${UUID}/${encodeURIComponent(name)}`, { method: 'DELETE', headers: { 'x-svc-account-id': '123' } })).status;
}

test.serial('names packed at checkpoints are found after a clean stop and after a crash; a packed metric deleted stays deleted', async (t) => {
  const dir = tempDir();
  const first = await spawnNode(dir, FLAGS);
  t.is((await put(first.url, names.map((n, i) => mLine(`${1000 + i}.000`, n, 'n', String(i))).join('\n'))).status, 200);
  const deadline = Date.now() + 30_000;
  while ((await state(first.url)).nameBlocks < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.is((await state(first.url)).nameBlocks, 1, 'the whole range is packed by a checkpoint');
  const h3 = await found(first.url, 'and(host:h3)');
  t.is(h3.length, Math.ceil((SERIES - 3) / 7));
  t.is(await fullDelete(first.url, names[3]!), 200);
  first.child.kill('SIGKILL');
  await first.exited;

  const second = await spawnNode(dir, FLAGS);
  t.deepEqual(await state(second.url), { metrics: SERIES - 1, nameBlocks: 1, fromSnapshot: 0 }, 'rebuilt from the store');
  t.deepEqual(await found(second.url, 'and(host:h3)'), h3.filter((n) => n !== names[3]));
  t.deepEqual(await activity(second.url, names[24]!), [[slice(1024), slice(1024) + 300]], 'activity after a crash');
  // A second window, far from the first: written in its block at the clean stop.
  t.is((await put(second.url, mLine(`${LATER_S}.000`, names[24]!, 'n', '1'))).status, 200);
  t.is(await fullDelete(second.url, names[10]!), 200);
  second.child.kill('SIGTERM');
  await second.exited;

  const third = await spawnNode(dir, FLAGS);
  t.deepEqual(await state(third.url), { metrics: SERIES - 2, nameBlocks: 1, fromSnapshot: 1 }, 'read from the snapshot');
  t.deepEqual(await found(third.url, 'and(host:h3)'), h3.filter((n) => n !== names[3] && n !== names[10]));
  const twoWindows = [
    [slice(1024), slice(1024) + 300],
    [slice(LATER_S), slice(LATER_S) + 300],
  ];
  t.deepEqual(await activity(third.url, names[24]!), twoWindows, 'activity from the snapshot');
  // Deleted after a snapshot start: the block is written again without it.
  t.is(await fullDelete(third.url, names[17]!), 200);
  third.child.kill('SIGKILL');
  await third.exited;

  const fourth = await spawnNode(dir, FLAGS);
  t.deepEqual(await state(fourth.url), { metrics: SERIES - 3, nameBlocks: 1, fromSnapshot: 0 });
  t.deepEqual(await found(fourth.url, 'and(host:h3)'), h3.filter((n) => ![names[3], names[10], names[17]].includes(n)));
  t.deepEqual((await getJson(`${fourth.url}/raw/${UUID}/${encodeURIComponent(names[24]!)}?start_ts=0.000&end_ts=9999.000`)).json, [[1024_000, 24]]);
  t.deepEqual(await activity(fourth.url, names[24]!), twoWindows, 'activity from its block after a crash');
  t.deepEqual(await activity(fourth.url, names[SERIES - 1]!), [[slice(1000 + SERIES - 1), slice(1000 + SERIES - 1) + 300]], 'of the second range too');
  fourth.child.kill('SIGTERM');
  await fourth.exited;
});
