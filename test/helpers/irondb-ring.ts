// An independent implementation of the placement IRONdb clients compute (irondb-reference
// §8.1, as gosnowth's topology.go does it), written for the tests from the description, not
// from ferrite's model/topology: ferrite's owners must equal these for any key.
import { createHash } from 'node:crypto';

export interface ClientNode {
  id: string;
  weight: number;
  side?: 'a' | 'b';
}

interface Slot {
  location: Buffer;
  id: string;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

function u16(n: number): Buffer {
  return Buffer.from([(n >> 8) & 0xff, n & 0xff]);
}

/** The topology hash a client recomputes: id, 00 00, weight [, side]; then W unless W is 2. */
export function clientTopologyHash(writeCopies: number, nodes: readonly ClientNode[]): string {
  const sided = nodes.some((n) => n.side !== undefined);
  const parts: Buffer[] = [];
  for (const n of nodes) {
    parts.push(Buffer.from(n.id), u16(0), u16(n.weight));
    if (sided) parts.push(u16(n.side === 'a' ? 1 : 2));
  }
  if (writeCopies !== 2) {
    parts.push(Buffer.alloc(38), u16(writeCopies));
    if (sided) parts.push(u16(0));
  }
  return sha256(Buffer.concat(parts)).toString('hex');
}

/** Every vnode: sha256 of a 38-byte buffer (id, then vnode i = 0 … weight−1 in the last two bytes). */
export function clientRing(nodes: readonly ClientNode[]): Slot[] {
  const slots: Slot[] = [];
  for (const n of nodes) {
    for (let i = 0; i < n.weight; i++) {
      const buf = Buffer.alloc(38);
      buf.write(n.id, 'latin1');
      buf[36] = i >> 8;
      buf[37] = i & 0xff;
      const location = sha256(buf);
      if (n.side === 'a') location[0] = location[0]! & 0x7f;
      if (n.side === 'b') location[0] = location[0]! | 0x80;
      slots.push({ location, id: n.id });
    }
  }
  return slots.sort((x, y) => Buffer.compare(x.location, y.location));
}

/** The vnode locations of one node, by index (what /toporing lists). */
export function clientVnodes(node: ClientNode, sided: boolean): string[] {
  return clientRing([{ ...node, ...(sided ? {} : { side: undefined }) }]).map((s) => s.location.toString('hex'));
}

/** The W owners of `key`, primary first, found by a plain linear walk. */
export function clientOwners(ring: readonly Slot[], writeCopies: number, sided: boolean, key: string): string[] {
  const location = sha256(key);
  const owners: string[] = [];
  for (let copy = 0; copy < writeCopies; copy++) {
    const wantHigh = (location[0]! & 0x80) !== 0;
    let start = ring.findIndex((s) => Buffer.compare(s.location, location) >= 0);
    if (start < 0) start = 0;
    let picked: string | null = null;
    for (let k = 0; k < ring.length && picked === null; k++) {
      const slot = ring[(start + k) % ring.length]!;
      if (sided && ((slot.location[0]! & 0x80) !== 0) !== wantHigh) continue;
      if (!owners.includes(slot.id)) picked = slot.id;
    }
    if (picked === null) break;
    owners.push(picked);
    location[0] = location[0]! ^ 0x80;
  }
  return owners;
}

/** A small seeded generator, so a failing key can be reproduced. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A random `<lower uuid>-<metric name>` key as clients build it. */
export function randomKey(rand: () => number): string {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
  const uuid = `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
  const name = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => hex(1 + Math.floor(rand() * 6))).join('.');
  return `${uuid}-${name}${rand() < 0.3 ? `|ST[host:${hex(3)}]` : ''}`;
}
