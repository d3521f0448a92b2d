// The consistent-hash ring, built the way IRONdb builds it (irondb-reference §8.1), so a
// client routing by topology picks a real owner: each node contributes `weight` virtual
// nodes at SHA-256(node id ASCII zero-padded to 36 bytes ‖ vnode index as u16 BE, 0 … weight−1,
// as gosnowth's topology.go hashes them);
// in sided topologies the top bit of a vnode's location is 0 on side a and 1 on side b.
// A metric sits at SHA-256(lower(uuid) "-" canonical name); its owners are found walking
// clockwise, skipping nodes already chosen (and, when sided, vnodes on the other side than
// the location's top bit), flipping the location's top bit after each pick. The first
// owner is the primary.
import { createHash } from 'node:crypto';
import type { MetricKey } from '../types.js';
import type { Topology, TopologyNode } from './topology.js';

export interface VirtualNode {
  node: TopologyNode;
  /** Index among the node's virtual nodes, 0 … weight−1 (the u16 that is hashed). */
  idx: number;
  location: Buffer;
}

export interface Ring {
  topology: Topology;
  /** Sorted by location. */
  vnodes: readonly VirtualNode[];
  sided: boolean;
}

const ID_BYTES = 36;
const TOP_BIT = 0x80;

export function buildRing(topology: Topology): Ring {
  const sided = topology.nodes.some((n) => n.side !== null);
  const vnodes: VirtualNode[] = [];
  for (const node of topology.nodes) {
    for (let idx = 0; idx < node.weight; idx++) vnodes.push({ node, idx, location: vnodeLocation(node, idx, sided) });
  }
  vnodes.sort((a, b) => Buffer.compare(a.location, b.location));
  return { topology, vnodes, sided };
}

function vnodeLocation(node: TopologyNode, idx: number, sided: boolean): Buffer {
  const input = Buffer.alloc(ID_BYTES + 2);
  input.write(node.id.slice(0, ID_BYTES), 0, 'ascii');
  input.writeUInt16BE(idx, ID_BYTES);
  const location = createHash('sha256').update(input).digest();
  if (sided) location[0] = node.side === 'b' ? location[0]! | TOP_BIT : location[0]! & ~TOP_BIT;
  return location;
}

export function keyLocation(key: MetricKey | string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The `write_copies` owners of a key, primary first. */
export function ownersOf(ring: Ring, key: MetricKey | string): TopologyNode[] {
  return ownersAt(ring, keyLocation(key));
}

/** The `write_copies` owners of a key at `location` (32 bytes; consumed), primary first. */
export function ownersAt(ring: Ring, location: Buffer): TopologyNode[] {
  const want = ring.topology.writeCopies;
  const chosen: TopologyNode[] = [];
  let strictSides = ring.sided;
  while (chosen.length < want) {
    const pick = walk(ring, location, chosen, strictSides);
    if (pick === null) {
      if (!strictSides) break; // fewer nodes than copies: validation refuses such topologies
      strictSides = false; // a side ran out of unchosen nodes
      continue;
    }
    chosen.push(pick);
    location[0] = location[0]! ^ TOP_BIT;
  }
  return chosen;
}

/** The first acceptable vnode clockwise from `location`, or null after a full turn. */
function walk(ring: Ring, location: Buffer, chosen: readonly TopologyNode[], strictSides: boolean): TopologyNode | null {
  const { vnodes } = ring;
  const start = lowerBound(vnodes, location);
  const side = location[0]! & TOP_BIT ? 'b' : 'a';
  for (let k = 0; k < vnodes.length; k++) {
    const v = vnodes[(start + k) % vnodes.length]!;
    if (chosen.includes(v.node)) continue;
    if (strictSides && v.node.side !== side) continue;
    return v.node;
  }
  return null;
}

function lowerBound(vnodes: readonly VirtualNode[], location: Buffer): number {
  let lo = 0;
  let hi = vnodes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Buffer.compare(vnodes[mid]!.location, location) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
