// A raw window sealed into again after a restart is merged into one block at a later checkpoint
// (actors/shard/block-merges.ts): /state counts the merge, reads answer the same before and after,
// and the shard store then holds one block for the window.
import test from 'ava';
import path from 'node:path';
import { CF } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import { getJson, mLine, put, startNode, tempDir, UUID } from './helpers/node.js';

const HOUR = 3600;
const config = { sealQuietMs: 0, checkpointIntervalMs: 50, shards: 1, partitions: 4 };

test('a window sealed into again is merged into one block, and reads the same', async (t) => {
  const dir = tempDir('ferrite-merge-');
  const start = (Math.floor(Date.now() / 1000 / HOUR) - 5) * HOUR; // an hour long ended
  const lines = (from: number) => Array.from({ length: 50 }, (_, i) => mLine(`${start + from + i * 20}.000`, 'merge.me', 'n', String(from + i * 0.25))).join('\n');
  const read = async (url: string) => (await getJson(`${url}/raw/${UUID}/merge.me?start_ts=${start}&end_ts=${start + HOUR}`)).json as [number, number][];
  let n = await startNode(config, dir);
  try {
    t.is((await put(n.url, lines(0))).status, 200);
  } finally {
    await n.stop(false); // seals the window: its first block
  }
  n = await startNode(config, dir);
  try {
    t.is((await put(n.url, lines(10))).status, 200);
    const before = await read(n.url);
    t.is(before.length, 100);
    let merged = 0;
    for (let i = 0; i < 600 && merged === 0; i++) {
      const state = await getJson(`${n.url}/state`);
      merged = (state.json.shards as { blocks_merged: number }[]).reduce((sum, s) => sum + s.blocks_merged, 0);
      if (merged === 0) await new Promise((r) => setTimeout(r, 100));
    }
    t.is(merged, 1, '/state counts the merged window');
    t.deepEqual(await read(n.url), before);
  } finally {
    await n.stop(false);
  }
  const store = await Store.open(path.join(dir, 'shards', '0'));
  try {
    let blocks = 0;
    for await (const _ of store.scan(CF.numeric, {})) blocks++;
    t.is(blocks, 1, 'one block left for the window');
  } finally {
    await store.close();
  }
  n = await startNode(config, dir);
  try {
    t.is((await read(n.url)).length, 100, 'and it reads back after a restart');
  } finally {
    await n.stop();
  }
});
