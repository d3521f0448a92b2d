// The cluster's shape (irondb-reference §8.1): nodes with a uuid, address, ports, weight
// and optional side, plus `write_copies` W, identified by a SHA-256 hash. A standalone
// node is a topology of one.
import { createHash } from 'node:crypto';

export type Side = 'a' | 'b';

export interface TopologyNode {
  /** Lower-case, non-nil uuid. */
  id: string;
  address: string;
  /** Cluster (replication) port and API port; ferrite serves both on one HTTP port. */
  port: number;
  apiport: number;
  /** Virtual nodes on the ring. */
  weight: number;
  side: Side | null;
}

export interface Topology {
  /** 64 hex digits. */
  hash: string;
  writeCopies: number;
  /** In file order (the order is part of the hash). */
  nodes: readonly TopologyNode[];
}

export class TopologyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TopologyError';
  }
}

/** IRONdb's limits: more copies than this are refused (0.19.23). */
export const MAX_WRITE_COPIES = 10;
export const DEFAULT_PORT = 8112;
export const DEFAULT_WEIGHT = 170;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NIL = '00000000-0000-0000-0000-000000000000';

/** Validates and hashes a topology; every problem is a TopologyError naming it. */
export function makeTopology(writeCopies: number, nodes: TopologyNode[]): Topology {
  if (nodes.length === 0) throw new TopologyError('a topology needs at least one node');
  if (!Number.isInteger(writeCopies) || writeCopies < 1) throw new TopologyError(`write_copies must be a positive integer, got ${writeCopies}`);
  if (writeCopies > MAX_WRITE_COPIES) throw new TopologyError(`write_copies ${writeCopies} is above the limit of ${MAX_WRITE_COPIES}`);
  if (writeCopies > nodes.length) throw new TopologyError(`write_copies ${writeCopies} is more than the ${nodes.length} nodes`);
  const seen = new Set<string>();
  for (const n of nodes) {
    if (!UUID.test(n.id) || n.id === NIL) throw new TopologyError(`node id '${n.id}' is not a lower-case, non-nil uuid`);
    if (seen.has(n.id)) throw new TopologyError(`node id ${n.id} appears twice`);
    seen.add(n.id);
    if (n.address.length === 0) throw new TopologyError(`node ${n.id} has no address`);
    for (const [field, v] of [['port', n.port], ['apiport', n.apiport]] as const) {
      if (!Number.isInteger(v) || v < 1 || v > 65535) throw new TopologyError(`node ${n.id}: ${field} ${v} is not a port`);
    }
    if (!Number.isInteger(n.weight) || n.weight < 1 || n.weight > 65535) throw new TopologyError(`node ${n.id}: weight ${n.weight} must be an integer in 1..65535`);
  }
  checkSides(writeCopies, nodes);
  return { hash: topologyHash(writeCopies, nodes), writeCopies, nodes };
}

/** Sides are all or nothing, both non-empty, and each side can hold its share of copies. */
function checkSides(writeCopies: number, nodes: TopologyNode[]): void {
  const sided = nodes.filter((n) => n.side !== null).length;
  if (sided === 0) return;
  if (sided !== nodes.length) throw new TopologyError('either every node has a side or none does');
  const perSide = Math.ceil(writeCopies / 2);
  for (const side of ['a', 'b'] as const) {
    const count = nodes.filter((n) => n.side === side).length;
    if (count === 0) throw new TopologyError(`side ${side} has no nodes; a sided topology needs both sides`);
    if (count < perSide) throw new TopologyError(`side ${side} has ${count} node(s), fewer than the ${perSide} copies it must hold`);
  }
}

/**
 * What identifies a topology, computed as IRONdb clients recompute it (gosnowth's
 * topology.go; irondb-reference §8.1): SHA-256 over, per node in order, the id's ASCII, two
 * zero bytes and the weight (u16 BE), plus the side (u16 BE, a = 1, b = 2) when the topology
 * is sided; then, unless W is 2 (IRONdb's C code kept the two-copy hash unchanged), 38 zero
 * bytes and W (u16 BE), plus two zero bytes when sided. Addresses and ports are left out, so
 * a node may move.
 */
function topologyHash(writeCopies: number, nodes: readonly TopologyNode[]): string {
  const sided = nodes.some((n) => n.side !== null);
  const h = createHash('sha256');
  for (const n of nodes) {
    h.update(Buffer.from(n.id, 'ascii')).update(u16(0)).update(u16(n.weight));
    if (sided) h.update(u16(n.side === 'a' ? 1 : 2));
  }
  if (writeCopies !== 2) {
    h.update(Buffer.alloc(38)).update(u16(writeCopies));
    if (sided) h.update(u16(0));
  }
  return h.digest('hex');
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

/** The topology of a node running alone: itself, one copy. */
export function standaloneTopology(id: string, address: string, port: number): Topology {
  return makeTopology(1, [{ id, address, port: port || DEFAULT_PORT, apiport: port || DEFAULT_PORT, weight: DEFAULT_WEIGHT, side: null }]);
}
