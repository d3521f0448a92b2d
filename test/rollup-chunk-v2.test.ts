// Rollup chunks of format v2 (written by the release before format v3: test/fixtures/pre-ageing,
// whose rollups are all v2 chunks) read back with today's code exactly as that release answers
// (test/fixtures/rollup-v2/answers.json), and chunks rewritten by a later write become v3 and
// still answer the same.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CF } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import * as D from './fixtures/pre-ageing/data.js';
import { onlyShardDir, startNode, tempDir, type TestNode } from './helpers/node.js';

const FIXTURE = path.resolve('test/fixtures/pre-ageing/pre-ageing.tar.gz');
/**
 * What the release that wrote the fixture (33c9fb5, rollup format v2) answers when it opens the
 * fixture: recorded by running this test's compiled file in a build of that commit with
 * RECORD_V2_ANSWERS=<file>. (Not pre-ageing/expected.json: at open that release rolls up the
 * fixture's pending windows, so some 300 s periods come out summed in another order.)
 */
const EXPECTED = JSON.parse(readFileSync(path.resolve('test/fixtures/rollup-v2/answers.json'), 'utf8')) as Record<string, unknown[]>;
const headers = { 'x-svc-account-id': String(D.ACCOUNT) };

async function chunkVersions(dataDir: string): Promise<Map<number, number>> {
  const store = await Store.open(onlyShardDir(dataDir));
  const out = new Map<number, number>();
  try {
    for await (const { value } of store.scan(CF.rollup, {})) out.set(value[0]!, (out.get(value[0]!) ?? 0) + 1);
  } finally {
    await store.close();
  }
  return out;
}

/**
 * Waits until the node rolled up the fixture's pending legacy windows (a late sample, the windows
 * sealed at the graceful stop): they roll up at checkpoints after open, and the release that
 * recorded the answers had rolled them up before it answered, so `nnt` reads match it only then.
 */
async function rolledUp(n: TestNode): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${n.url}/console/api/overview`);
    const backlog = ((await res.json()) as { rollup_backlog: { numeric_windows: number } }).rollup_backlog;
    if (backlog.numeric_windows === 0) return;
    if (Date.now() > deadline) throw new Error(`legacy windows still pending after 60 s: ${JSON.stringify(backlog)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function answers(n: TestNode, metric: string): Promise<unknown[]> {
  return Promise.all(
    D.QUERIES.map(async (q) => {
      const res = await fetch(`${n.url}/rollup/${D.UUID}/${metric}?${q}`, { headers });
      return { status: res.status, body: await res.json() };
    }),
  );
}

test('v2 rollup chunks read back as the release that wrote them answered, and are rewritten as v3 when next written', async (t) => {
  const dir = tempDir('ferrite-rollup-v2-');
  execFileSync('tar', ['xzf', FIXTURE, '-C', dir]);
  const before = await chunkVersions(dir);
  t.deepEqual([...before.keys()], [2], 'the fixture holds v2 chunks only');

  const recorded: Record<string, unknown[]> = {};
  let n = await startNode({ shards: 1 }, dir);
  try {
    await rolledUp(n);
    for (const metric of [...D.METRICS, D.NNT.metric]) {
      const got = await answers(n, metric);
      recorded[metric] = got;
      if (process.env.RECORD_V2_ANSWERS === undefined) t.deepEqual(got, EXPECTED[metric], metric);
    }
    if (process.env.RECORD_V2_ANSWERS !== undefined) writeFileSync(process.env.RECORD_V2_ANSWERS, JSON.stringify(recorded));
    // A /write/nnt record past the queried range, in the same chunks of every level as the old record.
    const later = { ...D.NNT, offset: D.START_S + 5 * 3600, id: D.UUID };
    const res = await fetch(`${n.url}/write/nnt`, { method: 'POST', body: JSON.stringify([later]), headers });
    t.is(res.status, 200, await res.text());
  } finally {
    await n.stop(false);
  }
  const after = await chunkVersions(dir);
  t.true((after.get(3) ?? 0) >= 15, `chunks rewritten as v3: ${JSON.stringify([...after])}`);
  n = await startNode({ shards: 1 }, dir);
  try {
    t.deepEqual(await answers(n, D.NNT.metric), EXPECTED[D.NNT.metric], 'the rewritten chunks answer the same');
  } finally {
    await n.stop();
  }
});
