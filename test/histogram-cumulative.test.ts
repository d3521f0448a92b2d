// Cumulative histograms (TSV `H2`, MetricList `Histogram.cumulative`) against real nodes: each
// submission's running totals are stored as their change since the series' previous one,
// across restarts and crash replay.
import test from 'ava';
import { Histogram, histogramToBase64 } from '../model/histogram/index.js';
import { cumulativeDelta } from '../model/histogram/cumulative.js';
import { buildV1 } from './helpers/metric-list.js';
import { CHECK, getJson, killSpawnedNodes, put, spawnNode, startNode, tempDir, UUID } from './helpers/node.js';

test.after.always(killSpawnedNodes);

/** A histogram of `count` samples at each value. */
const hist = (bins: Record<number, number>) => {
  const h = Histogram.empty();
  for (const [v, c] of Object.entries(bins)) h.insert(Number(v), c);
  return h;
};
const h2 = (sec: number, name: string, bins: Record<number, number>) => ['H2', `${sec}.000`, CHECK, name, histogramToBase64(hist(bins))].join('\t');
const read = async (url: string, name: string) => (await getJson(`${url}/histogram/0/100000/60/${UUID}/${encodeURIComponent(name)}`)).json;

test('cumulativeDelta: bin by bin, and a restart (a bin went down or vanished) is all new', (t) => {
  t.deepEqual(cumulativeDelta(hist({ 1: 3, 5: 2 }), hist({ 1: 1 })).toLabelCounts(), hist({ 1: 2, 5: 2 }).toLabelCounts());
  t.deepEqual(cumulativeDelta(hist({ 1: 3 }), hist({ 1: 3 })).sampleCount(), 0n, 'no change: nothing');
  t.deepEqual(cumulativeDelta(hist({ 1: 1 }), hist({ 1: 3 })).toLabelCounts(), hist({ 1: 1 }).toLabelCounts(), 'a count went down');
  t.deepEqual(cumulativeDelta(hist({ 5: 4 }), hist({ 1: 1, 5: 1 })).toLabelCounts(), hist({ 5: 4 }).toLabelCounts(), 'a bin vanished');
});

test('H2 records store each submission\'s change; repeats and late ones add nothing; H1 is unaffected', async (t) => {
  const n = await startNode({ histogramRollupQuietMs: 0, checkpointIntervalMs: 20 });
  try {
    const body = [h2(1200, 'cum', { 1: 1 }), h2(1260, 'cum', { 1: 3 }), h2(1320, 'cum', { 1: 3, 5: 2 }), h2(1380, 'cum', { 5: 1 })];
    const r = await put(n.url, body.join('\n'));
    t.is(r.status, 200, JSON.stringify(r.json));
    t.is(r.json.updated, 4);
    t.deepEqual(await read(n.url, 'cum'), [
      [1200, 60, { '+10e-001': 1 }],
      [1260, 60, { '+10e-001': 2 }],
      [1320, 60, { '+50e-001': 2 }],
      [1380, 60, { '+50e-001': 1 }], // the totals restarted: stored whole
    ]);
    // The same submission again (a client retry) and an older one change nothing.
    t.is((await put(n.url, [h2(1380, 'cum', { 5: 1 }), h2(1300, 'cum', { 1: 9 })].join('\n'))).status, 200);
    t.deepEqual((await read(n.url, 'cum')).length, 4);
    t.deepEqual((await read(n.url, 'cum'))[3], [1380, 60, { '+50e-001': 1 }]);
    // 300 s periods merge the changes.
    t.deepEqual((await getJson(`${n.url}/histogram/1200/1200/300/${UUID}/cum`)).json, [[1200, 300, { '+10e-001': 3, '+50e-001': 3 }]]);
    const bad = await put(n.url, ['H2', '1500.000', CHECK, 'cum', 'not base64!'].join('\t'));
    t.is(bad.status, 400);
    t.regex(bad.json.error, /H2 HISTOGRAM is not base64/);
  } finally {
    await n.stop();
  }
});

test('MetricList histograms flagged cumulative are stored as changes', async (t) => {
  const n = await startNode({ histogramRollupQuietMs: 0, checkpointIntervalMs: 20 });
  try {
    const point = (sec: number, count: bigint, cumulative: boolean) => ({ name: cumulative ? 'fb.cum' : 'fb.plain', ts: BigInt(sec * 1000), value: { t: 'hist' as const, v: [[20, 0, count]] as [number, number, bigint][], cumulative } });
    const body = buildV1([point(1200, 2n, true), point(1260, 5n, true), point(1200, 2n, false), point(1260, 5n, false)]);
    const res = await fetch(`${n.url}/raw`, { method: 'PUT', body, headers: { 'content-type': 'application/x-circonus-metric-list-flatbuffer', 'x-svc-datapoints': '4' } });
    t.is(res.status, 200, await res.text());
    t.deepEqual(await read(n.url, 'fb.cum'), [[1200, 60, { '+20e-001': 2 }], [1260, 60, { '+20e-001': 3 }]]);
    t.deepEqual(await read(n.url, 'fb.plain'), [[1200, 60, { '+20e-001': 2 }], [1260, 60, { '+20e-001': 5 }]]);
  } finally {
    await n.stop();
  }
});

test.serial('the baseline survives a restart and a crash: replay measures against what it was then', async (t) => {
  const dir = tempDir();
  const first = await spawnNode(dir);
  t.is((await put(first.url, [h2(1200, 'crash', { 1: 1 }), h2(1260, 'crash', { 1: 4 })].join('\n'))).status, 200);
  first.child.kill('SIGTERM');
  await first.exited;

  const second = await spawnNode(dir);
  t.is((await put(second.url, h2(1320, 'crash', { 1: 6 }))).status, 200);
  second.child.kill('SIGKILL'); // before its buffer is sealed: replay stores it again
  await second.exited;

  const third = await spawnNode(dir);
  t.is((await put(third.url, h2(1380, 'crash', { 1: 10 }))).status, 200);
  t.deepEqual(await read(third.url, 'crash'), [
    [1200, 60, { '+10e-001': 1 }],
    [1260, 60, { '+10e-001': 3 }],
    [1320, 60, { '+10e-001': 2 }],
    [1380, 60, { '+10e-001': 4 }],
  ]);
  third.child.kill('SIGTERM');
  await third.exited;
});
