// A change of topology (a rebalance): whether it is allowed, and building one from the current
// topology and the nodes added and removed (`ferrite resize`, `ferrite cluster`'s add/remove).
import { parseTopology, topologyJson } from './parse.js';
import { TopologyError, type Side, type Topology, type TopologyNode } from './topology.js';

/**
 * Why moving from `current` to `next` is not allowed (null: it is), after IRONdb's caveats
 * (administration/resizing-clusters): at most W−1 nodes removed per rebalance, since
 * removing W could take every copy of some metric away at once; no change of sidedness,
 * which needs a migration; and not to the topology already current.
 */
export function refusalOf(current: Topology, next: Topology): string | null {
  if (next.hash === current.hash) return 'it is the current topology';
  const kept = new Set(next.nodes.map((n) => n.id));
  const removal = removalRefusal(current, current.nodes.filter((n) => !kept.has(n.id)).map((n) => n.id));
  if (removal !== null) return removal;
  const sided = (t: Topology) => t.nodes.some((n) => n.side !== null);
  if (sided(current) !== sided(next)) return `it ${sided(next) ? 'adds' : 'removes'} sides; changing sidedness needs a migration to a new cluster, not a rebalance`;
  return null;
}

/** Why removing `removed` from `current` in one rebalance is not allowed (null: it is). */
function removalRefusal(current: Topology, removed: readonly string[]): string | null {
  if (removed.length < current.writeCopies) return null;
  return `it removes ${removed.length} node(s) (${removed.join(', ')}) but at most write_copies − 1 = ${current.writeCopies - 1} may be removed in one rebalance`;
}

/** A node to add: where it listens, and its id (null: a new one is made). */
export interface AddedNode {
  address: string;
  port: number;
  id: string | null;
  side: Side | null;
}

export interface TopologyChange {
  current: Topology;
  next: Topology;
  added: TopologyNode[];
  removed: TopologyNode[];
  /** Ids made for added nodes given without one. */
  madeIds: string[];
}

/**
 * Parses `-a`'s `address:port,node-id[,side]` (IRONdb's resize_cluster takes `ip,uuid[,side]`;
 * the port is ours, as every ferrite node serves one HTTP port). The id may be left out.
 */
export function parseAddedNode(text: string): AddedNode {
  const [where = '', id = '', side = '', ...rest] = text.split(',').map((s) => s.trim());
  const m = /^(.+):(\d{1,5})$/.exec(where);
  if (m === null || rest.length > 0) throw new TopologyError(`'${text}' is not address:port[,node-id[,side]] (e.g. 10.0.0.4:8112,3a5fa1d2-0000-4000-8000-000000000004)`);
  if (side !== '' && side !== 'a' && side !== 'b') throw new TopologyError(`'${text}': the side must be a or b, not '${side}'`);
  return { address: m[1]!, port: Number(m[2]), id: id === '' ? null : id.toLowerCase(), side: side === '' ? null : side };
}

/**
 * The topology `current` becomes with `add` appended (in order) and `remove` left out. Refused
 * with a TopologyError naming the problem: nothing to change, an unknown or repeated node id,
 * an address:port used twice (a leaving node still serves until the rebalance is done, so its
 * address is taken too), a change refusalOf refuses, or a topology that does not validate.
 * Added nodes get `weight` virtual nodes (default: the first current node's weight).
 */
export function planChange(current: Topology, add: readonly AddedNode[], remove: readonly string[], newId: () => string, weight = current.nodes[0]!.weight): TopologyChange {
  if (add.length === 0 && remove.length === 0) throw new TopologyError('nothing to change: name nodes to add (-a) or remove (-r)');
  const byId = new Map(current.nodes.map((n) => [n.id, n]));
  const removing = new Set<string>();
  for (const raw of remove) {
    const id = raw.toLowerCase();
    if (!byId.has(id)) throw new TopologyError(`node ${raw} is not in the current topology ${current.hash} (its nodes: ${current.nodes.map((n) => n.id).join(', ')})`);
    if (removing.has(id)) throw new TopologyError(`node ${raw} is named twice to remove`);
    removing.add(id);
  }
  // Before the new topology is built: with W nodes gone it may not even validate.
  const removal = removalRefusal(current, [...removing]);
  if (removal !== null) throw new TopologyError(`this change is refused: ${removal}`);
  const taken = new Map(current.nodes.map((n) => [`${n.address}:${n.apiport}`, n.id]));
  const madeIds: string[] = [];
  const added: TopologyNode[] = add.map((a) => {
    const id = a.id ?? newId();
    if (a.id === null) madeIds.push(id);
    if (byId.has(id)) throw new TopologyError(`node ${id} is already in the current topology`);
    const where = `${a.address}:${a.port}`;
    const holder = taken.get(where);
    if (holder !== undefined) throw new TopologyError(`address ${where} is already node ${holder}'s${removing.has(holder) ? ' (it leaves, but serves until the rebalance is done)' : ''}`);
    taken.set(where, id);
    return { id, address: a.address, port: a.port, apiport: a.port, weight, side: a.side };
  });
  const nodes = [...current.nodes.filter((n) => !removing.has(n.id)), ...added];
  const next = parseTopology(JSON.stringify(topologyJson({ writeCopies: current.writeCopies, nodes })));
  const refusal = refusalOf(current, next);
  if (refusal !== null) throw new TopologyError(`this change is refused: ${refusal}`);
  return { current, next, added, removed: current.nodes.filter((n) => removing.has(n.id)), madeIds };
}
