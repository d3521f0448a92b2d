// Topology endpoints on real nodes: a node started with a topology file, and a standalone one.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { XMLParser } from 'fast-xml-parser';
import { buildRing, ownersOf, parseTopology, TopologyError } from '../../model/topology/index.js';
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
test.before(async () => {
  n = await startNode({ topology: file, nodeId: ids[1]! });
});
test.after.always(async () => {
  await n?.stop();
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
  const [self] = (await getJson(`${n.url}/gossip/json`)).json;
  t.is(self.id, ids[1]);
  t.is(self.topo_current, topology.hash);
  t.is(typeof self.gossip_age, 'string');
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
