// `ferrite cluster`: a real nats-server and three real nodes under one generated topology.
import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getJson, tempDir } from './helpers/node.js';
import { freeBase, portFree, startRig } from './helpers/rig.js';
import { clientTopologyHash } from './helpers/irondb-ring.js';

test('ferrite cluster runs three nodes over one NATS under one topology, and restarts the same cluster', async (t) => {
  const dir = tempDir('ferrite-rig-');
  const base = await freeBase();
  const rig = await startRig(base, dir);
  try {
    t.deepEqual(
      rig.nodes.map((n) => n.url),
      [0, 1, 2].map((i) => `http://127.0.0.1:${base + i}`),
    );
    for (const n of rig.nodes) {
      const state = (await getJson(`${n.url}/state`)).json;
      t.is(state.current, rig.hash);
      t.is(state.identity, n.id);
    }
    // Every node hears every other over NATS.
    let ages: string[] = [];
    for (let i = 0; i < 50; i++) {
      ages = (await getJson(`${rig.nodes[0]!.url}/gossip/json`)).json.map((g: { gossip_age: string }) => g.gossip_age);
      if (!ages.includes('-1')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.is(ages.length, 3);
    t.false(ages.includes('-1'), `ages ${ages}`);
    // The hash a client recomputes from the generated topology (id, weight, side, W).
    const file = JSON.parse(readFileSync(path.join(dir, 'topology.json'), 'utf8')) as { write_copies: number; nodes: { id: string; weight: number; side?: 'a' | 'b' }[] };
    t.is(rig.hash, clientTopologyHash(file.write_copies, file.nodes.map((n) => ({ id: n.id, weight: n.weight ?? 170, ...(n.side ? { side: n.side } : {}) }))));
    const owners = (await getJson(`${rig.nodes[1]!.url}/locate/json/1b988fd7-d1e1-48ec-848e-55709511d43f/cpu`)).json.location;
    t.is(owners.length, 2);
  } finally {
    t.is(await rig.stop(), 0);
  }
  for (let i = 0; i < 3; i++) t.true(await portFree(base + i), `node ${i} stopped`);
  const again = await startRig(base, dir);
  try {
    t.is(again.hash, rig.hash);
    t.deepEqual(
      again.nodes.map((n) => n.id),
      rig.nodes.map((n) => n.id),
    );
  } finally {
    await again.stop();
  }
});
