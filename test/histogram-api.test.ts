// Histogram ingest (H1 records, /histogram/write), rollups and GET /histogram against
// real nodes: merging, rollup levels, validation, restart and crash replay.
import { rmSync } from 'node:fs';
import test from 'ava';
import { Histogram, histogramToBase64 } from '../model/histogram/index.js';
import { CHECK, getJson, killSpawnedNodes, put, spawnNode, startNode, tempDir, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  // Rollups run as soon as a period closes, so the tests see rolled-up data quickly.
  n = await startNode({ histogramRollupQuietMs: 0, checkpointIntervalMs: 20 });
});
test.after.always(async () => {
  await n?.stop();
  killSpawnedNodes();
});

const b64 = (...values: number[]) => {
  const h = Histogram.empty();
  for (const v of values) h.insert(v);
  return histogramToBase64(h);
};
const h1 = (ts: string, name: string, hist: string) => ['H1', ts, CHECK, name, hist].join('\t');
const read = (url: string, name: string, start: number, end: number, period: number) =>
  getJson(`${url}/histogram/${start}/${end}/${period}/${UUID}/${encodeURIComponent(name)}`);
const writeJson = (url: string, items: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/histogram/write`, { method: 'POST', body: JSON.stringify(items), headers }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));

async function eventually<T>(probe: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await probe();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('H1 records in one period merge; reads give [ts, period, {bin: count}]', async (t) => {
  const body = [h1('1200.000', 'lat', b64(1, 2)), h1('1230.500', 'lat', b64(2, 3)), h1('1260.000', 'lat', b64(0.08))].join('\n');
  const r = await put(n.url, body);
  t.is(r.status, 200);
  t.is(r.json.updated, 3);
  t.deepEqual((await read(n.url, 'lat', 1200, 1260, 60)).json, [
    [1200, 60, { '+10e-001': 1, '+20e-001': 2, '+30e-001': 1 }],
    [1260, 60, { '+80e-003': 1 }],
  ]);
  // start and end are inclusive period starts
  t.deepEqual((await read(n.url, 'lat', 1260, 1260, 60)).json, [[1260, 60, { '+80e-003': 1 }]]);
  t.deepEqual((await read(n.url, 'lat', 1201, 1259, 60)).json, [[1200, 60, { '+10e-001': 1, '+20e-001': 2, '+30e-001': 1 }]]);
});

test('coarser periods merge finer ones, before and after the rollup runs', async (t) => {
  const body = [h1('3000.000', 'roll', b64(5)), h1('3060.000', 'roll', b64(5, 7)), h1('3290.000', 'roll', b64(7))].join('\n');
  t.is((await put(n.url, body)).status, 200);
  const expected = [[3000, 300, { '+50e-001': 2, '+70e-001': 2 }]];
  t.deepEqual((await read(n.url, 'roll', 3000, 3000, 300)).json, expected);
  // 600 s is served by merging 300 s records; 1800 is a level of its own.
  t.deepEqual((await read(n.url, 'roll', 3000, 3000, 600)).json, [[3000, 600, { '+50e-001': 2, '+70e-001': 2 }]]);
  const rolled = await eventually(() => read(n.url, 'roll', 1800, 1800, 1800), (r) => r.json.length === 1);
  t.deepEqual(rolled.json, [[1800, 1800, { '+50e-001': 2, '+70e-001': 2 }]]);
  // Late data into a rolled-up period re-rolls it.
  t.is((await put(n.url, h1('3001.000', 'roll', b64(5)))).status, 200);
  const late = await eventually(() => read(n.url, 'roll', 3000, 3000, 300), (r) => r.json[0]?.[2]['+50e-001'] === 3);
  t.deepEqual(late.json, [[3000, 300, { '+50e-001': 3, '+70e-001': 2 }]]);
  t.deepEqual((await read(n.url, 'roll', 0, 86400, 86400)).json, [[0, 86400, { '+50e-001': 3, '+70e-001': 2 }]]);
});

test('/histogram/write validates each item and stores the good ones', async (t) => {
  const good = { metric: 'jw', id: UUID, offset: 5000, period: 60, histogram: b64(1, 1) };
  const r = await writeJson(n.url, [
    good,
    { ...good, histogram: 'not base64!' },
    { ...good, histogram: 'AAEKAA==' }, // a record cut short
    { ...good, period: 0 },
    { ...good, id: 'nope' },
    { ...good, metric: '' },
    { ...good, offset: 'x' },
    { ...good, account_id: -1 },
    7,
  ], { 'x-svc-account-id': '1' });
  t.is(r.status, 200);
  t.is(r.json.updated, 1);
  t.is(r.json.errors, 8);
  t.deepEqual(r.json.error_details.map((e: { item: number }) => e.item), [1, 2, 3, 4, 5, 6, 7, 8]);
  t.regex(r.json.error_details[0].reason, /'histogram'/);
  t.regex(r.json.error_details[2].reason, /'period'/);
  t.deepEqual((await read(n.url, 'jw', 4980, 4980, 60)).json, [[4980, 60, { '+10e-001': 2 }]]);
  const none = await writeJson(n.url, [{ ...good, period: -5 }]);
  t.is(none.status, 400);
  t.regex(none.json.error, /item 0: 'period'/);
  t.is((await writeJson(n.url, { not: 'an array' })).status, 400);
  const notJson = await fetch(`${n.url}/histogram/write`, { method: 'PUT', body: '[{' });
  t.is(notJson.status, 400);
});

test('a bad H1 histogram is that line\'s error', async (t) => {
  const r = await put(n.url, [h1('7000.000', 'badh1', 'AAEKAA=='), h1('7000.000', 'badh1', b64(2))].join('\n'));
  t.is(r.status, 200);
  t.is(r.json.errors, 1);
  t.regex(r.json.error_details[0].reason, /H1 HISTOGRAM is not a serialized histogram/);
  t.deepEqual((await read(n.url, 'badh1', 6960, 6960, 60)).json, [[6960, 60, { '+20e-001': 1 }]]);
});

test('format=hex labels bins with C\'s %a of the bin edge; double is the default', async (t) => {
  t.is((await put(n.url, [h1('4800.000', 'fmt', b64(1, 3, 3)), h1('4800.000', 'fmt', b64(0.08, 0))].join('\n'))).status, 200);
  const dbl = [[4800, 60, { '0': 1, '+10e-001': 1, '+30e-001': 2, '+80e-003': 1 }]];
  t.deepEqual((await read(n.url, 'fmt', 4800, 4800, 60)).json, dbl);
  t.deepEqual((await getJson(`${n.url}/histogram/4800/4800/60/${UUID}/fmt?format=double`)).json, dbl);
  // printf("%a") of 1, 3 and 0.08 (bits 0x3fb47ae147ae147b); the zero bin is 0x0p+0.
  t.deepEqual((await getJson(`${n.url}/histogram/4800/4800/60/${UUID}/fmt?format=hex`)).json, [[4800, 60, { '0x0p+0': 1, '0x1p+0': 1, '0x1.8p+1': 2, '0x1.47ae147ae147bp-4': 1 }]]);
  const bad = await getJson(`${n.url}/histogram/4800/4800/60/${UUID}/fmt?format=octal`);
  t.is(bad.status, 400);
  t.regex(bad.json.error, /format/);
});

test('min_granularity: the period answered is the smallest multiple of it that is at least the period', async (t) => {
  const body = [h1('6000.000', 'gran', b64(1)), h1('6060.000', 'gran', b64(2)), h1('6300.000', 'gran', b64(3))].join('\n');
  t.is((await put(n.url, body)).status, 200);
  const q = (extra: string, period = 60) => getJson(`${n.url}/histogram/6000/6300/${period}/${UUID}/gran?${extra}`);
  t.deepEqual((await q('min_granularity=300')).json, [
    [6000, 300, { '+10e-001': 1, '+20e-001': 1 }],
    [6300, 300, { '+30e-001': 1 }],
  ]);
  t.is((await q('min_granularity=60', 300)).json[0][1], 300, 'a minimum below the period changes nothing');
  t.is((await q('min_granularity=300', 120)).json[0][1], 300);
  t.is((await q('min_granularity=auto')).json[0][1], 60, 'every level keeps its data forever here: the finest');
  for (const bad of ['0', '-5', 'x', '1.5']) {
    const r = await q(`min_granularity=${bad}`);
    t.is(r.status, 400, bad);
    t.regex(r.json.error, /min_granularity/);
  }
});

test('min_granularity=auto reads an old range from the finest level whose retention still holds it', async (t) => {
  const levels = [{ period: 60, retention: 86_400 }, { period: 300, retention: 0 }];
  const m = await startNode({ histogramRollups: levels, histogramRollupQuietMs: 0, checkpointIntervalMs: 20 });
  try {
    const now = Math.floor(Date.now() / 1000);
    const old = now - 2 * 86_400 - ((now - 2 * 86_400) % 300);
    const recent = now - 3600 - ((now - 3600) % 300);
    t.is((await put(m.url, [h1(`${old}.000`, 'aged', b64(4)), h1(`${recent}.000`, 'aged', b64(5))].join('\n'))).status, 200);
    const auto = (start: number) => getJson(`${m.url}/histogram/${start}/${start}/60/${UUID}/aged?min_granularity=auto`);
    t.deepEqual((await auto(old)).json, [[old, 300, { '+40e-001': 1 }]], 'two days back: past the 60 s level\'s retention');
    t.deepEqual((await auto(recent)).json, [[recent, 60, { '+50e-001': 1 }]], 'an hour back: the 60 s level still holds it');
  } finally {
    await m.stop();
  }
});

test('reads validate their parameters', async (t) => {
  await put(n.url, h1('9000.000', 'v', b64(1)));
  t.is((await read(n.url, 'v', 9000, 9000, 90)).status, 400, 'no rollup serves 90 s');
  t.regex((await read(n.url, 'v', 9000, 9000, 90)).json.error, /period/);
  t.is((await getJson(`${n.url}/histogram/x/9000/60/${UUID}/v`)).status, 400);
  t.is((await getJson(`${n.url}/histogram/9000/8000/60/${UUID}/v`)).status, 400);
  t.is((await getJson(`${n.url}/histogram/9000/9000/0/${UUID}/v`)).status, 400);
  t.is((await read(n.url, 'never.written', 0, 9000, 60)).status, 404);
  t.is((await getJson(`${n.url}/histogram/0/1/60/not-a-uuid/v`)).status, 400);
});

test('histograms survive restarts and SIGKILL without double counting on replay', async (t) => {
  const dir = tempDir('ferrite-hist-');
  const args = ['--partitions', '2'];
  process.env.FERRITE_HISTOGRAM_ROLLUP_QUIET_MS = '0';
  process.env.FERRITE_CHECKPOINT_INTERVAL_MS = '20';
  try {
    let expected = 0;
    for (let trial = 0; trial < 5; trial++) {
      const node = await spawnNode(dir, args);
      const got = await read(node.url, 'crash.h', 0, 100_000, 86400);
      t.is(got.json[0]?.[2]['+10e-001'] ?? 0, expected, `trial ${trial}`);
      const body = Array.from({ length: 50 }, (_, i) => h1(`${1000 + 60 * i}.000`, 'crash.h', b64(1))).join('\n');
      t.is((await put(node.url, body)).status, 200);
      expected += 50;
      // Kill at varying points: before sealing, between sealing and truncation, after rollup.
      await new Promise((r) => setTimeout(r, trial * 40));
      node.child.kill('SIGKILL');
      await node.exited;
    }
    const last = await spawnNode(dir, args);
    t.deepEqual((await read(last.url, 'crash.h', 0, 100_000, 86400)).json, [[0, 86400, { '+10e-001': expected }]]);
    last.child.kill('SIGTERM');
    t.is(await last.exited, 0);
  } finally {
    delete process.env.FERRITE_HISTOGRAM_ROLLUP_QUIET_MS;
    delete process.env.FERRITE_CHECKPOINT_INTERVAL_MS;
    rmSync(dir, { recursive: true, force: true });
  }
});
