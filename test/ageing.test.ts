// Raw data aged into rollups on a real node (storage/rollups.ts): a data directory written by
// the release before ageing (test/fixtures/pre-ageing) reads back as that release answered,
// before and after its raw data is aged; and a node killed (SIGKILL) again and again while it
// ages loses and double-counts nothing.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import * as D from './fixtures/pre-ageing/data.js';
import { getJson, killSpawnedNodes, mLine, put, spawnNode, startNode, tempDir, UUID } from './helpers/node.js';

test.after.always(killSpawnedNodes);

const FIXTURE = path.resolve('test/fixtures/pre-ageing');
/** The fixture's rollups are older than the default levels' retention: keep every level forever. */
const FOREVER = [60, 300, 1800, 10800, 86400].map((period) => ({ period, retention: 0 }));

/** Sums over a slot computed in one pass and as a sum of finer periods differ in the last bits. */
const rounded = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a data directory from before ageing reads back as that release answered, before and after its raw data is aged', async (t) => {
  const dir = tempDir();
  execFileSync('tar', ['xzf', path.join(FIXTURE, 'pre-ageing.tar.gz'), '-C', dir]);
  const expected = (await import(path.join(FIXTURE, 'expected.json'), { with: { type: 'json' } })).default as Record<string, unknown[]>;
  const headers = { 'x-svc-account-id': String(D.ACCOUNT) };
  // Query 3 reads stored rollups only (nnt): it changes as the old release's pending windows roll up.
  const NNT = D.QUERIES.findIndex((q) => q.includes('get_engine=nnt'));
  const answers = async (url: string) => {
    const out: Record<string, unknown[]> = {};
    for (const m of Object.keys(expected)) {
      out[m] = await Promise.all(
        D.QUERIES.map(async (q) => {
          const res = await fetch(`${url}/rollup/${D.UUID}/${m}?${q}`, { headers });
          return { status: res.status, body: await res.json() };
        }),
      );
    }
    return rounded(out) as Record<string, unknown[]>;
  };
  const withoutNnt = (a: Record<string, unknown[]>) => Object.fromEntries(Object.entries(a).map(([m, qs]) => [m, qs.filter((_, i) => i !== NNT)]));
  const config = { shards: 1, partitions: 4, rollups: FOREVER };
  let n = await startNode({ ...config, retentionSweepIntervalMs: 3_600_000 }, dir);
  try {
    t.deepEqual(withoutNnt(await answers(n.url)), withoutNnt(rounded(expected) as Record<string, unknown[]>), 'as the old release answered, raw kept');
    const rawOf = async (metric: string) => (await getJson(`${n.url}/raw/${D.UUID}/${metric}?start_ts=${D.START_S}.000&end_ts=${D.START_S + 4 * 3600}.000`)).json as unknown[];
    t.true((await rawOf('age.gauge')).length > 1000);
    await n.stop(false);
    n = await startNode({ ...config, retentionSweepIntervalMs: 50 }, dir);
    await until('the raw data is aged', async () => (await Promise.all(D.METRICS.map(rawOf))).every((rows) => rows.length === 0));
    const aged = await answers(n.url);
    t.deepEqual(withoutNnt(aged), withoutNnt(rounded(expected) as Record<string, unknown[]>), 'the same once aged');
    for (const m of Object.keys(aged)) t.deepEqual(aged[m]![NNT], aged[m]![0], `${m}: everything is stored once aged (nnt reads what dispatch reads)`);
  } finally {
    await n.stop();
  }
});

test('a node killed again and again while it ages loses and double-counts nothing', async (t) => {
  const dir = tempDir();
  const METRICS = 1200;
  const HOURS = 2;
  const start = Math.floor(Date.now() / 86_400_000) * 86_400 - 60 * 86_400; // 60 days ago: past the raw retention
  const configFile = path.join(dir, 'config.json');
  const writeConfig = (c: object) => writeFileSync(configFile, JSON.stringify({ shards: 1, partitions: 4, ingestWorkers: 0, writeLatencyBudgetMs: 0, ...c }));
  // First the data, raw kept (no ageing), and what rollup reads answer computed from it.
  writeConfig({ rawRetention: 0 });
  let node = await spawnNode(path.join(dir, 'data'), ['--config', configFile]);
  const names = Array.from({ length: METRICS }, (_, i) => `kill.age.${i}`);
  for (let h = 0; h < HOURS; h++) {
    const lines: string[] = [];
    for (const [i, name] of names.entries()) for (let s = 0; s < 3600; s += 30) lines.push(mLine(`${start + h * 3600 + s}.000`, name, 'n', String(((i * 7 + h * 3600 + s) % 1000) / 4)));
    t.is((await put(node.url, lines.join('\n'))).status, 200);
  }
  const query = `start_ts=${start}.000&end_ts=${start + HOURS * 3600}.000&rollup_span=300s&type=all`;
  const checked = names.filter((_, i) => i % 12 === 0);
  const answers = async (url: string) => rounded(await Promise.all(checked.map(async (name) => (await getJson(`${url}/rollup/${UUID}/${name}?${query}`)).json)));
  const want = await answers(node.url);
  t.is((want as [number, { count: number }][][]).flat().reduce((n, [, row]) => n + (row?.count ?? 0), 0), checked.length * HOURS * 120, 'every sample counted before ageing');
  node.child.kill('SIGTERM');
  await node.exited;
  // Then age, killing the node while raw data is left.
  writeConfig({ retentionSweepIntervalMs: 10 });
  const rawLeft = async (url: string) => {
    let left = 0;
    for (const name of [names[0]!, names[METRICS >> 1]!, names[METRICS - 1]!]) left += ((await getJson(`${url}/raw/${UUID}/${name}?start_ts=${start}.000&end_ts=${start + HOURS * 3600}.000`)).json as unknown[]).length;
    return left;
  };
  // Each round kills the node as soon as it has aged some but not all (metrics age in index order:
  // the first sampled metric goes first, the last one last).
  const full = 3 * HOURS * 120;
  let kills = 0;
  let running = false;
  for (let round = 0; round < 5 && !running; round++) {
    node = await spawnNode(path.join(dir, 'data'), ['--config', configFile]);
    let left = full;
    await until('ageing starts', async () => (left = await rawLeft(node.url)) < full);
    running = left === 0; // this round finished before it could be killed: it serves the checks
    if (running) break;
    node.child.kill('SIGKILL');
    await node.exited;
    kills++;
  }
  t.true(kills > 0, 'the node was killed at least once while ageing');
  t.log(`killed ${kills} times while ageing`);
  if (!running) node = await spawnNode(path.join(dir, 'data'), ['--config', configFile]);
  await until('every raw sample is aged', async () => (await rawLeft(node.url)) === 0, 120_000);
  t.deepEqual(await answers(node.url), want, `after ${kills} kills while ageing`);
  node.child.kill('SIGTERM');
  await node.exited;
});
