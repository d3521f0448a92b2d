// Helpers for rebalance tests on the real rig (test/helpers/cluster.ts): a node that joins,
// and the reads and requests the tests make.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseTopology } from '../../model/topology/index.js';
import { freePort } from '../../transport/ports.js';
import type { TestCluster } from './cluster.js';
import { getJson, spawnNode, tempDir, UUID, type ChildNode } from './node.js';

export const LOCAL = { 'x-svc-proxied': '1' };

export async function raw(url: string, name: string): Promise<unknown> {
  const res = await fetch(`${url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=100000.000`, { headers: LOCAL });
  return res.json();
}

export async function post(url: string, body?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }) });
  return { status: res.status, json: await res.json() };
}

export async function owners(url: string, name: string): Promise<string[]> {
  const r = await getJson(`${url}/locate/json/${UUID}/${encodeURIComponent(name)}`);
  return (r.json.location as { id: string }[]).map((o) => o.id);
}

export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A topology of `nodes` on loopback (the test rig's weights), as JSON, and its hash. */
export function topologyOf(nodes: readonly { id: string; port: number }[], writeCopies = 2): { json: string; hash: string } {
  const json = JSON.stringify({ write_copies: writeCopies, nodes: nodes.map((m) => ({ id: m.id, address: '127.0.0.1', port: m.port, apiport: m.port, weight: 32 })) });
  return { json, hash: parseTopology(json).hash };
}

/** A fourth node, started under the grown topology (its current one, with `extraArgs`), and that topology. */
export async function growBy(c: TestCluster, extraArgs: string[] = []): Promise<{ node: ChildNode; id: string; json: string; hash: string; port: number; dataDir: string; file: string }> {
  const id = randomUUID();
  const port = await freePort();
  const { json } = topologyOf([...c.members, { id, port }]);
  const dir = tempDir('ferrite-rebalance-');
  const file = path.join(dir, 'topology.json');
  writeFileSync(file, json);
  const node = await spawnNode(path.join(dir, 'data'), ['--port', String(port), '--node-id', id, '--topology', file, '--nats', c.nats.url, ...extraArgs]);
  return { node, id, json, hash: parseTopology(json).hash, port, dataDir: path.join(dir, 'data'), file };
}

export async function stateOf(url: string): Promise<string> {
  return (await getJson(`${url}/rebalance/state`)).json.state;
}

