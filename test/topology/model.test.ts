// Topology files, validation and the consistent-hash ring (irondb-reference §8.1).
import { createHash } from 'node:crypto';
import test from 'ava';
import { buildRing, ownersOf, parseTopology, TopologyError, type Topology } from '../../model/topology/index.js';

const ids = Array.from({ length: 12 }, (_, i) => `7dffe44b-0000-4000-8000-${String(i + 1).padStart(12, '0')}`);
const jsonTopo = (w: number, n: number, extra: (i: number) => Record<string, unknown> = () => ({})) =>
  JSON.stringify({ write_copies: w, nodes: ids.slice(0, n).map((id, i) => ({ id, address: `10.0.0.${i + 1}`, port: 8112, apiport: 8112, weight: 32, ...extra(i) })) });
const keys = Array.from({ length: 3000 }, (_, i) => `1b988fd7-d1e1-48ec-848e-55709511d43f-metric.${i}`);

test('JSON, node-array JSON and XML forms give the same topology and hash', (t) => {
  const fromJson = parseTopology(jsonTopo(2, 3));
  const xml = `<?xml version="1.0"?>\n<nodes write_copies="2">${ids
    .slice(0, 3)
    .map((id, i) => `<node id="${id}" address="10.0.0.${i + 1}" port="8112" apiport="8112" weight="32"/>`)
    .join('')}</nodes>`;
  const array = JSON.stringify(fromJson.nodes.map((n) => ({ ...n, n: 2 })));
  t.regex(fromJson.hash, /^[0-9a-f]{64}$/);
  t.is(parseTopology(xml).hash, fromJson.hash);
  t.is(parseTopology(xml.replace('write_copies', 'n')).hash, fromJson.hash, 'older XML spells W as n=');
  t.is(parseTopology(array).hash, fromJson.hash);
  t.is(parseTopology(jsonTopo(2, 3, () => ({ address: 'elsewhere' }))).hash, fromJson.hash, 'addresses may change');
  t.not(parseTopology(jsonTopo(2, 3, () => ({ weight: 33 }))).hash, fromJson.hash);
  t.not(parseTopology(jsonTopo(3, 3)).hash, fromJson.hash);
  const defaults = parseTopology(JSON.stringify({ write_copies: 1, nodes: [{ id: ids[0], address: 'h' }] })).nodes[0]!;
  t.deepEqual([defaults.port, defaults.apiport, defaults.weight, defaults.side], [8112, 8112, 170, null]);
});

test('invalid topologies are refused with the reason', (t) => {
  const refuse = (text: string, pattern: RegExp) => t.regex(t.throws(() => parseTopology(text), { instanceOf: TopologyError })!.message, pattern);
  refuse(jsonTopo(4, 3), /write_copies 4 is more than the 3 nodes/);
  refuse(jsonTopo(11, 12), /above the limit of 10/);
  refuse(jsonTopo(0, 3), /positive integer/);
  refuse(jsonTopo(2, 3, (i) => (i === 2 ? { id: ids[0] } : {})), /appears twice/);
  refuse(jsonTopo(2, 3, (i) => (i === 1 ? { id: ids[1]!.toUpperCase() } : {})), /lower-case, non-nil uuid/);
  refuse(jsonTopo(2, 3, (i) => (i === 1 ? { id: '00000000-0000-0000-0000-000000000000' } : {})), /non-nil/);
  refuse(jsonTopo(2, 3, () => ({ side: 'a' })), /side b has no nodes/);
  refuse(jsonTopo(2, 3, (i) => (i === 0 ? { side: 'a' } : {})), /every node has a side or none/);
  refuse(jsonTopo(4, 5, (i) => ({ side: i === 0 ? 'b' : 'a' })), /side b has 1 node\(s\), fewer than the 2 copies/);
  refuse(jsonTopo(2, 3, () => ({ side: 'c' })), /side must be "a" or "b"/);
  refuse(jsonTopo(2, 3, () => ({ port: 'x' })), /port must be an integer/);
  refuse('<nodes write_copies="1"><node id="x"', /malformed topology XML/);
  refuse('{"nodes": []}', /write_copies/);
  refuse('{"write_copies": 1, "nodes": []}', /at least one node/);
});

test('virtual nodes sit at SHA-256(id zero-padded to 36 bytes, u16 BE index 0 … weight−1)', (t) => {
  const ring = buildRing(parseTopology(jsonTopo(1, 1)));
  t.is(ring.vnodes.length, 32);
  const input = Buffer.alloc(38);
  input.write(ids[0]!, 0, 'ascii');
  input.writeUInt16BE(0, 36);
  const expected = createHash('sha256').update(input).digest('hex');
  t.is(ring.vnodes.find((v) => v.idx === 0)!.location.toString('hex'), expected);
  t.deepEqual([...new Set(ring.vnodes.map((v) => v.idx))].sort((a, b) => a - b), Array.from({ length: 32 }, (_, i) => i));
  t.true(ring.vnodes.every((v, i) => i === 0 || Buffer.compare(ring.vnodes[i - 1]!.location, v.location) < 0), 'sorted');
});

test('owners: W distinct nodes, deterministic, primaries in proportion to weight', (t) => {
  const topo = parseTopology(jsonTopo(2, 3, (i) => ({ weight: i === 0 ? 128 : 64 })));
  const ring = buildRing(topo);
  const primaries = new Map<string, number>();
  for (const key of keys) {
    const owners = ownersOf(ring, key);
    t.is(new Set(owners.map((o) => o.id)).size, 2);
    t.deepEqual(ownersOf(ring, key), owners);
    primaries.set(owners[0]!.id, (primaries.get(owners[0]!.id) ?? 0) + 1);
  }
  const share = (id: string) => (primaries.get(id) ?? 0) / keys.length;
  t.true(Math.abs(share(ids[0]!) - 0.5) < 0.1, `heavy node share ${share(ids[0]!)}`);
  t.true(Math.abs(share(ids[1]!) - 0.25) < 0.1, `light node share ${share(ids[1]!)}`);
});

test('adding a node moves only its share of primaries', (t) => {
  const before = buildRing(parseTopology(jsonTopo(2, 4)));
  const after = buildRing(parseTopology(jsonTopo(2, 5)));
  const moved = keys.filter((k) => ownersOf(before, k)[0]!.id !== ownersOf(after, k)[0]!.id).length / keys.length;
  t.true(moved > 0.1 && moved < 0.3, `moved ${moved}`);
});

test('sided rings keep copies on both sides, the extra one on the primary side', (t) => {
  const sided: Topology = parseTopology(jsonTopo(3, 6, (i) => ({ side: i % 2 ? 'b' : 'a' })));
  const ring = buildRing(sided);
  for (const key of keys.slice(0, 500)) {
    const owners = ownersOf(ring, key);
    const sides = owners.map((o) => o.side);
    t.is(new Set(owners).size, 3);
    t.true(sides.includes('a') && sides.includes('b'), key);
    t.is(sides.filter((s) => s === owners[0]!.side).length, 2, key);
  }
  const twoCopies = buildRing(parseTopology(jsonTopo(2, 6, (i) => ({ side: i % 2 ? 'b' : 'a' }))));
  for (const key of keys.slice(0, 500)) t.deepEqual(ownersOf(twoCopies, key).map((o) => o.side).sort(), ['a', 'b']);
});
