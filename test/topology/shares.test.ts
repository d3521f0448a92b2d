// Ring shares (the console's Topology page): exact arcs, checked against where keys land.
import test from 'ava';
import { buildRing, ownersOf, parseTopology, ringShares } from '../../model/topology/index.js';

const ids = Array.from({ length: 4 }, (_, i) => `7dffe44b-0000-4000-8000-${String(i + 1).padStart(12, '0')}`);
const topology = (w: number, weights: number[], sides?: string[]) =>
  parseTopology(JSON.stringify({ write_copies: w, nodes: weights.map((weight, i) => ({ id: ids[i], address: 'h', weight, ...(sides ? { side: sides[i] } : {}) })) }));
const keys = Array.from({ length: 4000 }, (_, i) => `1b988fd7-d1e1-48ec-848e-55709511d43f-metric.${i}`);

/** Each node's fraction of `keys` as primary owner and as any owner. */
function sampled(ring: ReturnType<typeof buildRing>): Map<string, { primary: number; copies: number }> {
  const out = new Map(ring.topology.nodes.map((n) => [n.id, { primary: 0, copies: 0 }]));
  for (const key of keys) {
    ownersOf(ring, key).forEach((o, k) => {
      const s = out.get(o.id)!;
      if (k === 0) s.primary += 1 / keys.length;
      s.copies += 1 / keys.length;
    });
  }
  return out;
}

for (const [name, topo] of [
  ['unsided, unequal weights', topology(2, [32, 64, 16])],
  ['sided', topology(2, [32, 32, 32, 32], ['a', 'b', 'a', 'b'])],
  ['three copies of four', topology(3, [20, 20, 40, 20])],
] as const) {
  test(`shares match where keys land: ${name}`, (t) => {
    const ring = buildRing(topo);
    const shares = ringShares(ring);
    t.is(Math.round(shares.reduce((a, s) => a + s.primary, 0) * 1e9) / 1e9, 1);
    t.is(Math.round(shares.reduce((a, s) => a + s.copies, 0) * 1e9) / 1e9, topo.writeCopies);
    const seen = sampled(ring);
    for (const s of shares) {
      // 4000 keys: a fraction's sampling error is below 0.03 with room to spare.
      t.true(Math.abs(s.primary - seen.get(s.id)!.primary) < 0.03, `${s.id} primary ${s.primary} vs ${seen.get(s.id)!.primary}`);
      t.true(Math.abs(s.copies - seen.get(s.id)!.copies) < 0.03, `${s.id} copies ${s.copies} vs ${seen.get(s.id)!.copies}`);
    }
  });
}

test('a node of one holds the whole space', (t) => {
  t.deepEqual(ringShares(buildRing(topology(1, [170]))), [{ id: ids[0]!, primary: 1, copies: 1 }]);
});
