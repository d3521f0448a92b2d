// A checkpoint that keeps failing (here: a sealed block corrupted on disk, which the rollup of a
// data dir from before ageing must read) is reported once in the log and in /state, and the node refuses writes with
// 503 until a checkpoint succeeds again; removing the bad data lets it recover.
import test from 'ava';
import { CF, rollupAgeingKey, rollupDirtyKey } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import { getJson, killSpawnedNodes, mLine, onlyShardDir, put, spawnNode, startNode, tempDir, UUID } from './helpers/node.js';

test.after.always(killSpawnedNodes);

const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

test('a failing checkpoint is logged once, shown in /state, refuses writes, and recovers', async (t) => {
  const dir = tempDir();
  // No checkpoint runs in the first life: the sealed window is still waiting for its rollup.
  const first = await startNode({ checkpointIntervalMs: 3_600_000, shards: 1 }, dir);
  const lines = Array.from({ length: 20 }, (_, i) => mLine(`${1000 + i}.000`, 'poisoned', 'n', String(i)));
  t.is((await put(first.url, lines.join('\n'))).status, 200);
  await first.node.flush();
  await first.stop(false);

  const store = await Store.open(onlyShardDir(dir));
  let corrupted = 0;
  for await (const { key } of store.scan(CF.numeric, {})) {
    await store.batch().put(CF.numeric, key, Buffer.from([0x02, 0xff, 0xff, 0xff])).write();
    // As in a data dir from before ageing: the window waits for a checkpoint to roll it up.
    const legacy = store.batch().put(CF.state, rollupDirtyKey(0, key.toString('hex', 0, 16), 0), Buffer.alloc(0));
    for (let p = 0; p < 4; p++) legacy.put(CF.state, rollupAgeingKey(p), Buffer.from(JSON.stringify({ legacyCut: 2 ** 50 })));
    await legacy.write();
    corrupted++;
  }
  await store.close();
  t.is(corrupted, 1);

  process.env.FERRITE_CHECKPOINT_INTERVAL_MS = '50';
  process.env.FERRITE_ROLLUP_QUIET_MS = '0';
  let node;
  try {
    node = await spawnNode(dir, ['--shards', '1', '--partitions', '4']);
  } finally {
    delete process.env.FERRITE_CHECKPOINT_INTERVAL_MS;
    delete process.env.FERRITE_ROLLUP_QUIET_MS;
  }
  const log = node.log;

  const state = async () => (await getJson(`${node.url}/state`)).json.checkpoint;
  await until('checkpoints to fail repeatedly', async () => (await state()).failures >= 5);
  const failing = await state();
  t.true(failing.failing);
  t.regex(failing.last_error, /partition \d+: rolling up metric [0-9a-f]+ window 1970-01-01T00:00:00.000Z/);

  const refused = await put(node.url, mLine('2000.000', 'other', 'n', '1'));
  t.is(refused.status, 503);
  t.is(refused.json.code, 'FER_ERR_CHECKPOINT_FAILING');
  t.regex(refused.json.error, /checkpoints are failing/);

  const errors = log.filter((l) => l.includes('checkpoint failed'));
  t.is(errors.length, 1, 'logged once, not once per checkpoint');
  t.regex(errors[0]!, /"journalCut"/);

  // The operator removes the unreadable data; the next checkpoint succeeds.
  const del = await fetch(`${node.url}/raw/${UUID}/poisoned`, { method: 'DELETE', headers: { 'x-svc-delete-time': '999999' } });
  t.is(del.status, 200);
  await until('a checkpoint to succeed', async () => !(await state()).failing);
  t.true(log.some((l) => l.includes('checkpoint recovered')));
  t.is((await put(node.url, mLine('2000.000', 'other', 'n', '1'))).status, 200);
  node.child.kill('SIGKILL');
  await node.exited;
});
