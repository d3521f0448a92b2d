// Raw blocks written before numeric block format 5 (test/fixtures/pre-ageing: a data directory
// written by commit 968ee6f, whose blocks are formats 1 and 2) read back sample for sample through
// /raw with today's code; new samples then sealed into the same windows (format 5) read back beside
// them, the old and the new blocks of a window merged. Raw retention is off: the fixture is older.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import * as D from './fixtures/pre-ageing/data.js';
import { startNode, tempDir } from './helpers/node.js';

const FIXTURE = path.resolve('test/fixtures/pre-ageing/pre-ageing.tar.gz');
const from = D.START_S;
const to = D.START_S + D.POINTS * D.STEP_S;

function unpack(): string {
  const dir = tempDir('ferrite-pre-ageing-raw-');
  execFileSync('tar', ['xzf', FIXTURE, '-C', dir]);
  return dir;
}

/** What the fixture's release was sent for `metric`, as /raw answers it: [ms, value], in time order. */
function written(metric: (typeof D.METRICS)[number]): [number, number][] {
  const rows: [number, number][] = [];
  for (let j = 0; j < D.POINTS; j++) {
    const v = D.value(metric, j);
    if (v !== null) rows.push([D.ts(j), v]);
  }
  if (metric === D.LATE.metric) rows.push([D.ts(D.LATE.j), D.LATE.value]);
  return rows.sort((a, b) => a[0] - b[0]);
}

test('raw blocks of the release before format 5 read back sample for sample, and beside new blocks in the same windows', async (t) => {
  const dataDir = unpack();
  const headers = { 'x-svc-account-id': String(D.ACCOUNT) };
  const raw = async (metric: string) => (await (await fetch(`${dataDirNode.url}/raw/${D.UUID}/${metric}?start_ts=${from}&end_ts=${to}`, { headers })).json()) as [number, number][];
  let dataDirNode = await startNode({ sealQuietMs: 0, rawRetention: 0 }, dataDir);
  try {
    for (const m of D.METRICS) t.deepEqual(await raw(m), written(m), m);
    // Half-step samples between the old ones: sealed as format-5 blocks into the old windows.
    const extra = Array.from({ length: 40 }, (_, k) => D.tsv('age.counter', k * 27 + 0.5, 1_000_000 + k));
    const res = await fetch(`${dataDirNode.url}/raw`, { method: 'PUT', body: extra.join('\n'), headers });
    t.true(res.ok, await res.text());
    await dataDirNode.stop(false);
    dataDirNode = await startNode({ sealQuietMs: 0, rawRetention: 0 }, dataDir);
    const want = [...written('age.counter'), ...Array.from({ length: 40 }, (_, k): [number, number] => [D.ts(k * 27 + 0.5), 1_000_000 + k])].sort((a, b) => a[0] - b[0]);
    t.deepEqual(await raw('age.counter'), want, 'old and new blocks of the same windows together');
    t.deepEqual(await raw('age.gauge'), written('age.gauge'), 'untouched metrics unchanged');
  } finally {
    await dataDirNode.stop();
  }
});
