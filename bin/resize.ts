// `ferrite resize`: grows or shrinks a running cluster, as IRONdb's resize_cluster does
// (administration/resizing-clusters). It reads the current topology from a bootstrap node,
// builds the new one (nodes added with -a, removed with -r), prints the change, and with
// --yes loads the new topology on every node of the old and new cluster (POST /topology/<hash>)
// and activates the rebalance on every old node (POST /rebalance/activate/<hash>); --wait then
// follows /state `rebalance` on every node until all are IDLE under the new topology.
// `ferrite cluster` (bin/cluster.ts) runs the same steps for its add/remove commands.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { buildRing, movedShare, parseAddedNode, parseTopology, planChange, topologyJson, TopologyError, type Topology, type TopologyChange, type TopologyNode } from '../model/topology/index.js';

/** Bad input or a cluster that cannot be resized now: the message says which. */
export class ResizeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResizeError';
  }
}

export interface ResizeOptions {
  /** A node of the cluster: http://host:port, or host[:port] (port 8112 by default). */
  bootstrap: string;
  /** `address:port[,node-id[,side]]` per node to add. */
  add: string[];
  /** Node ids to remove. */
  remove: string[];
  /** Virtual nodes of each added node (default: the first current node's weight). */
  weight?: number;
  /** Apply the change; without it nothing is changed (a dry run). */
  yes: boolean;
  /** Follow the rebalance until it is done. */
  wait: boolean;
  /** Write the new topology (JSON) here, to start new nodes with. */
  out?: string;
  /** Between two progress lines of --wait (ms). */
  pollMs?: number;
}

type Print = (line: string) => void;

/** Plans the change, prints it, and with `yes` applies it (and with `wait` follows it). */
export async function runResize(o: ResizeOptions, print: Print = console.log): Promise<TopologyChange> {
  const current = await currentTopology(baseUrl(o.bootstrap));
  const change = plan(current, o);
  for (const line of describeChange(change)) print(line);
  if (o.out !== undefined) {
    writeFileSync(o.out, JSON.stringify(topologyJson(change.next), null, 2) + '\n');
    print(`new topology written to ${o.out}`);
    for (const n of change.added) print(`start ${n.id} with: ferrite serve --node-id ${n.id} --topology ${o.out} --join --port ${n.apiport} --nats <url>`);
  }
  if (!o.yes) {
    print('dry run: nothing changed (run again with --yes to load and activate it)');
    return change;
  }
  await applyChange(change, print);
  if (o.wait) await waitForRebalance(change, print, o.pollMs);
  return change;
}

/** The topology `bootstrap` runs under; refused while a rebalance is under way there. */
export async function currentTopology(bootstrap: string): Promise<Topology> {
  const state = (await call(bootstrap, 'GET', '/rebalance/state')) as { current: string; next: string; state: string };
  if (state.next !== '-') throw new ResizeError(`${bootstrap} is in a rebalance to ${state.next} (${state.state}); wait until it is done (ferrite resize --wait shows it) or abort it (POST /rebalance/deactivate/${state.next})`);
  const doc = (await call(bootstrap, 'GET', `/topology/${state.current}`)) as { write_copies: number; nodes: object[] };
  return parseTopology(JSON.stringify({ write_copies: doc.write_copies, nodes: doc.nodes }));
}

function plan(current: Topology, o: ResizeOptions): TopologyChange {
  try {
    return planChange(current, o.add.map(parseAddedNode), o.remove, randomUUID, o.weight);
  } catch (error) {
    if (error instanceof TopologyError) throw new ResizeError(error.message);
    throw error;
  }
}

/** The lines `ferrite resize` prints about a change. */
export function describeChange(change: TopologyChange): string[] {
  const { current, next } = change;
  const moved = movedShare(buildRing(current), buildRing(next));
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return [
    `current topology ${current.hash}: ${current.nodes.length} nodes, write_copies ${current.writeCopies}`,
    ...current.nodes.map((n) => `  ${n.id} ${n.address}:${n.apiport} weight ${n.weight}${n.side === null ? '' : ` side ${n.side}`}${change.removed.includes(n) ? '  (removed)' : ''}`),
    ...change.added.map((n) => `+ ${n.id} ${n.address}:${n.apiport} weight ${n.weight}${n.side === null ? '' : ` side ${n.side}`}${change.madeIds.includes(n.id) ? '  (new id, made here)' : ''}`),
    `new topology ${next.hash}: ${next.nodes.length} nodes (${change.added.length} added, ${change.removed.length} removed)`,
    `moves: ${pct(moved.metrics)} of the metrics get a new owner; ${pct(moved.copies)} of the copies are sent`,
  ];
}

