// Placement agrees with what IRONdb clients compute (irondb-reference §8.1): ferrite's ring
// owners and topology hash equal an independent implementation (test/helpers/irondb-ring.ts)
// for 10,000+ random keys on several topologies: weights, sides, write copies.
import test from 'ava';
import { buildRing, ownersOf, parseTopology } from '../../model/topology/index.js';
import { clientOwners, clientRing, clientTopologyHash, randomKey, seededRandom, type ClientNode } from '../helpers/irondb-ring.js';

const id = (i: number) => `3a5fa1d2-${String(i).padStart(4, '0')}-4000-8000-${String(1000 + i * 7).padStart(12, '0')}`;

interface Case {
  name: string;
  writeCopies: number;
  nodes: ClientNode[];
}

const CASES: Case[] = [
  { name: 'one node', writeCopies: 1, nodes: [{ id: id(0), weight: 170 }] },
  { name: '3 nodes W=2 equal weights', writeCopies: 2, nodes: [0, 1, 2].map((i) => ({ id: id(i), weight: 32 })) },
  { name: '5 nodes W=3 mixed weights', writeCopies: 3, nodes: [0, 1, 2, 3, 4].map((i) => ({ id: id(i), weight: [170, 32, 64, 1, 300][i]! })) },
  { name: '4 nodes W=4', writeCopies: 4, nodes: [0, 1, 2, 3].map((i) => ({ id: id(i), weight: 50 + i })) },
  { name: 'sided 6 nodes W=2', writeCopies: 2, nodes: [0, 1, 2, 3, 4, 5].map((i) => ({ id: id(i), weight: 40, side: i % 2 ? 'b' : 'a' })) },
  { name: 'sided 7 nodes W=3 uneven sides', writeCopies: 3, nodes: [0, 1, 2, 3, 4, 5, 6].map((i) => ({ id: id(i), weight: 20 + i * 10, side: i < 3 ? 'a' : 'b' })) },
];

const KEYS_PER_CASE = 2_000;

function ferriteTopology(c: Case) {
  return parseTopology(JSON.stringify({ write_copies: c.writeCopies, nodes: c.nodes.map((n) => ({ ...n, address: '10.0.0.1' })) }));
}

test(`owners equal a client's for ${CASES.length * KEYS_PER_CASE} random keys`, (t) => {
  const rand = seededRandom(19);
  let compared = 0;
  for (const c of CASES) {
    const ring = buildRing(ferriteTopology(c));
    const client = clientRing(c.nodes);
    const sided = c.nodes.some((n) => n.side !== undefined);
    let mismatches = 0;
    for (let k = 0; k < KEYS_PER_CASE; k++) {
      const key = randomKey(rand);
      const ours = ownersOf(ring, key).map((n) => n.id);
      const theirs = clientOwners(client, c.writeCopies, sided, key);
      if (ours.join() !== theirs.join() && mismatches++ < 3) t.fail(`${c.name}: ${key}: ferrite ${ours.join()} client ${theirs.join()}`);
      compared++;
    }
    t.is(mismatches, 0, c.name);
  }
  t.true(compared >= 10_000);
});

test('vnode indexes run 0 … weight−1, at the locations a client hashes', (t) => {
  for (const c of CASES) {
    const ring = buildRing(ferriteTopology(c));
    const client = clientRing(c.nodes);
    t.deepEqual(ring.vnodes.map((v) => v.location.toString('hex')), client.map((s) => s.location.toString('hex')), c.name);
    for (const n of c.nodes) {
      const idx = ring.vnodes.filter((v) => v.node.id === n.id).map((v) => v.idx).sort((a, b) => a - b);
      t.deepEqual(idx, Array.from({ length: n.weight }, (_, i) => i), `${c.name} ${n.id}`);
    }
  }
});

test('the topology hash is the one clients recompute', (t) => {
  for (const c of CASES) t.is(ferriteTopology(c).hash, clientTopologyHash(c.writeCopies, c.nodes), c.name);
  // W = 2 leaves the copy count out of the hash (IRONdb's backward compatibility), other W put it in
  const three = CASES[1]!.nodes;
  t.not(clientTopologyHash(2, three), clientTopologyHash(3, three));
  t.not(clientTopologyHash(1, three), clientTopologyHash(3, three));
});
