// A data directory written by the release before shards (test/fixtures/pre-shard: numeric,
// 64-bit, text and histogram data, check tags, a delete's tombstone, and samples only in the
// journal because the node was killed) opens split into shard stores and reads back value for
// value; opened again with another shard count, it is split anew and still reads back the same.
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { activitySlice, mergeActivity } from '../model/activity.js';
import { Histogram } from '../model/histogram/index.js';
import { CF, STATE_KEY } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import * as D from './fixtures/pre-shard/data.js';
import { getJson, startNode, tempDir, type TestNode } from './helpers/node.js';

const FIXTURE = path.resolve('test/fixtures/pre-shard/pre-shard.tar.gz');
const from = D.DAY_START;
const to = D.ts(D.POINTS);
const enc = encodeURIComponent;

function unpack(): string {
  const dir = tempDir('ferrite-pre-shard-');
  execFileSync('tar', ['xzf', FIXTURE, '-C', dir]);
  return path.join(dir, 'data');
}

async function readsBack(t: ExecutionContext, n: TestNode): Promise<void> {
  const points = Array.from({ length: D.POINTS }, (_, j) => j);
  for (const [i, name] of D.NUMERIC.entries()) {
    const { json } = await getJson(`${n.url}/raw/${D.UUID}/${enc(name)}?start_ts=${from}&end_ts=${to}`);
    t.deepEqual(json, points.map((j) => [D.ts(j) * 1000, D.numericValue(i, j)]), name);
  }
  const big = await fetch(`${n.url}/raw/${D.UUID}/${D.BIG}?start_ts=${from}&end_ts=${to}`).then((r) => r.text());
  t.is(big, `[${points.map((j) => `[${D.ts(j) * 1000},${D.bigValue(j)}]`).join(',')}]`, '64-bit integers exact');
  for (const [i, name] of D.TEXT.entries()) {
    const { json } = await getJson(`${n.url}/read/${from}/${to}/${D.UUID}/${name}?get_specific_range=true`);
    t.deepEqual(json, points.map((j) => [D.ts(j) * 1000, D.textValue(i, j)]), name);
  }
  for (const [i, name] of D.HISTOGRAM.entries()) {
    const { json } = await getJson(`${n.url}/histogram/${from}/${to}/${D.STEP_S}/${D.UUID}/${name}`);
    const expected = points.map((j) => {
      const h = Histogram.empty();
      for (let k = 0; k <= i; k++) h.insert(10 + j);
      return [D.ts(j), D.STEP_S, h.toLabelCounts()];
    });
    t.deepEqual(json, expected, name);
  }
  const kept = points.filter((j) => D.ts(j) >= D.DELETE_BEFORE);
  t.deepEqual((await getJson(`${n.url}/raw/${D.UUID}/${D.DELETED}?start_ts=${from}&end_ts=${to}`)).json, kept.map((j) => [D.ts(j) * 1000, j]), 'the delete holds');
  t.deepEqual((await getJson(`${n.url}/raw/${D.UUID}/${D.JOURNAL_ONLY}?start_ts=${from}&end_ts=${to}`)).json, points.map((j) => [D.ts(j) * 1000, j * 2]), 'journal replayed');
  // Five 60 s points per 300 s period: the average of i·100 + j/4 over j = 5k … 5k+4 is i·100 + (5k + 2)/4.
  const rollup = await getJson(`${n.url}/rollup/${D.UUID}/${enc(D.NUMERIC[1]!)}?start_ts=${from}&end_ts=${from + 900}&rollup_span=300s`);
  t.deepEqual(rollup.json, [0, 1, 2].map((k) => [from + k * 300, 100 + (5 * k + 2) / 4]), 'rollups');
  const found = await getJson(`${n.url}/find/${D.ACCOUNT}/tags?query=${enc('and(__name:pre.*)')}&activity=0`);
  const names = [...D.NUMERIC, D.BIG, ...D.TEXT, ...D.HISTOGRAM, D.DELETED, D.JOURNAL_ONLY];
  t.deepEqual(found.json.map((r: { metric_name: string }) => r.metric_name).sort(), [...names].sort(), 'every metric found');
  t.deepEqual(found.json[0].check_tags, D.CHECK_TAGS, 'check tags kept');
  // Activity windows (`a` keys in the fixture, activity blocks once a shard has run) move with their metrics.
  const active = await getJson(`${n.url}/find/${D.ACCOUNT}/tags?query=${enc('and(__name:pre.*)')}&activity=1`);
  const windows = mergeActivity([], points.map((j) => activitySlice(D.ts(j) * 1000)));
  for (const name of D.NUMERIC) t.deepEqual(active.json.find((r: { metric_name: string }) => r.metric_name === name)?.activity, windows, `activity of ${name}`);
  const tagged = await getJson(`${n.url}/find/${D.ACCOUNT}/tags?query=${enc('and(dc:d0)')}`);
  t.is(tagged.json.length, D.NUMERIC.filter((m) => m.includes('dc:d0')).length, 'stream tags searchable');
}

test('a pre-shard data directory is split into shards at open, and re-split when the shard count changes', async (t) => {
  const dataDir = unpack();
  try {
    const first = await startNode({ partitions: 16, shards: 2 }, dataDir);
    try {
      await readsBack(t, first);
    } finally {
      await first.stop(false);
    }
    t.true(existsSync(path.join(dataDir, 'shards', '1')));
    const nodeStore = await Store.open(dataDir);
    try {
      t.deepEqual(JSON.parse((await nodeStore.get(CF.state, STATE_KEY.shardLayout))!.toString()), { shards: 2, partitions: 16 });
      let left = 0;
      for (const cf of [CF.numeric, CF.metrics, CF.histogram, CF.rollup]) for await (const _ of nodeStore.scan(cf, {})) left++;
      t.is(left, 0, 'the node store keeps no shard data');
    } finally {
      await nodeStore.close();
    }

    const second = await startNode({ partitions: 16, shards: 3 }, dataDir);
    try {
      await readsBack(t, second);
    } finally {
      await second.stop(false);
    }
    t.true(existsSync(path.join(dataDir, 'shards', '2')));
    t.false(existsSync(path.join(dataDir, 'shards.next')));
  } finally {
    rmSync(path.dirname(dataDir), { recursive: true, force: true });
  }
});

test('the partition count of a data directory cannot change', async (t) => {
  const dataDir = unpack();
  try {
    const first = await startNode({ partitions: 16, shards: 1 }, dataDir);
    await first.stop(false);
    const error = await t.throwsAsync(startNode({ partitions: 8, shards: 1 }, dataDir));
    t.regex(error!.message, /written with 16 partitions, not 8/);
  } finally {
    rmSync(path.dirname(dataDir), { recursive: true, force: true });
  }
});
