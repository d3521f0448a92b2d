// Each node's share of the key space, for the console's Topology page: the ring is cut at
// every virtual node, and each arc is credited to the owners a key inside it would get, as
// ownersAt walks for such a key.
import { ownersAt, type Ring } from './ring.js';

const SPACE = 1n << 256n;
const HALF = 1n << 255n;

export interface NodeShare {
  id: string;
  /** Fraction of keys whose primary owner is this node (sums to 1 over the nodes). */
  primary: number;
  /** Fraction of keys this node holds a copy of (sums to write_copies). */
  copies: number;
}

export function ringShares(ring: Ring): NodeShare[] {
  const primary = new Map<string, bigint>();
  const copies = new Map<string, bigint>();
  // Later copies are looked for from the key's location with its top bit flipped, so the
  // flipped image of every vnode cuts the ring too, as does the half where the bit flips.
  const cuts = new Set<bigint>([0n, HALF, SPACE]);
  for (const v of ring.vnodes) {
    const at = toBigInt(v.location);
    cuts.add(at).add(at ^ HALF);
  }
  const points = [...cuts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 1; i < points.length; i++) {
    const size = points[i]! - points[i - 1]!;
    // Every key in (points[i-1], points[i]] finds the same owners; its last key stands for them.
    const owners = ownersAt(ring, toLocation(points[i]! - 1n));
    owners.forEach((node, k) => {
      if (k === 0) primary.set(node.id, (primary.get(node.id) ?? 0n) + size);
      copies.set(node.id, (copies.get(node.id) ?? 0n) + size);
    });
  }
  return ring.topology.nodes.map((n) => ({ id: n.id, primary: fraction(primary.get(n.id) ?? 0n), copies: fraction(copies.get(n.id) ?? 0n) }));
}

function toBigInt(location: Buffer): bigint {
  return BigInt(`0x${location.toString('hex')}`);
}

function toLocation(n: bigint): Buffer {
  return Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
}

/** A fraction of the whole space, to about 15 significant digits. */
function fraction(part: bigint): number {
  return Number((part * 10n ** 15n) / SPACE) / 1e15;
}
