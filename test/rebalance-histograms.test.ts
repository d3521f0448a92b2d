// Histograms counted once on a new owner, and numeric rollup records relocated (README
// "Rebalance"): relocation sends both as sets of their periods, so copies sent twice and
// histogram writes dual-written during the rebalance add up to exactly what was submitted. The
// real rig: nats-server, three nodes at W=2 growing to four. Two old nodes are activated and
// wait at VOTE (no walk starts before every node dual-writes); histograms are written
// (dual-written: the new node gets them as adds); the two restart (and resume there), the
// rebalance is aborted and started again on all three, so the walks' copies reach the new node
// after the dual-written writes, and the rebalance runs to the end. Copies sent twice (a walk
// restarted) go through the same code as a rebuild's, which test/rebuild.test.ts repeats.
import test from 'ava';
import { histogramToBase64, Histogram } from '../model/histogram/index.js';
import { startCluster, type Member } from './helpers/cluster.js';
import { CHECK, getJson, killSpawnedNodes, put, UUID } from './helpers/node.js';
import { eventually, growBy, LOCAL, owners, post, stateOf } from './helpers/rebalance.js';

test.after.always(killSpawnedNodes);

const histPath = (name: string) => `/histogram/0/100000/60/${UUID}/${name}`;
async function localHist(url: string, name: string): Promise<unknown> {
  return (await fetch(`${url}${histPath(name)}`, { headers: LOCAL })).json();
}

test.serial('histograms reach a new owner once, rollup records too: writes dual-written before the walks (restarts, an abort and a new activate meanwhile), then the walks send sets', async (t) => {
  const c = await startCluster(3, 2);
  const grown = await growBy(c);
  try {
    const [a] = c.members.map((m) => m.url) as [string];
    const names = Array.from({ length: 24 }, (_, i) => `c.rbh${i}`);
    const moving: string[] = [];
    for (const n of names) if ((await owners(grown.node.url, n)).includes(grown.id)) moving.push(n);
    t.true(moving.length > 0);
    const h = new Histogram();
    h.insert(3);
    h.insert(40);
    const line = (ts: string, n: string) => ['H1', ts, CHECK, n, histogramToBase64(h)].join('\t');
    t.is((await put(a, names.flatMap((n) => [line('1000.000', n), line('1010.000', n)]).join('\n'))).status, 200);
    // Numeric rollup records (/write/nnt) with no raw samples: relocated too, as sets of their periods.
    const rollupOnly = Array.from({ length: 16 }, (_, i) => `c.rbnnt${i}`);
    const nnt = (metric: string, offset: number, value: number) => ({ metric, id: UUID, offset, count: 4, value, stddev: 1, derivative: 0.5, derivative_stddev: 0, counter: 0.5, counter_stddev: 0 });
    t.is((await fetch(`${a}/write/nnt`, { method: 'POST', body: JSON.stringify(rollupOnly.flatMap((n, i) => [nnt(n, 3600, i), nnt(n, 7200, -i)])) })).status, 200);
    await c.settled();
    const movingNnt: string[] = [];
    for (const n of rollupOnly) if ((await owners(grown.node.url, n)).includes(grown.id)) movingNnt.push(n);
    t.true(movingNnt.length > 0);
    const nntRead = (url: string, n: string, type = 'count') => fetch(`${url}/rollup/${UUID}/${n}?start_ts=0.000&end_ts=100000.000&rollup_span=60s&get_engine=nnt&type=${type}`, { headers: LOCAL }).then(async (r) => {
        const body = (await r.json()) as [number, number | null][] | { code: string };
        return Array.isArray(body) ? body.filter(([, v]) => v !== null) : body;
      });

    for (const m of c.members) t.is((await post(`${m.url}/topology/${grown.hash}`, grown.json)).status, 200);
    // Two of the three old nodes start: they dual-write and wait at VOTE for the third.
    const [first, second] = c.members as [Member, Member];
    for (const m of [first, second]) t.is((await post(`${m.url}/rebalance/activate/${grown.hash}`)).status, 200);
    for (const m of [first, second]) t.is(await stateOf(m.url), 'TOPO_REBALANCE_VOTE');
    // Dual-written meanwhile: to the old owners and to the new node.
    t.is((await put(a, names.flatMap((n) => [line('1010.000', n), line('1100.000', n)]).join('\n'))).status, 200);
    const expected = new Map<string, string>();
    for (const n of moving) {
      const ids = await owners(a, n);
      for (const id of ids) {
        const url = c.members.find((m) => m.id === id)!.url;
        await eventually(`${n}: the dual-written write on old owner ${id}`, async () => JSON.stringify(await localHist(url, n)).includes('[1080,'));
      }
      expected.set(n, JSON.stringify(await localHist(c.members.find((m) => m.id === ids[0])!.url, n)));
    }
    t.deepEqual(JSON.parse(expected.get(moving[0]!)!), [[960, 60, { '+30e-001': 3, '+40e+000': 3 }], [1080, 60, { '+30e-001': 1, '+40e+000': 1 }]]);

    // The dual-written writes reached the new node (as adds).
    for (const n of moving) await eventually(`${n}: the dual-written write on the new node`, async () => JSON.stringify(await localHist(grown.node.url, n)).includes('[1080,'));
    // Restarts resume where the nodes were; then the rebalance starts over on every node, so every
    // holder walks: the new node gets every histogram period and rollup record as sets, after the adds.
    for (const [i, m] of [first, second].entries()) {
      await c.kill(i);
      await c.start(i);
      t.is(await stateOf(m.url), 'TOPO_REBALANCE_VOTE', 'resumed after the restart');
      t.is((await post(`${m.url}/rebalance/deactivate/${grown.hash}`)).status, 200);
    }
    for (const m of c.members) t.is((await post(`${m.url}/rebalance/activate/${grown.hash}`)).status, 200);
    await eventually('the rebalance to finish', async () => (await Promise.all(c.members.map((m) => stateOf(m.url)))).every((s) => s === 'TOPO_REBALANCE_IDLE'), 120_000);
    for (const m of [first, second]) t.true(m.running!.log.some((l) => l.includes('relocation done and confirmed')), `${m.id} relocated after its restart`);

    for (const n of moving) t.is(JSON.stringify(await localHist(grown.node.url, n)), expected.get(n)!, `${n}: counted once on the new owner`);
    for (const n of movingNnt) t.deepEqual(await nntRead(grown.node.url, n), [[3600, 4], [7200, 4]], `${n}: rollup records on the new owner`);
    for (const n of movingNnt) t.deepEqual(await nntRead(grown.node.url, n, 'average'), [[3600, rollupOnly.indexOf(n)], [7200, 0 - rollupOnly.indexOf(n)]], `${n}: value for value`);
    // Through every node (the new ring's owners answer).
    for (const url of [...c.members.map((m) => m.url), grown.node.url]) {
      for (const n of moving) t.is(JSON.stringify((await getJson(`${url}${histPath(n)}`)).json), expected.get(n)!, `${n} through ${url}`);
    }
  } finally {
    grown.node.child.kill('SIGTERM');
    await grown.node.exited;
    await c.stop();
  }
});
