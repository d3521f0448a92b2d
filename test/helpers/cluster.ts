// A real cluster for tests: a JetStream nats-server on loopback and N `ferrite serve`
// processes under one topology, each of which a test can SIGKILL and restart.
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startNatsServer, type RunningNatsServer } from '../../transport/nats-server.js';
import { freePort } from '../../transport/ports.js';
import { getJson, spawnNode, stopChild, tempDir, type ChildNode } from './node.js';

export interface Member {
  id: string;
  port: number;
  url: string;
  dataDir: string;
  running: ChildNode | null;
}

export interface TestCluster {
  members: Member[];
  nats: RunningNatsServer;
  /** SIGKILLs nats-server, deletes its store (every message it held), and starts it again. */
  wipeNats(): Promise<void>;
  /** Starts nats-server again on its port with its store (after a test killed it), SIGKILLing it first if it still runs. */
  restartNats(): Promise<void>;
  /** SIGKILL: no flush, no goodbye. */
  kill(i: number): Promise<void>;
  /** Starts member `i` (again), with `extraArgs` added to its flags this time (e.g. `--rebuild`). */
  start(i: number, extraArgs?: string[]): Promise<void>;
  /** Waits until no node (of the members, and `others` by URL) holds unconfirmed journal messages for a peer. */
  settled(timeoutMs?: number, others?: string[]): Promise<void>;
  stop(): Promise<void>;
}

/** `nodeArgs` are extra `ferrite serve` flags for every node (e.g. `--peer-timeout-ms 2000`). */
export async function startCluster(nodes = 3, writeCopies = 2, nodeArgs: string[] = []): Promise<TestCluster> {
  const root = tempDir('ferrite-cluster-test-');
  const natsPort = await freePort();
  let nats = await startNatsServer(natsPort, path.join(root, 'nats'));
  const members: Member[] = [];
  for (let i = 0; i < nodes; i++) {
    const port = await freePort();
    members.push({ id: randomUUID(), port, url: `http://127.0.0.1:${port}`, dataDir: path.join(root, `node-${i}`), running: null });
  }
  const topologyFile = path.join(root, 'topology.json');
  writeFileSync(topologyFile, JSON.stringify({ write_copies: writeCopies, nodes: members.map((m) => ({ id: m.id, address: '127.0.0.1', port: m.port, apiport: m.port, weight: 32 })) }));
  const start = async (i: number, extraArgs: string[] = []) => {
    const m = members[i]!;
    m.running = await spawnNode(m.dataDir, ['--port', String(m.port), '--node-id', m.id, '--topology', topologyFile, '--nats', nats.url, ...nodeArgs, ...extraArgs]);
  };
  await Promise.all(members.map((_, i) => start(i)));
  await waitForGossip(members);
  return {
    members,
    get nats() {
      return nats;
    },
    async wipeNats() {
      nats.child.kill('SIGKILL');
      await nats.stop();
      rmSync(path.join(root, 'nats'), { recursive: true, force: true });
      nats = await startNatsServer(natsPort, path.join(root, 'nats'));
    },
    async restartNats() {
      nats.child.kill('SIGKILL');
      await nats.stop();
      nats = await startNatsServer(natsPort, path.join(root, 'nats'));
    },
    start,
    async kill(i) {
      const m = members[i]!;
      m.running?.child.kill('SIGKILL');
      await m.running?.exited;
      m.running = null;
    },
    async settled(timeoutMs = 30_000, others: string[] = []) {
      const deadline = Date.now() + timeoutMs;
      const urls = () => [...members.filter((m) => m.running !== null).map((m) => m.url), ...others];
      for (;;) {
        const states = await Promise.all(urls().map((url) => getJson(`${url}/state`)));
        const busy = states.some((s) => s.json.replication.journal_pending !== 0 || Object.values(s.json.replication.peers as Record<string, { unconfirmed_messages: number }>).some((p) => p.unconfirmed_messages > 0));
        if (!busy) return;
        if (Date.now() > deadline) throw new Error(`cluster not settled after ${timeoutMs} ms: ${JSON.stringify(states.map((s) => s.json.replication))}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      // Every member and nats-server are stopped even when one member will not: a stuck
      // shutdown must fail its test, never leave processes that keep the test run alive.
      let stuck: unknown = null;
      for (const m of members) if (m.running) await stopChild(m.running).catch((error: unknown) => (stuck ??= error));
      nats.child.kill('SIGCONT');
      await nats.stop();
      rmSync(root, { recursive: true, force: true });
      if (stuck !== null) throw stuck;
    },
  };
}

/** Every node has heard every other (so reads prefer live owners from the start). */
async function waitForGossip(members: Member[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const views = await Promise.all(members.map((m) => getJson(`${m.url}/gossip/json`)));
    if (views.every((v) => (v.json as { gossip_age: string }[]).every((e) => e.gossip_age !== '-1'))) return;
    if (Date.now() > deadline) throw new Error('gossip did not converge');
    await new Promise((r) => setTimeout(r, 100));
  }
}
