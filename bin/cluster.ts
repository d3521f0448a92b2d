// `ferrite cluster`: the local multi-node rig. A JetStream-enabled nats-server and N nodes
// on loopback under one generated topology (kept in the data dir, so a rerun restarts the
// same cluster); SIGINT/SIGTERM stops them all. docker-compose.yml mirrors it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTopology, type Topology } from '../model/topology/index.js';
import { startNatsServer } from '../transport/nats-server.js';
import { freePort, waitHttp } from '../transport/ports.js';

export interface ClusterOptions {
  nodes: number;
  writeCopies: number;
  basePort: number;
  dataDir?: string;
  logLevel: string;
}

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'ferrite.js');

export async function runCluster(o: ClusterOptions): Promise<void> {
  const root = o.dataDir ?? mkdtempSync(path.join(tmpdir(), 'ferrite-cluster-'));
  mkdirSync(root, { recursive: true });
  const topologyFile = path.join(root, 'topology.json');
  const topology = clusterTopology(topologyFile, o);
  const nats = await startNatsServer(await freePort(), path.join(root, 'nats'));
  console.log(`nats ${nats.url}`);
  const children = topology.nodes.map((n, i) =>
    spawn(
      process.execPath,
      [BIN, 'serve', '--host', '127.0.0.1', '--port', String(n.apiport), '--data-dir', path.join(root, `node-${i}`), '--node-id', n.id, '--topology', topologyFile, '--nats', nats.url, '--log-level', o.logLevel],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    ),
  );
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    await Promise.all(children.map((c) => stopChild(c, signal)));
    await nats.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGTERM'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  children.forEach((c, i) => c.on('exit', (code, signal) => !stopping && console.error(`node ${i} exited (${signal ?? code})`)));
  await Promise.all(topology.nodes.map((n) => waitHttp(`http://127.0.0.1:${n.apiport}/state`)));
  console.log(`topology ${topology.hash} (${topologyFile}), write_copies ${topology.writeCopies}, data ${root}`);
  for (const n of topology.nodes) console.log(`node ${n.id} http://127.0.0.1:${n.apiport}`);
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

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.on('exit', () => resolve());
    child.kill(signal);
  });
}
