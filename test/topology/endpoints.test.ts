// Topology endpoints on real nodes: a node started with a topology file, and a standalone one.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { XMLParser } from 'fast-xml-parser';
import { buildRing, ownersOf, parseTopology, TopologyError } from '../../model/topology/index.js';
import { startNatsServer, type RunningNatsServer } from '../../transport/nats-server.js';
import { freePort } from '../../transport/ports.js';
import { getJson, startNode, tempDir, UUID, type TestNode } from '../helpers/node.js';
import { clientOwners, clientRing, clientTopologyHash, randomKey, seededRandom } from '../helpers/irondb-ring.js';

const ids = ['3a5fa1d2-0000-4000-8000-000000000001', '3a5fa1d2-0000-4000-8000-000000000002', '3a5fa1d2-0000-4000-8000-000000000003'];
const TOPOLOGY = {
  write_copies: 2,
  nodes: ids.map((id, i) => ({ id, address: '127.0.0.1', port: 18112 + i, apiport: 18112 + i, weight: 64, side: i === 0 ? 'a' : 'b' })),
};
const topology = parseTopology(JSON.stringify(TOPOLOGY));
const file = path.join(tempDir('ferrite-topology-'), 'topology.json');
writeFileSync(file, JSON.stringify(TOPOLOGY));

let n: TestNode;
let nats: RunningNatsServer;
test.before(async () => {
  nats = await startNatsServer(await freePort(), tempDir('ferrite-nats-'));
  n = await startNode({ topology: file, nodeId: ids[1]!, nats: nats.url });
});
test.after.always(async () => {
  await n?.stop();
  await nats?.stop();
});

test('/topology and /toporing serve the current topology only', async (t) => {
  const json = await getJson(`${n.url}/topology/json/${topology.hash}`);
  t.is(json.status, 200);
  t.is(json.json.write_copies, 2);
  t.deepEqual(
    json.json.nodes.map((x: { id: string; side: string; n: number }) => [x.id, x.side, x.n]),
    ids.map((id, i) => [id, i === 0 ? 'a' : 'b', 2]),
  );
  const xml = await fetch(`${n.url}/topology/xml/${topology.hash}`);
  t.regex(xml.headers.get('content-type') ?? '', /xml/);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await xml.text());
  t.is(doc.nodes.write_copies, '2');
  t.deepEqual(
    doc.nodes.node.map((x: { id: string }) => x.id),
    ids,
  );
  t.is(parseTopology(JSON.stringify(json.json)).hash, topology.hash, 'what /topology/json serves reads back as the same topology');
  const unknown = await getJson(`${n.url}/topology/json/${'0'.repeat(64)}`);
  t.is(unknown.status, 404);
  t.regex(unknown.json.error, /unknown topology/);
  const ring = await getJson(`${n.url}/toporing/json/${topology.hash}`);
  t.is(ring.json.vnodes.length, 3 * 64);
  t.is((await getJson(`${n.url}/toporing/json/abc`)).status, 404);
});

test('/locate names the ring owners of a metric, primary first', async (t) => {
  const ring = buildRing(topology);
  for (const name of ['cpu', 'disk|ST[host:a,dc:x]', 'a/b c']) {
    const r = await getJson(`${n.url}/locate/json/${UUID.toUpperCase()}/${encodeURIComponent(name)}`);
    t.is(r.status, 200);
    const canonical = name === 'disk|ST[host:a,dc:x]' ? 'disk|ST[dc:x,host:a]' : name;
    t.is(r.json.key, `${UUID}-${canonical}`);
    t.deepEqual(
      r.json.location.map((o: { id: string }) => o.id),
      ownersOf(ring, `${UUID}-${canonical}`).map((o) => o.id),
    );
  }
  t.is((await getJson(`${n.url}/locate/json/not-a-uuid/cpu`)).status, 400);
});

