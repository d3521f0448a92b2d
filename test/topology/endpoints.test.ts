// Topology endpoints on real nodes: a node started with a topology file, and a standalone one.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { XMLParser } from 'fast-xml-parser';
import { buildRing, ownersOf, parseTopology, TopologyError } from '../../model/topology/index.js';
import { startNatsServer, type RunningNatsServer } from '../../transport/nats-server.js';
import { freePort } from '../../transport/ports.js';
import { getJson, startNode, tempDir, UUID, type TestNode } from '../helpers/node.js';

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
  const xml = await fetch(`${n.url}/locate/xml/${UUID}/cpu`);
  t.regex(await xml.text(), /<location key="1b988fd7-d1e1-48ec-848e-55709511d43f-cpu"><node id="/);
  t.is((await getJson(`${n.url}/locate/json/not-a-uuid/cpu`)).status, 400);
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
