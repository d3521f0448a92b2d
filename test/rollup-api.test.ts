// GET /rollup and /write/nnt against a real node: every type and engine, ageing into rollups
// (the samples are stamped in 1970, far past the raw retention, and the retention sweep that ages
// them runs every 50 ms; the rollup levels are kept forever), a half aged range, late data, restart.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
const opts = {
  blockSpanMs: 600_000,
  sealQuietMs: 0,
  rollupQuietMs: 0,
  checkpointIntervalMs: 20,
  retentionSweepIntervalMs: 50,
  rollups: [60, 300, 1800, 10800, 86400].map((period) => ({ period, retention: 0 })),
};
test.before(async () => {
  n = await startNode(opts);
});
test.after.always(async () => {
  await n?.stop();
});

const rollup = (name: string, q: string) => getJson(`${n.url}/rollup/${UUID}/${encodeURIComponent(name)}?${q}`);

async function eventually<T>(probe: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await probe();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

test.serial('every type, and the engines agree once rolled up', async (t) => {
  // 10 s apart in [0, 120 s): 0, 1, ..., 11
  const body = Array.from({ length: 12 }, (_, i) => mLine(`${i * 10}.000`, 'r.a', 'n', String(i))).join('\n');
  t.is((await put(n.url, body)).status, 200);
  const q = 'start_ts=0.000&end_ts=120.000&rollup_span=60s';
  t.deepEqual((await rollup('r.a', q)).json, [[0, 2.5], [60, 8.5]]);
  t.deepEqual((await rollup('r.a', `${q}&type=count`)).json, [[0, 6], [60, 6]]);
  const derive = (await rollup('r.a', `${q}&type=derive`)).json as [number, number][];
  t.deepEqual(derive.map(([ts]) => ts), [0, 60]);
  t.true(derive.every(([, v]) => Math.abs(v - 0.1) < 1e-12), 'one unit per 10 s');
  t.deepEqual((await rollup('r.a', `${q}&type=counter_stddev`)).json, [[0, 0], [60, 0]]);
  const all = (await rollup('r.a', `${q}&type=all`)).json;
  t.deepEqual(Object.keys(all[1][1]).sort(), ['count', 'counter', 'counter2', 'counter2_stddev', 'counter_stddev', 'derivative', 'derivative2', 'derivative2_stddev', 'derivative_stddev', 'stddev', 'value']);
  t.is(all[1][1].derivative2, 0);
  // The window [0, 600 s) is sealed by the partition timers and aged by the retention sweep.
  const nnt = await eventually(() => rollup('r.a', `${q}&get_engine=nnt`), (r) => r.json?.[1]?.[1] === 8.5);
  t.deepEqual(nnt.json, [[0, 2.5], [60, 8.5]]);
  t.deepEqual((await rollup('r.a', `${q}&get_engine=recalc`)).json, [[0, null], [60, null]], 'recalc reads raw only, and raw is aged');
  t.deepEqual((await rollup('r.a', 'start_ts=0.000&end_ts=300.000&rollup_span=300s&get_engine=nnt')).json, [[0, 5.5]]);
  t.deepEqual((await rollup('r.a', 'start_ts=0.000&end_ts=120.000&rollup_span=120s')).json, [[0, 5.5]], 'a multiple of a level');
});

test.serial('recalc, and spans no level serves, compute from raw while it is kept', async (t) => {
  const keep = await startNode({ ...opts, rawRetention: 0 }); // raw kept forever, never aged
  try {
    const body = Array.from({ length: 12 }, (_, i) => mLine(`${i * 10}.000`, 'r.a', 'n', String(i))).join('\n');
    t.is((await put(keep.url, body)).status, 200);
    const rollupOf = (q: string) => getJson(`${keep.url}/rollup/${UUID}/r.a?${q}`);
    t.deepEqual((await rollupOf('start_ts=0.000&end_ts=120.000&rollup_span=60s&get_engine=recalc')).json, [[0, 2.5], [60, 8.5]]);
    t.deepEqual((await rollupOf('start_ts=0.000&end_ts=120.000&rollup_span=60s&get_engine=nnt')).json, [[0, null], [60, null]], 'nothing aged, nothing stored');
    t.deepEqual((await rollupOf('start_ts=0.000&end_ts=60.000&rollup_span=30s&get_engine=recalc')).json, [[0, 1], [30, 4]]);
    // A sub-second span writes every timestamp as <seconds>.<3 digits> (interface §2.2, §4.4).
    const subSecond = await rollupOf('start_ts=0.000&end_ts=1.000&rollup_span=500ms&get_engine=recalc');
    t.is(subSecond.text, '[[0.000,0],[0.500,null]]');
    t.is((await rollupOf('start_ts=0.000&end_ts=3.000&rollup_span=1500ms&get_engine=recalc')).text, '[[0.000,0],[1.500,null]]');
    t.is((await rollupOf('start_ts=0.000&end_ts=60.000&rollup_span=30s')).text, '[[0,1],[30,4]]', 'whole seconds stay integers');
  } finally {
    await keep.stop();
  }
});

test.serial('late data is added to its aged window; a half aged range mixes stored and raw', async (t) => {
  const q = 'start_ts=0.000&end_ts=1200.000&rollup_span=600s';
  // window [600, 1200) gets data now (open buffer until sealed)
  t.is((await put(n.url, mLine('700.000', 'r.a', 'n', '100'))).status, 200);
  t.deepEqual((await rollup('r.a', q)).json, [[0, 5.5], [600, 100]]);
  t.is((await put(n.url, mLine('5.000', 'r.a', 'n', '1000'))).status, 200, 'late sample into an aged window');
  t.deepEqual((await rollup('r.a', 'start_ts=0.000&end_ts=60.000&rollup_span=60s&type=count')).json, [[0, 7]], 'read at once with the stored periods');
  const late = await eventually(() => rollup('r.a', 'start_ts=0.000&end_ts=60.000&rollup_span=60s&get_engine=nnt&type=count'), (r) => r.json?.[0]?.[1] === 7);
  t.deepEqual(late.json, [[0, 7]]);
});

test.serial('data survives a restart', async (t) => {
  const dir = n.dataDir;
  await n.stop(false);
  n = await startNode(opts, dir);
  t.deepEqual((await rollup('r.a', 'start_ts=60.000&end_ts=120.000&rollup_span=60s&get_engine=nnt')).json, [[60, 8.5]]);
});

test('/write/nnt stores rollup records at the smallest period', async (t) => {
  const item = { metric: 'r.nnt', id: UUID, offset: 3600, count: 4, value: 10, stddev: 2, derivative: 1, derivative_stddev: 0, counter: 1, counter_stddev: 0 };
  const res = await fetch(`${n.url}/write/nnt`, { method: 'POST', body: JSON.stringify([item, { ...item, offset: 3660, value: 20 }, { ...item, count: 'x' }]) });
  const json = (await res.json()) as any;
  t.is(res.status, 200);
  t.is(json.updated, 2);
  t.is(json.errors, 1);
  t.deepEqual((await rollup('r.nnt', 'start_ts=3600.000&end_ts=3720.000&rollup_span=60s&get_engine=nnt')).json, [[3600, 10], [3660, 20]]);
  t.deepEqual((await rollup('r.nnt', 'start_ts=3600.000&end_ts=3900.000&rollup_span=300s&get_engine=nnt&type=count')).json, [[3600, 8]]);
  const bad = await fetch(`${n.url}/write/nnt`, { method: 'PUT', body: JSON.stringify([{ ...item, value: 'x' }]) });
  t.is(bad.status, 400);
});

test('/write/nnt parts are one record per sub-interval, read back through /rollup', async (t) => {
  const part = (value: number, count = 1) => ({ count, value, stddev: 0, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 });
  // IRONdb's example: a 300 s record made of five 60 s parts, here with different values.
  const item = { metric: 'r.parts', id: UUID, offset: 14_400, ...part(3, 5), parts: [60, [part(1), part(2), part(3), part(4, 0), part(5, 2)]] };
  // Parts shorter than the finest level (60 s here) are stored in the period containing them.
  const fine = { metric: 'r.parts.fine', id: UUID, offset: 14_400, ...part(0, 0), parts: [30, [part(10), part(20, 3), part(40)]] };
  const res = await fetch(`${n.url}/write/nnt`, { method: 'POST', body: JSON.stringify([item, fine]) });
  t.is(res.status, 200);
  t.like(await res.json(), { records: 2, updated: 2, errors: 0 });
  const q = 'start_ts=14400.000&end_ts=14700.000&rollup_span=60s&get_engine=nnt';
  t.deepEqual((await rollup('r.parts', q)).json, [[14_400, 1], [14_460, 2], [14_520, 3], [14_580, null], [14_640, 5]]);
  t.deepEqual((await rollup('r.parts', `${q}&type=count`)).json, [[14_400, 1], [14_460, 1], [14_520, 1], [14_580, null], [14_640, 2]]);
  const whole = await rollup('r.parts', 'start_ts=14400.000&end_ts=14700.000&rollup_span=300s&get_engine=nnt&type=all');
  t.like(whole.json[0][1], { count: 5, value: (1 + 2 + 3 + 5 * 2) / 5 });
  t.deepEqual((await rollup('r.parts.fine', 'start_ts=14400.000&end_ts=14520.000&rollup_span=60s&get_engine=nnt&type=count')).json, [[14_400, 4], [14_460, 1]]);
  t.deepEqual((await rollup('r.parts.fine', 'start_ts=14400.000&end_ts=14520.000&rollup_span=60s&get_engine=nnt')).json, [[14_400, (10 + 20 * 3) / 4], [14_460, 40]]);
});

test('a rollup read again after a write sees the write (decoded chunks are not served stale)', async (t) => {
  const item = { metric: 'r.cache', id: UUID, offset: 7200, count: 4, value: 10, stddev: 0, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 };
  const read = async () => (await rollup('r.cache', 'start_ts=7200.000&end_ts=7380.000&rollup_span=60s&get_engine=nnt')).json;
  t.is((await fetch(`${n.url}/write/nnt`, { method: 'POST', body: JSON.stringify([item]) })).status, 200);
  t.deepEqual(await read(), [[7200, 10], [7260, null], [7320, null]]);
  t.deepEqual(await read(), [[7200, 10], [7260, null], [7320, null]], 'the same answer from the cached chunk');
  // Same metric, same chunk (a day of 60 s periods), another period.
  t.is((await fetch(`${n.url}/write/nnt`, { method: 'POST', body: JSON.stringify([{ ...item, offset: 7260, value: 20 }]) })).status, 200);
  t.deepEqual(await read(), [[7200, 10], [7260, 20], [7320, null]]);
});

test('parameters are validated', async (t) => {
  const q = (extra: string) => rollup('r.a', `start_ts=0.000&end_ts=120.000&${extra}`);
  t.is((await q('rollup_span=0s')).status, 400);
  t.is((await q('rollup_span=60')).status, 400);
  t.is((await q('rollup_span=90s&get_engine=nnt')).status, 400, 'no rollup serves 90 s');
  t.deepEqual((await q('rollup_span=90s')).json, (await q('rollup_span=90s&get_engine=recalc')).json, 'dispatch recalculates what no rollup serves');
  t.is((await q('rollup_span=90s&get_engine=recalc')).status, 200);
  t.is((await q('rollup_span=60s&type=median')).status, 400);
  t.is((await q('rollup_span=60s&get_engine=fast')).status, 400);
  t.is((await getJson(`${n.url}/rollup/${UUID}/r.a?end_ts=1.000&rollup_span=60s`)).status, 400);
  t.is((await getJson(`${n.url}/rollup/${UUID}/nope?start_ts=0.000&end_ts=1.000&rollup_span=60s`)).status, 404);
});
