// Histograms counted once on a new owner, and numeric rollup records relocated (README "Rebalance"):
// relocation sends both as sets
// of their periods, so REHASH sent twice (every old node restarted in the middle of it) and
// histogram writes dual-written during the rebalance add up to exactly what was submitted.
// The real rig: nats-server, three nodes at W=2 growing to four. The new node is frozen
// (SIGSTOP) while the old ones walk, restart and walk again, so both copies reach it, after the
// dual-written writes, when it resumes.
import test from 'ava';
import { histogramToBase64, Histogram } from '../model/histogram/index.js';
import { startCluster } from './helpers/cluster.js';
import { CHECK, getJson, killSpawnedNodes, put, UUID } from './helpers/node.js';
import { eventually, growBy, LOCAL, owners, post, stateOf } from './helpers/rebalance.js';

test.after.always(killSpawnedNodes);

const histPath = (name: string) => `/histogram/0/100000/60/${UUID}/${name}`;
async function localHist(url: string, name: string): Promise<unknown> {
  return (await fetch(`${url}${histPath(name)}`, { headers: LOCAL })).json();
}

test.serial('histograms reach a new owner once: REHASH restarted on every node, writes dual-written meanwhile', async (t) => {
  const c = await startCluster(3, 2);
  const grown = await growBy(c);
  let frozen = false;
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
    grown.node.child.kill('SIGSTOP');
    frozen = true;
    for (const m of c.members) t.is((await post(`${m.url}/rebalance/activate/${grown.hash}`)).status, 200);
    // Dual-written: to the old owners and (queued on its stream) to the frozen new node.
    t.is((await put(a, names.flatMap((n) => [line('1010.000', n), line('1100.000', n)]).join('\n'))).status, 200);
    const expected = new Map<string, string>();
    for (const n of moving) {
      const first = (await owners(a, n))[0];
      const primary = c.members.find((m) => m.id === first)!;
      await eventually(`${n}: the dual-written write on an old owner`, async () => JSON.stringify(await localHist(primary.url, n)).includes('[1080,'));
      expected.set(n, JSON.stringify(await localHist(primary.url, n)));
    }
    t.deepEqual(JSON.parse(expected.get(moving[0]!)!), [[960, 60, { '+30e-001': 3, '+40e+000': 3 }], [1080, 60, { '+30e-001': 1, '+40e+000': 1 }]]);

    // Each old node walks (its copies wait unconfirmed for the frozen node), then restarts and walks again.
    for (const m of c.members) await eventually(`${m.id} sent its copies`, async () => m.running!.log.some((l) => l.includes('relocation sent')));
    for (let i = 0; i < 3; i++) {
      await c.kill(i);
      await c.start(i);
      t.is(await stateOf(c.members[i]!.url), 'TOPO_REBALANCE_REHASH', 'REHASH resumes after the restart');
    }
    for (const m of c.members) await eventually(`${m.id} sent its copies again`, async () => m.running!.log.some((l) => l.includes('relocation sent')));
    grown.node.child.kill('SIGCONT');
    frozen = false;
    await eventually('the rebalance to finish', async () => (await Promise.all(c.members.map((m) => stateOf(m.url)))).every((s) => s === 'TOPO_REBALANCE_IDLE'), 120_000);
    const logs = c.members.flatMap((m) => m.running!.log).filter((l) => l.includes('relocation done and confirmed'));
    t.true(logs.length >= 3, 'every restarted node relocated again');

    for (const n of moving) t.is(JSON.stringify(await localHist(grown.node.url, n)), expected.get(n)!, `${n}: counted once on the new owner`);
    for (const n of movingNnt) t.deepEqual(await nntRead(grown.node.url, n), [[3600, 4], [7200, 4]], `${n}: rollup records on the new owner`);
    for (const n of movingNnt) t.deepEqual(await nntRead(grown.node.url, n, 'average'), [[3600, rollupOnly.indexOf(n)], [7200, 0 - rollupOnly.indexOf(n)]], `${n}: value for value`);
    // Through every node (the new ring's owners answer).
    for (const url of [...c.members.map((m) => m.url), grown.node.url]) {
      for (const n of moving) t.is(JSON.stringify((await getJson(`${url}${histPath(n)}`)).json), expected.get(n)!, `${n} through ${url}`);
    }
  } finally {
    if (frozen) grown.node.child.kill('SIGCONT');
    grown.node.child.kill('SIGTERM');
    await grown.node.exited;
    await c.stop();
  }
});