test('/locate/xml, /toporing and the hash agree with what a client computes from the topology', async (t) => {
  const clientNodes = TOPOLOGY.nodes.map((x) => ({ id: x.id, weight: x.weight, side: x.side as 'a' | 'b' }));
  t.is(topology.hash, clientTopologyHash(2, clientNodes));
  t.is((await getJson(`${n.url}/state`)).json.current, clientTopologyHash(2, clientNodes));
  const ring = clientRing(clientNodes);
  const served = (await getJson(`${n.url}/toporing/json/${topology.hash}`)).json.vnodes as { id: string; idx: number; location: string }[];
  t.deepEqual(served.map((v) => v.location), ring.map((s) => s.location.toString('hex')));
  t.deepEqual([...new Set(served.map((v) => v.idx))].sort((a, b) => a - b), Array.from({ length: 64 }, (_, i) => i));
  // gosnowth's LocateMetricRemote: GET path.Join("/locate/xml", uuid, metric), decoded as its Topology
  // type: <nodes n=W> of <node id address port apiport weight side/>.
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (tag) => tag === 'node' });
  const rand = seededRandom(7);
  for (let k = 0; k < 50; k++) {
    const key = randomKey(rand);
    const [uuid, name] = [key.slice(0, 36), key.slice(37)];
    const res = await fetch(`${n.url}/locate/xml/${uuid}/${encodeURIComponent(name)}`);
    t.is(res.status, 200);
    t.regex(res.headers.get('content-type')!, /xml/);
    const doc = parser.parse(await res.text()) as { nodes: { n: string; node: { id: string; address: string; port: string; apiport: string; weight: string; side: string }[] } };
    t.is(doc.nodes.n, '2');
    t.deepEqual(doc.nodes.node.map((x) => x.id), clientOwners(ring, 2, true, key), key);
    const first = TOPOLOGY.nodes.find((x) => x.id === doc.nodes.node[0]!.id)!;
    t.deepEqual(doc.nodes.node[0], { id: first.id, address: '127.0.0.1', port: String(first.port), apiport: String(first.apiport), weight: '64', side: first.side });
  }
  t.is((await getJson(`${n.url}/locate/xml/not-a-uuid/cpu`)).status, 400);
});

test('/state, /stats.json and /gossip/json carry the topology hash', async (t) => {
  t.is((await getJson(`${n.url}/state`)).json.current, topology.hash);
  t.is((await getJson(`${n.url}/stats.json`)).json.topology.current._value, topology.hash);
  const gossip = (await getJson(`${n.url}/gossip/json`)).json;
  t.deepEqual(
    gossip.map((g: { id: string }) => g.id),
    ids,
  );
  const self = gossip[1];
  t.is(self.topo_current, topology.hash);
  t.is(self.gossip_age, '0.000');
  t.is(gossip[0].gossip_age, '-1', 'a peer never heard from');
});

test('a topology of several nodes needs NATS; gossip reaches peers over it', async (t) => {
  const err = await t.throwsAsync(startNode({ topology: file, nodeId: ids[0]! }), { instanceOf: TopologyError });
  t.regex(err!.message, /needs a NATS server/);
  const peer = await startNode({ topology: file, nodeId: ids[2]!, nats: nats.url });
  try {
    let entry: { gossip_time: string; gossip_age: string; topo_current: string } | undefined;
    for (let i = 0; i < 50; i++) {
      entry = (await getJson(`${n.url}/gossip/json`)).json[2];
      if (entry!.gossip_age !== '-1') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.is(entry!.topo_current, topology.hash);
    t.true(Number(entry!.gossip_age) >= 0 && Number(entry!.gossip_age) < 5);
    t.true(Math.abs(Number(entry!.gossip_time) - Date.now() / 1000) < 5);
  } finally {
    await peer.stop();
  }
});

test('a node not in its topology refuses to start; a standalone node is a topology of one', async (t) => {
  const err = await t.throwsAsync(startNode({ topology: file, nodeId: '3a5fa1d2-0000-4000-8000-0000000000ff' }), { instanceOf: TopologyError });
  t.regex(err!.message, /is not in topology/);
  const alone = await startNode();
  try {
    const hash = (await getJson(`${alone.url}/state`)).json.current;
    const served = await getJson(`${alone.url}/topology/json/${hash}`);
    t.deepEqual(served.json.nodes.map((x: { id: string }) => x.id), [alone.node.identity]);
    t.deepEqual((await getJson(`${alone.url}/locate/json/${UUID}/cpu`)).json.location.map((o: { id: string }) => o.id), [alone.node.identity]);
  } finally {
    await alone.stop();
  }
});