/**
 * Loads the new topology on every node of both topologies, then activates it on every old node.
 * An old node that cannot load it stops everything before any activation; a new node not running
 * yet is reported (the rebalance waits at VOTE until it runs under the new topology).
 */
export async function applyChange(change: TopologyChange, print: Print): Promise<void> {
  const body = JSON.stringify(topologyJson(change.next));
  const added = new Set(change.added.map((n) => n.id));
  for (const node of everyNode(change)) {
    try {
      await call(nodeUrl(node), 'POST', `/topology/${change.next.hash}`, body);
      print(`loaded on ${node.id} (${nodeUrl(node)})`);
    } catch (error) {
      if (!added.has(node.id)) throw new ResizeError(`loading the new topology on ${node.id} (${nodeUrl(node)}) failed, nothing was activated: ${(error as Error).message}`);
      print(`not loaded on new node ${node.id} (${nodeUrl(node)}): ${(error as Error).message}; start it with --node-id ${node.id}, --join and the new topology; the rebalance waits for it`);
    }
  }
  for (const node of change.current.nodes) {
    await call(nodeUrl(node), 'POST', `/rebalance/activate/${change.next.hash}`).catch((error: unknown) => {
      throw new ResizeError(`activating on ${node.id} (${nodeUrl(node)}) failed: ${(error as Error).message}; nodes activated before it stay in the rebalance (abort with POST /rebalance/deactivate/${change.next.hash})`);
    });
    print(`activated on ${node.id}`);
  }
}

/** Prints every node's progress now and then until every one is IDLE under the new topology. */
export async function waitForRebalance(change: TopologyChange, print: Print, pollMs = 2_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    const states = await Promise.all(everyNode(change).map(async (n) => [n, await progressOf(n)] as const));
    print(states.map(([n, p]) => `${n.id.slice(0, 8)} ${p === null ? 'not answering' : summary(p)}`).join(' | '));
    if (states.every(([, p]) => p !== null && p.current === change.next.hash && p.next === '-' && p.state === 'TOPO_REBALANCE_IDLE')) {
      const sent = states.reduce((a, [, p]) => ({ metrics: a.metrics + (p?.metrics_sent ?? 0), bytes: a.bytes + (p?.bytes_sent ?? 0) }), { metrics: 0, bytes: 0 });
      const seconds = (Date.now() - started) / 1000;
      print(`rebalance complete: every node runs ${change.next.hash}; ${sent.metrics} metrics and ${(sent.bytes / 1e6).toFixed(2)} MB sent in ${seconds.toFixed(1)} s`);
      if (change.removed.length > 0) print(`stop the removed nodes now: ${change.removed.map((n) => n.id).join(', ')}`);
      return;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** What `/state` `rebalance` says (the fields --wait prints). */
interface Progress {
  current: string;
  next: string;
  state: string;
  percent: number;
  metrics_sent: number;
  bytes_sent: number;
}

async function progressOf(node: TopologyNode): Promise<Progress | null> {
  try {
    const state = (await call(nodeUrl(node), 'GET', '/state')) as { rebalance?: Progress };
    return state.rebalance ?? null;
  } catch {
    return null;
  }
}

function summary(p: Progress): string {
  const state = p.state.replace('TOPO_REBALANCE_', '');
  if (p.next === '-') return `${state} on ${p.current.slice(0, 8)}`;
  return `${state} ${p.percent}% sent ${p.metrics_sent} metrics ${(p.bytes_sent / 1e6).toFixed(2)} MB`;
}

/** Every node of the old and new topology, old ones first. */
function everyNode(change: TopologyChange): TopologyNode[] {
  return [...change.current.nodes, ...change.added];
}

export function nodeUrl(node: TopologyNode): string {
  return `http://${node.address}:${node.apiport}`;
}

/** `http://host:port` as given, or `host[:port]` (IRONdb's -b form) with the default port. */
export function baseUrl(bootstrap: string): string {
  if (/^https?:\/\//.test(bootstrap)) return bootstrap.replace(/\/+$/, '');
  return `http://${/:\d+$/.test(bootstrap) ? bootstrap : `${bootstrap}:8112`}`;
}

/** One request to a node; rejects with what the node said (its JSON error) or why it did not answer. */
async function call(base: string, method: 'GET' | 'POST', path: string, body?: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, { method, ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }), signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new ResizeError(`${base} did not answer ${method} ${path}: ${(error as Error).message}`);
  }
  const text = await res.text();
  if (res.status >= 400) {
    let reason = text;
    try {
      reason = (JSON.parse(text) as { error?: string }).error ?? text;
    } catch {
      /* not JSON: the text as it is */
    }
    throw new ResizeError(`${method} ${base}${path}: ${res.status} ${reason}`);
  }
  return JSON.parse(text) as unknown;
}
