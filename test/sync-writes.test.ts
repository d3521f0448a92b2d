// syncWrites on a real node: every acknowledged write went through an fsync of the WAL, counted
// in /state; what was acknowledged reads back after a restart.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID } from './helpers/node.js';

test('with syncWrites every acknowledged write was fsynced; concurrent writes share fsyncs', async (t) => {
  let n = await startNode({ syncWrites: true });
  try {
    const now = Math.floor(Date.now() / 1000) - 60;
    const bodies = Array.from({ length: 12 }, (_, i) => mLine(`${now}.000`, `sync.m${i}`, 'n', String(i)));
    const replies = await Promise.all(bodies.map((b) => put(n.url, b)));
    t.true(replies.every((r) => r.status === 200));
    const figures = (await getJson(`${n.url}/state`)).json.sync_writes as { fsyncs: number; batches: number };
    t.true(figures.batches >= 12, `${figures.batches} batches synced`);
    t.true(figures.fsyncs >= 1 && figures.fsyncs <= figures.batches, `${figures.fsyncs} fsyncs`);
    await n.stop(false);
    n = await startNode({ syncWrites: true }, n.dataDir);
    const rows = await getJson(`${n.url}/raw/${UUID}/sync.m11?start_ts=${now}&end_ts=${now + 1}`);
    t.deepEqual(rows.json, [[now * 1000, 11]], 'acknowledged, read back after a restart');
  } finally {
    await n.stop();
  }
});

test('without syncWrites /state has no sync figures', async (t) => {
  const n = await startNode();
  try {
    t.is((await getJson(`${n.url}/state`)).json.sync_writes, undefined);
  } finally {
    await n.stop();
  }
});
