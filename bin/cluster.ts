// `ferrite cluster`: the local multi-node rig. A JetStream-enabled nats-server and N nodes
// on loopback under one generated topology (kept in the data dir, so a rerun restarts the
// same cluster); SIGINT/SIGTERM stops them all. docker-compose.yml mirrors it. While it runs,
// commands on stdin grow and shrink it (bin/cluster-control.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTopology, topologyJson, type Topology, type TopologyNode } from '../model/topology/index.js';
import { startNatsServer } from '../transport/nats-server.js';
import { freePort, waitHttp } from '../transport/ports.js';
import { listenForCommands } from './cluster-control.js';

export interface ClusterOptions {
  nodes: number;
  writeCopies: number;
  basePort: number;
  dataDir?: string;
  logLevel: string;
}

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'ferrite.js');

/** The running rig, as the stdin commands change it. */
export class Rig {
  private readonly children = new Map<string, ChildProcess>();
  private stopping = false;

  constructor(
    readonly root: string,
    readonly natsUrl: string,
    private readonly o: ClusterOptions,
    /** The topology the cluster runs under (the new one once a resize completed). */
    public topology: Topology,
    /** Each node's data directory, by node id (`dirs.json`): positions change when nodes leave. */
    private readonly dirs: Record<string, string>,
  ) {}

  get topologyFile(): string {
    return path.join(this.root, 'topology.json');
  }

  /** Starts `node` under the topology in `file` (with `extra` flags); resolves once it answers HTTP. */
  async startNode(node: TopologyNode, file = this.topologyFile, extra: string[] = []): Promise<void> {
    const dir = (this.dirs[node.id] ??= this.freeDirName());
    this.saveDirs();
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--host', '127.0.0.1', '--port', String(node.apiport), '--data-dir', path.join(this.root, dir), '--node-id', node.id, '--topology', file, '--nats', this.natsUrl, '--log-level', this.o.logLevel, ...extra],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    this.children.set(node.id, child);
    child.on('exit', (code, signal) => !this.stopping && this.children.get(node.id) === child && console.error(`node ${node.id} exited (${signal ?? code})`));
    await waitHttp(`${urlOf(node)}/state`);
  }

  /** Stops one node gracefully (SIGTERM: it seals its buffers). */
  async stopNode(id: string): Promise<void> {
    const child = this.children.get(id);
    this.children.delete(id);
    if (child !== undefined) await stopChild(child, 'SIGTERM');
  }

  /** A resize completed: `next` is the cluster's topology, also for a rerun. */
  adopt(next: Topology): void {
    this.topology = next;
    writeFileSync(this.topologyFile, JSON.stringify(topologyJson(next), null, 2));
  }

  /** Writes `t` next to topology.json, for a node to start under before the cluster adopts it. */
  writeTopology(t: Topology): string {
    const file = path.join(this.root, `topology-${t.hash.slice(0, 16)}.json`);
    writeFileSync(file, JSON.stringify(topologyJson(t), null, 2));
    return file;
  }

  /** A port for a new node: the first after every port in use (`base-port + i` for the first nodes). */
  nextPort(): number {
    return Math.max(this.o.basePort - 1, ...this.topology.nodes.map((n) => n.apiport)) + 1;
  }

  async stopAll(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.children.values()].map((c) => stopChild(c, 'SIGTERM')));
  }

  private freeDirName(): string {
    const used = new Set(Object.values(this.dirs));
    let i = 0;
    while (used.has(`node-${i}`)) i++;
    return `node-${i}`;
  }

  private saveDirs(): void {
    writeFileSync(path.join(this.root, 'dirs.json'), JSON.stringify(this.dirs, null, 2));
  }
}

export async function runCluster(o: ClusterOptions): Promise<void> {
  const root = o.dataDir ?? mkdtempSync(path.join(tmpdir(), 'ferrite-cluster-'));
  mkdirSync(root, { recursive: true });
  const topology = clusterTopology(path.join(root, 'topology.json'), o);
  const nats = await startNatsServer(await freePort(), path.join(root, 'nats'));
  console.log(`nats ${nats.url}`);
  const rig = new Rig(root, nats.url, o, topology, nodeDirs(root, topology));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await rig.stopAll();
    await nats.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  await Promise.all(topology.nodes.map((n) => rig.startNode(n)));
  console.log(`topology ${topology.hash} (${rig.topologyFile}), write_copies ${topology.writeCopies}, data ${root}`);
  for (const n of topology.nodes) console.log(`node ${n.id} ${urlOf(n)}`);
  console.log(`ready: ${topology.nodes.length} nodes; commands on stdin: add [port] | remove <node-id> | status | stop`);
  listenForCommands(rig, process.stdin, () => void stop());
}

export function urlOf(node: TopologyNode): string {
  return `http://127.0.0.1:${node.apiport}`;
}

/** The data dir's topology when it has one (same ids, same cluster); else a new one. */
function clusterTopology(file: string, o: ClusterOptions): Topology {
  if (existsSync(file)) return parseTopology(readFileSync(file, 'utf8'));
  const nodes = Array.from({ length: o.nodes }, (_, i) => ({ id: randomUUID(), address: '127.0.0.1', port: o.basePort + i, apiport: o.basePort + i, weight: 170 }));
  const text = JSON.stringify({ write_copies: o.writeCopies, nodes }, null, 2);
  const topology = parseTopology(text); // validates before anything starts
  writeFileSync(file, text);
  return topology;
}

/** `dirs.json` when the rig wrote one; else node i's directory is `node-<i>` (rigs from before resizing). */
function nodeDirs(root: string, topology: Topology): Record<string, string> {
  const file = path.join(root, 'dirs.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return Object.fromEntries(topology.nodes.map((n, i) => [n.id, `node-${i}`]));
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.on('exit', () => resolve());
    child.kill(signal);
  });
}
