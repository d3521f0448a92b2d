// Crash safety: every sample acknowledged with 200 before a SIGKILL reads back after a
// restart. The node runs as a child process (`ferrite serve`) on a real RocksDB.
import { rmSync } from 'node:fs';
import test from 'ava';
import { getJson, killSpawnedNodes, mLine, spawnNode, tempDir, UUID, type ChildNode } from './helpers/node.js';

const TRIALS = 20;

test.after.always(killSpawnedNodes);
const METRICS = ['crash.a', 'crash.b|ST[k:v]', 'crash.c', 'crash.txt'];

/** (metric → ts ms → value) of every acknowledged sample. */
type Acked = Map<string, Map<number, string>>;

async function writeUntilKilled(node: ChildNode, acked: Acked, nextTs: { v: number }, killAfterMs: number): Promise<void> {
  let alive = true;
  const killer = setTimeout(() => {
    alive = false;
    node.child.kill('SIGKILL');
  }, killAfterMs);
  const writer = async () => {
    while (alive) {
      const batch: [string, number, string][] = [];
      for (let i = 0; i < 50; i++) {
        const ts = nextTs.v++;
        const metric = METRICS[ts % METRICS.length]!;
        batch.push([metric, ts, metric === 'crash.txt' ? `t${ts}` : String(ts)]);
      }
      const body = batch
        .map(([m, ts, v]) => mLine(`${Math.floor(ts / 1000)}.${String(ts % 1000).padStart(3, '0')}`, m, m === 'crash.txt' ? 's' : 'n', v))
        .join('\n');
      try {
        const res = await fetch(`${node.url}/raw`, { method: 'PUT', body });
        if (res.status !== 200) continue;
        await res.arrayBuffer();
        for (const [m, ts, v] of batch) acked.get(m)!.set(ts, v);
      } catch {
        return; // connection refused or reset: the node is gone
      }
    }
  };
  await Promise.all([writer(), writer(), writer()]);
  clearTimeout(killer);
  await node.exited;
}

async function verify(url: string, acked: Acked): Promise<string[]> {
  const missing: string[] = [];
  for (const [metric, samples] of acked) {
    if (samples.size === 0) continue;
    const name = encodeURIComponent(metric);
    const got = new Map<number, string>();
    if (metric === 'crash.txt') {
      const r = await getJson(`${url}/read/0/999999999/${UUID}/${name}?get_specific_range=true`);
      for (const [ts, v] of r.json as [number, string][]) got.set(ts, v);
    } else {
      const r = await getJson(`${url}/raw/${UUID}/${name}?start_ts=0.000&end_ts=999999999.000`);
      for (const [ts, v] of r.json as [number, number][]) got.set(ts, String(v));
    }
    for (const [ts, v] of samples) if (got.get(ts) !== v) missing.push(`${metric}@${ts}=${v} (got ${got.get(ts)})`);
  }
  return missing;
}

test(`acknowledged samples survive SIGKILL (${TRIALS} trials)`, async (t) => {
  t.timeout(600_000);
  const dir = tempDir('ferrite-crash-');
  const acked: Acked = new Map(METRICS.map((m) => [m, new Map()]));
  const nextTs = { v: 1_000_000_000 };
  // Small windows and a short quiet time make sealing and journal truncation happen
  // during the trials, so kills land in every phase of the write path.
  const args = ['--partitions', '4'];
  const env = { FERRITE_SEAL_QUIET_MS: '0', FERRITE_BLOCK_SPAN_MS: '5000', FERRITE_CHECKPOINT_INTERVAL_MS: '20' };
  Object.assign(process.env, env);
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      const node = await spawnNode(dir, args);
      const missing = await verify(node.url, acked);
      t.deepEqual(missing.slice(0, 5), [], `trial ${trial}: acknowledged samples lost after restart`);
      await writeUntilKilled(node, acked, nextTs, 50 + Math.floor(Math.random() * 400));
    }
    const final = await spawnNode(dir, args);
    t.deepEqual((await verify(final.url, acked)).slice(0, 5), []);
    const total = [...acked.values()].reduce((s, m) => s + m.size, 0);
    t.true(total > 1000, `only ${total} samples were acknowledged; the test exercised too little`);
    final.child.kill('SIGKILL');
    await final.exited;
  } finally {
    for (const key of Object.keys(env)) delete process.env[key];
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SIGTERM drains, seals and exits 0; nothing is left to replay', async (t) => {
  const dir = tempDir('ferrite-term-');
  try {
    const first = await spawnNode(dir);
    const body = Array.from({ length: 100 }, (_, i) => mLine(`${1000 + i}.000`, 'term.metric', 'n', String(i))).join('\n');
    t.is((await fetch(`${first.url}/raw`, { method: 'PUT', body })).status, 200);
    first.child.kill('SIGTERM');
    t.is(await first.exited, 0);
    const second = await spawnNode(dir);
    const stats = (await getJson(`${second.url}/stats.json`)).json;
    t.is(stats.ingest.journal_replayed._value, 0, 'a graceful stop seals everything, so the journal is empty');
    const back = (await getJson(`${second.url}/raw/${UUID}/term.metric?start_ts=0.000&end_ts=5000.000`)).json;
    t.is(back.length, 100);
    second.child.kill('SIGTERM');
    t.is(await second.exited, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
