// POST /topology/<hash> on a real node: loading IRONdb XML and our JSON, the hash check,
// bad bodies, and loaded topologies surviving a restart.
import test from 'ava';
import { parseTopology } from '../../model/topology/index.js';
import { getJson, startNode, tempDir } from '../helpers/node.js';

const ids = ['5b0c0a1e-0000-4000-8000-000000000001', '5b0c0a1e-0000-4000-8000-000000000002', '5b0c0a1e-0000-4000-8000-000000000003'];
const XML = `<?xml version="1.0"?>
<nodes write_copies="2">
${ids.map((id, i) => `  <node id="${id}" address="10.0.0.${i + 1}" port="8112" apiport="8112" weight="32"/>`).join('\n')}
</nodes>`;
const xmlHash = parseTopology(XML).hash;
const JSON_TOPOLOGY = JSON.stringify({ write_copies: 1, nodes: [{ id: ids[0], address: '10.0.0.1', port: 8112, weight: 16 }] });
const jsonHash = parseTopology(JSON_TOPOLOGY).hash;

async function post(url: string, body: string, type = 'application/xml'): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': type } });
  return { status: res.status, json: await res.json() };
}

test('a loaded topology is served by GET /topology and survives a restart', async (t) => {
  const dir = tempDir();
  let n = await startNode({}, dir);
  try {
    t.is((await getJson(`${n.url}/topology/${xmlHash}`)).status, 404, 'not known before it is loaded');
    const loaded = await post(`${n.url}/topology/${xmlHash}`, XML);
    t.is(loaded.status, 200, JSON.stringify(loaded.json));
    t.like(loaded.json, { hash: xmlHash, loaded: true, nodes: 3, write_copies: 2 });
    t.is((await post(`${n.url}/topology/${xmlHash}`, XML)).status, 200, 'loading again is a 200, as in IRONdb');
    t.is((await post(`${n.url}/topology/${jsonHash.toUpperCase()}`, JSON_TOPOLOGY, 'application/json')).status, 200, 'JSON bodies and upper-case hashes load too');

    await n.stop(false);
    n = await startNode({}, dir);
    const json = await getJson(`${n.url}/topology/json/${xmlHash}`);
    t.is(json.status, 200);
    t.deepEqual(
      json.json.nodes.map((x: { id: string; address: string; weight: number }) => [x.id, x.address, x.weight]),
      ids.map((id, i) => [id, `10.0.0.${i + 1}`, 32]),
    );
    const plain = await getJson(`${n.url}/topology/${xmlHash}`);
    t.is(plain.status, 200);
    t.is(parseTopology(JSON.stringify(plain.json)).hash, xmlHash, 'GET /topology/<hash> reads back as the same topology');
    t.is((await getJson(`${n.url}/topology/json/${jsonHash}`)).json.write_copies, 1);
    const xml = await fetch(`${n.url}/topology/xml/${xmlHash}`);
    t.is(parseTopology(await xml.text()).hash, xmlHash);
    t.is((await getJson(`${n.url}/toporing/json/${xmlHash}`)).json.vnodes.length, 3 * 32, 'the ring of a loaded topology');
  } finally {
    await n.stop();
  }
});

test('bad loads are 4xx naming the problem, and load nothing', async (t) => {
  const n = await startNode();
  try {
    const other = '0'.repeat(63) + '1';
    const mismatch = await post(`${n.url}/topology/${other}`, XML);
    t.is(mismatch.status, 400);
    t.is(mismatch.json.code, 'FER_ERR_TOPOLOGY_HASH_MISMATCH');
    t.true(mismatch.json.error.includes(other) && mismatch.json.error.includes(xmlHash), mismatch.json.error);
    t.is((await getJson(`${n.url}/topology/${other}`)).status, 404);

    const short = await post(`${n.url}/topology/abc`, XML);
    t.is(short.status, 400);
    t.regex(short.json.error, /64 hex/);

    const empty = await post(`${n.url}/topology/${xmlHash}`, '');
    t.is(empty.status, 400);
    t.regex(empty.json.error, /body is empty/);

    const broken = await post(`${n.url}/topology/${xmlHash}`, '<nodes write_copies="2"><node id=');
    t.is(broken.status, 400);
    t.is(broken.json.code, 'FER_ERR_BAD_TOPOLOGY');
    t.regex(broken.json.error, /malformed topology XML/);

    const tooFew = await post(`${n.url}/topology/${xmlHash}`, JSON.stringify({ write_copies: 3, nodes: [{ id: ids[0], address: 'a' }] }), 'application/json');
    t.is(tooFew.status, 400);
    t.regex(tooFew.json.error, /write_copies 3 is more than the 1 nodes/);
    t.is((await getJson(`${n.url}/topology/${xmlHash}`)).status, 404, 'nothing was loaded');
  } finally {
    await n.stop();
  }
});
