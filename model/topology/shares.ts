// Each node's share of the key space, for the console's Topology page, and the share a change
// of topology moves (`ferrite resize`): the ring is cut at every virtual node, and each arc is
// credited to the owners a key inside it would get, as ownersAt walks for such a key.
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
  for (const { size, at } of arcs([ring])) {
    ownersAt(ring, at).forEach((node, k) => {
      if (k === 0) primary.set(node.id, (primary.get(node.id) ?? 0n) + size);
      copies.set(node.id, (copies.get(node.id) ?? 0n) + size);
    });
  }
  return ring.topology.nodes.map((n) => ({ id: n.id, primary: fraction(primary.get(n.id) ?? 0n), copies: fraction(copies.get(n.id) ?? 0n) }));
}

/** What a change of topology moves (`ferrite resize` prints it). */
export interface MovedShare {
  /** Fraction of keys that get an owner they did not have. */
  metrics: number;
  /** Fraction of all copies (W per key, under `to`) that land on a node that did not hold one. */
  copies: number;
}

/** The share of the key space whose owners change from ring `from` to ring `to`. */
export function movedShare(from: Ring, to: Ring): MovedShare {
  let metrics = 0n;
  let copies = 0n;
  for (const { size, at } of arcs([from, to])) {
    const before = new Set(ownersAt(from, Buffer.from(at)).map((n) => n.id));
    const gained = ownersAt(to, at).filter((n) => !before.has(n.id)).length;
    if (gained > 0) metrics += size;
    copies += size * BigInt(gained);
  }
  return { metrics: fraction(metrics), copies: fraction(copies / BigInt(to.topology.writeCopies)) };
}

/**
 * The arcs between consecutive cuts of `rings`, each with a location inside it (its last key,
 * standing for all its keys: every key of an arc finds the same owners on every ring). Later
 * copies are looked for from the key's location with its top bit flipped, so the flipped image
 * of every vnode cuts too, as does the half where the bit flips.
 */
function* arcs(rings: readonly Ring[]): Iterable<{ size: bigint; at: Buffer }> {
  const cuts = new Set<bigint>([0n, HALF, SPACE]);
  for (const ring of rings) {
    for (const v of ring.vnodes) {
      const at = toBigInt(v.location);
      cuts.add(at).add(at ^ HALF);
    }
  }
  const points = [...cuts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 1; i < points.length; i++) yield { size: points[i]! - points[i - 1]!, at: toLocation(points[i]! - 1n) };
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
