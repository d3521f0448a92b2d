// A change of topology (model/topology/change.ts, shares.ts movedShare): the plan `ferrite
// resize` and `ferrite cluster` build from the current topology, what it refuses, and the share
// of the key space it moves, checked against where keys land.
import test from 'ava';
import { buildRing, movedShare, ownersOf, parseAddedNode, parseTopology, planChange, TopologyError, type Topology } from '../../model/topology/index.js';

const ids = Array.from({ length: 6 }, (_, i) => `7dffe44b-0000-4000-8000-${String(i + 1).padStart(12, '0')}`);
const topology = (w: number, n: number, weight = 32): Topology =>
  parseTopology(JSON.stringify({ write_copies: w, nodes: ids.slice(0, n).map((id, i) => ({ id, address: '10.0.0.1', port: 8112 + i, weight })) }));
const made = () => ids[5]!;

test('parseAddedNode: address:port, an optional id (lower-cased) and side', (t) => {
  t.deepEqual(parseAddedNode('10.0.0.9:8120'), { address: '10.0.0.9', port: 8120, id: null, side: null });
  t.deepEqual(parseAddedNode(`host.example:8112,${ids[4]!.toUpperCase()},b`), { address: 'host.example', port: 8112, id: ids[4], side: 'b' });
  for (const bad of ['10.0.0.9', '10.0.0.9:x', `10.0.0.9:8112,${ids[4]},c`, `10.0.0.9:8112,${ids[4]},a,extra`]) t.throws(() => parseAddedNode(bad), { instanceOf: TopologyError }, bad);
});

test('planChange: nodes added at the end (weight of the first node), removed ones left out, made ids reported', (t) => {
  const three = topology(2, 3, 40);
  const grown = planChange(three, [parseAddedNode('10.0.0.2:8112'), parseAddedNode(`10.0.0.3:8112,${ids[3]}`)], [], made);
  t.deepEqual(grown.next.nodes.map((n) => n.id), [...ids.slice(0, 3), ids[5], ids[3]]);
  t.deepEqual(grown.madeIds, [ids[5]]);
  t.true(grown.next.nodes.every((n) => n.weight === 40));
  t.is(grown.next.writeCopies, 2);
  const shrunk = planChange(topology(2, 4), [], [ids[1]!.toUpperCase()], made);
  t.deepEqual(shrunk.next.nodes.map((n) => n.id), [ids[0], ids[2], ids[3]]);
  t.deepEqual(shrunk.removed.map((n) => n.id), [ids[1]]);
  t.is(planChange(three, [parseAddedNode(`10.0.0.2:8112,${ids[3]}`)], [], made, 7).next.nodes[3]!.weight, 7, '--weight');
  // Replacing a node (add one, remove one) in one rebalance.
  t.deepEqual(planChange(three, [parseAddedNode(`10.0.0.2:8112,${ids[3]}`)], [ids[0]!], made).next.nodes.map((n) => n.id), [ids[1], ids[2], ids[3]]);
});

test('planChange refuses, naming the problem', (t) => {
  const three = topology(2, 3);
  const refused = (add: string[], remove: string[], message: RegExp) => t.throws(() => planChange(three, add.map(parseAddedNode), remove, made), { instanceOf: TopologyError, message });
  refused([], [], /nothing to change/);
  refused([], [ids[4]!], new RegExp(`node ${ids[4]} is not in the current topology ${three.hash}`));
  refused([], [ids[0]!, ids[0]!], /named twice/);
  refused([], [ids[0]!, ids[1]!], /removes 2 node\(s\).*at most write_copies − 1 = 1/);
  refused(['10.0.0.1:8113'], [], new RegExp(`address 10.0.0.1:8113 is already node ${ids[1]}'s`));
  refused(['10.0.0.1:8113'], [ids[1]!], /leaves, but serves until the rebalance is done/);
  refused([`10.0.0.5:8112,${ids[2]}`], [], new RegExp(`node ${ids[2]} is already in the current topology`));
  refused(['10.0.0.5:8112', '10.0.0.5:8112'], [], /address 10.0.0.5:8112 is already node/);
  refused([`10.0.0.5:8112,not-a-uuid`], [], /not a lower-case, non-nil uuid/);
  refused([`10.0.0.5:8112,${ids[4]},a`], [], /every node has a side or none/);
});

const keys = Array.from({ length: 6000 }, (_, i) => `1b988fd7-d1e1-48ec-848e-55709511d43f-metric.${i}`);

for (const [name, from, add, remove] of [
  ['3 → 4 at W=2', topology(2, 3), 1, 0],
  ['4 → 3 at W=2', topology(2, 4), 0, 1],
  ['4 → 5 at W=3', topology(3, 4), 1, 0],
] as const) {
  test(`movedShare matches where keys land: ${name}`, (t) => {
    const to = planChange(from, Array.from({ length: add }, (_, i) => parseAddedNode(`10.0.0.9:${9000 + i},${ids[5]}`)), ids.slice(0, remove), made).next;
    const [a, b] = [buildRing(from), buildRing(to)];
    let metrics = 0;
    let copies = 0;
    for (const key of keys) {
      const before = new Set(ownersOf(a, key).map((n) => n.id));
      const gained = ownersOf(b, key).filter((n) => !before.has(n.id)).length;
      if (gained > 0) metrics++;
      copies += gained;
    }
    const share = movedShare(a, b);
    t.true(Math.abs(share.metrics - metrics / keys.length) < 0.025, `metrics: ${share.metrics} vs sampled ${metrics / keys.length}`);
    t.true(Math.abs(share.copies - copies / keys.length / to.writeCopies) < 0.025, `copies: ${share.copies} vs sampled ${copies / keys.length / to.writeCopies}`);
    t.true(share.metrics > 0 && share.metrics < 1);
  });
}

test('movedShare of a topology to itself is nothing', (t) => {
  const ring = buildRing(topology(2, 3));
  t.deepEqual(movedShare(ring, ring), { metrics: 0, copies: 0 });
});
