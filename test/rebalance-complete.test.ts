// A rebalance run to the end on the real rig: three `ferrite serve` processes at W=2 grow to
// four, with writes before and during. Afterwards every acknowledged sample is readable from
// every node, every node places metrics on the new ring, and no node keeps a metric it no
// longer owns; a restarted node stays on the new topology.
import test from 'ava';
import { buildRing, ownersOf, parseTopology } from '../model/topology/index.js';
import { startCluster } from './helpers/cluster.js';
import { histogramToBase64, Histogram } from '../model/histogram/index.js';
import { CHECK, getJson, killSpawnedNodes, mLine, put, UUID } from './helpers/node.js';
import { eventually, growBy, owners, post, raw } from './helpers/rebalance.js';

test.after.always(killSpawnedNodes);

test.serial('rebalance 3 → 4 at W=2 to the end: data complete everywhere, ownership on the new ring, nothing left behind', async (t) => {
  const c = await startCluster(3, 2);
  const grown = await growBy(c);
  try {
    const nodes = () => [...c.members.map((m) => ({ id: m.id, url: m.url })), { id: grown.id, url: grown.node.url }];
    const ring = buildRing(parseTopology(grown.json));
    const names = Array.from({ length: 60 }, (_, i) => `c.done${i}`);
    /** name → [ts ms, value] acknowledged, in time order. */
    const acked = new Map<string, [number, number][]>(names.map((n) => [n, []]));
    const write = async (url: string, ts: number, value: (i: number) => number) => {
      const r = await put(url, names.map((n, i) => mLine(`${ts}.000`, n, 'n', String(value(i)))).join('\n'));
      if (r.status !== 200) return false;
      names.forEach((n, i) => acked.get(n)!.push([ts * 1000, value(i)]));
      return true;
    };
    t.true(await write(c.members[0]!.url, 600, (i) => i + 1));
    t.true(await write(c.members[1]!.url, 660, (i) => -i - 1));
    // Histograms written before: each must arrive once (they add up when merged).
    const hists = Array.from({ length: 12 }, (_, i) => `c.donehist${i}`);
    const hist = new Histogram();
    hist.insert(3);
    t.is((await put(c.members[2]!.url, hists.map((n) => ['H1', '1000.000', CHECK, n, histogramToBase64(hist)].join('\t')).join('\n'))).status, 200);
    await c.settled();

    for (const m of c.members) t.is((await post(`${m.url}/topology/${grown.hash}`, grown.json)).status, 200);
    for (const m of c.members) t.is((await post(`${m.url}/rebalance/activate/${grown.hash}`)).status, 200);

    // Writes keep coming, to the old nodes in turn, until every node has finished.
    const seen = new Set<string>();
    let k = 0;
    for (;;) {
      const states = await Promise.all(c.members.map(async (m) => (await getJson(`${m.url}/rebalance/state`)).json));
      for (const s of states) seen.add(s.state);
      if (states.every((s) => s.state === 'TOPO_REBALANCE_IDLE' && s.current === grown.hash && s.next === '-')) break;
      t.true(k < 400, `rebalance did not finish: ${JSON.stringify(states)}`);
      if (k >= 400) return;
      await write(c.members[k % 3]!.url, 720 + 60 * k, (i) => 1000 * k + i);
      k++;
      await new Promise((r) => setTimeout(r, 50));
    }
    t.true(k > 0, 'some writes happened during the rebalance');
    t.log(`${k} write batches during the rebalance; states seen: ${[...seen].join(', ')}`);
    t.true(await write(c.members[2]!.url, 100_000 - 60, (i) => -1000 - i), 'a write after it');
    t.true(await write(grown.node.url, 100_000 - 120, (i) => -2000 - i), 'and one to the new node');
    await c.settled();

    const expected = (name: string) => [...acked.get(name)!].sort((x, y) => x[0] - y[0]);
    for (const node of nodes()) {
      t.like((await getJson(`${node.url}/rebalance/state`)).json, { current: grown.hash, next: '-', state: 'TOPO_REBALANCE_IDLE' });
      for (const name of names) {
        const want = ownersOf(ring, `${UUID}-${name}`).map((n) => n.id);
        t.deepEqual(await owners(node.url, name), want, `${name} placed on the new ring by ${node.id}`);
        const read = await getJson(`${node.url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=100000.000`);
        t.deepEqual(read.json, expected(name), `${name} read through ${node.id}`);
        const local = await raw(node.url, name);
        if (want.includes(node.id)) t.deepEqual(local, expected(name), `${name}: owner ${node.id} holds all of it`);
        else t.is((local as { code?: string }).code, 'FER_ERR_METRIC_NOT_FOUND', `${name}: ${node.id} no longer owns it and keeps none`);
      }
    }
    for (const node of nodes()) {
      for (const name of hists) t.deepEqual((await getJson(`${node.url}/histogram/1000/1000/60/${UUID}/${name}`)).json, [[960, 60, { '+30e-001': 1 }]], `histogram ${name} through ${node.id}, counted once`);
    }
    t.is((await post(`${c.members[0]!.url}/rebalance/deactivate/${grown.hash}`)).status, 409, 'nothing left to abort');

    // A restart keeps the new topology, though the node's topology file names the old one.
    await c.kill(1);
    await c.start(1);
    const b = c.members[1]!.url;
    t.like((await getJson(`${b}/rebalance/state`)).json, { current: grown.hash, next: '-', state: 'TOPO_REBALANCE_IDLE' });
    t.is((await getJson(`${b}/topology/json/${grown.hash}`)).status, 200);
    await eventually('reads through the restarted node', async () => {
      const r = await getJson(`${b}/raw/${UUID}/${names[0]}?start_ts=0.000&end_ts=100000.000`);
      return JSON.stringify(r.json) === JSON.stringify(expected(names[0]!));
    });
    for (const name of names) t.deepEqual(await owners(b, name), ownersOf(ring, `${UUID}-${name}`).map((n) => n.id));
  } finally {
    grown.node.child.kill('SIGTERM');
    await grown.node.exited;
    await c.stop();
  }
});
