// On a real cluster (nats-server and three `ferrite serve` processes, W=2), every metric is
// stored on exactly the owners an IRONdb client computes from the topology (§8.1), and each
// node's /locate/xml and topology hash say so.
import test from 'ava';
import { startCluster } from './helpers/cluster.js';
import { clientOwners, clientRing, clientTopologyHash } from './helpers/irondb-ring.js';
import { getJson, killSpawnedNodes, mLine, put, UUID } from './helpers/node.js';

test.after.always(killSpawnedNodes);

test('data lands on the owners a client computes; /locate/xml and the hash agree', async (t) => {
  const c = await startCluster(3, 2);
  try {
    // The helper's topology: file order, weight 32, no sides.
    const nodes = c.members.map((m) => ({ id: m.id, weight: 32 }));
    const ring = clientRing(nodes);
    const hash = clientTopologyHash(2, nodes);
    for (const m of c.members) t.is((await getJson(`${m.url}/state`)).json.current, hash);
    const names = Array.from({ length: 40 }, (_, i) => `place.${i}|ST[k:${i % 7}]`);
    const put1 = await put(c.members[0]!.url, names.map((name) => mLine('100.000', name, 'n', '1')).join('\n'));
    t.is(put1.status, 200);
    await c.settled();
    for (const name of names) {
      const owners = clientOwners(ring, 2, false, `${UUID}-${name}`);
      for (const m of c.members) {
        const local = await fetch(`${m.url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0&end_ts=1000`, { headers: { 'x-svc-proxied': '1' } });
        t.is(local.status, owners.includes(m.id) ? 200 : 404, `${name} on ${m.id} (owners ${owners.join()})`);
        const located = await (await fetch(`${m.url}/locate/xml/${UUID}/${encodeURIComponent(name)}`)).text();
        t.deepEqual([...located.matchAll(/<node id="([^"]+)"/g)].map((x) => x[1]), owners, name);
      }
    }
  } finally {
    await c.stop();
  }
});
