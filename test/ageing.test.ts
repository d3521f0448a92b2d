// Raw data aged into rollups on a real node (storage/rollups.ts): a data directory written by
// the release before ageing (test/fixtures/pre-ageing) reads back as that release answered,
// before and after its raw data is aged; a node killed (SIGKILL) again and again while it
// ages loses and double-counts nothing; and coarse histogram levels are written only when
// they age (storage/histograms.ts), answering the same before and after.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as D from './fixtures/pre-ageing/data.js';
import { Histogram, histogramToBase64 } from '../model/histogram/index.js';
import { CF, histogramKeyParts } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import { CHECK, getJson, killSpawnedNodes, mLine, onlyShardDir, put, spawnNode, startNode, tempDir, UUID } from './helpers/node.js';

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

/** Histogram levels of the data dir's only shard that hold records: level period → records. */
async function histogramLevels(dataDir: string): Promise<Map<number, number>> {
  const store = await Store.open(onlyShardDir(dataDir));
  const out = new Map<number, number>();
  try {
    for await (const { key } of store.scan(CF.histogram, {})) {
      const { period } = histogramKeyParts(key);
      out.set(period, (out.get(period) ?? 0) + 1);
    }
  } finally {
    await store.close();
  }
  return out;
}

test('coarse histogram levels are merged from the base level until they age, then written by the sweep, answering the same', async (t) => {
  const dir = tempDir();
  const start = Math.floor(Date.now() / 86_400_000) * 86_400 - 3 * 86_400; // past a one-day raw retention
  const recent = Math.floor(Date.now() / 1000 / 3600) * 3600 - 3600; // within it
  const config = { shards: 1, partitions: 4, rawRetention: 86_400, histogramRollupQuietMs: 0, checkpointIntervalMs: 20 };
  const b64 = (...values: number[]) => {
    const h = Histogram.empty();
    for (const v of values) h.insert(v);
    return histogramToBase64(h);
  };
  const names = ['age.lat.a', 'age.lat.b'];
  const lines: string[] = [];
  for (const [i, name] of names.entries()) {
    for (let m = 0; m < 180; m++) lines.push(['H1', `${start + m * 60 + 7}.000`, CHECK, name, b64(m % 7, i + 1, (m * 13) % 50)].join('\t'));
    lines.push(['H1', `${recent + 125}.000`, CHECK, name, b64(42, i)].join('\t'));
  }
  const read = async (url: string) =>
    Promise.all(
      names.flatMap((name) =>
        [60, 300, 1800, 3600, 86_400].flatMap((period) =>
          [
            [start - 86_400, start + 4 * 3600],
            [recent, recent + 3600],
          ].map(async ([a, b]) => ({ name, period, a, body: (await getJson(`${url}/histogram/${a}/${b}/${period}/${UUID}/${name}`)).json })),
        ),
      ),
    );
  let n = await startNode({ ...config, retentionSweepIntervalMs: 3_600_000 }, dir);
  let want;
  try {
    t.is((await put(n.url, lines.join('\n'))).status, 200);
    want = await read(n.url);
    const five = want.find((w) => w.name === names[0] && w.period === 300 && w.a === start - 86_400)!.body as unknown[];
    t.is(five.length, 36, 'three hours of 300 s periods');
  } finally {
    await n.stop(false);
  }
  t.deepEqual([...(await histogramLevels(dir)).keys()], [60], 'before ageing only the base level is stored');
  n = await startNode({ ...config, retentionSweepIntervalMs: 50 }, dir);
  try {
    await until('the histogram levels are aged', async () => ((await getJson(`${n.url}/state`)).json.shards[0].histograms_aged_to ?? 0) >= start + 3 * 3600);
    t.deepEqual(await read(n.url), want, 'the same answers once aged');
  } finally {
    await n.stop(false);
  }
  const levels = await histogramLevels(dir);
  t.deepEqual([...levels.keys()].sort((a, b) => a - b), [60, 300, 1800, 10_800, 86_400], 'aged: every level stored');
  // Per metric: 3 h of 300 s, 1800 s and 10800 s periods and one day; the recent hour's periods are not stored.
  t.is(levels.get(300), names.length * 36);
  t.is(levels.get(1800), names.length * 6);
  t.is(levels.get(10_800), names.length * 1);
  t.is(levels.get(86_400), names.length * 1);
  rmSync(dir, { recursive: true, force: true });
});
