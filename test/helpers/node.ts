// Starts real ferrite nodes for integration tests: a real RocksDB in a temp directory
// and a real HTTP listener on a loopback port chosen by the OS.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startNode as bootNode } from '../../actors/boot.js';
import type { FerriteNode } from '../../actors/node/node.js';
import { buildServer } from '../../http/server.js';
import { resolveConfig, type FerriteConfig } from '../../model/config.js';

export interface TestNode {
  url: string;
  node: FerriteNode;
  dataDir: string;
  /** Stops the server and node; keeps the data dir unless `remove`. */
  stop(remove?: boolean): Promise<void>;
}

/** The RocksDB directory of a node's only shard (tests that read or damage stored data start nodes with `shards: 1`). */
export function onlyShardDir(dataDir: string): string {
  return path.join(dataDir, 'shards', '0');
}

export function tempDir(prefix = 'ferrite-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export async function startNode(overrides: Partial<FerriteConfig> = {}, dataDir = tempDir()): Promise<TestNode> {
  // The suite's nodes have no write latency budget (a slow CI machine must not shed test writes);
  // test/load-shedding.test.ts turns it on. Spawned nodes get the same through ava's environment.
  const config = resolveConfig({ host: '127.0.0.1', port: 0, logLevel: 'silent', partitions: 4, writeLatencyBudgetMs: 0, ...overrides, dataDir });
  const log = pino({ level: config.logLevel });
  const node = await bootNode(config, log);
  const app = buildServer(node, log);
  const address = await app.listen({ host: config.host, port: 0 });
  return {
    url: address,
    node,
    dataDir,
    async stop(remove = true) {
      await app.close();
      await node.stop();
      if (remove) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const BIN = path.resolve(process.cwd(), 'bin/ferrite.js');

export interface ChildNode {
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Every line the node has written to stdout so far (its log), kept up to date. */
  log: string[];
}

const children = new Set<ChildProcess>();

/**
 * Kills every node `spawnNode` started that is still running. Test files that spawn
 * nodes register it with `test.after.always`, so a failed assertion never leaves a
 * server behind holding the test worker (and CI) open.
 */
export function killSpawnedNodes(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

/**
 * Runs `ferrite serve` as a separate process (on `runtime`, a node binary) and waits until it
 * listens. `wrap` runs it under another command (e.g. `strace -f -o file`).
 */
export async function spawnNode(dataDir: string, extraArgs: string[] = [], runtime = process.execPath, wrap: string[] = []): Promise<ChildNode> {
  const command = [...wrap, runtime, BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--log-level', 'info', ...extraArgs];
  const child = spawn(command[0]!, command.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const log: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`node did not start: ${stderr}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      // Only whole lines are kept back, so a node that logs a lot costs linear time here.
      const lines = (buffered + d.toString()).split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        log.push(line);
        if (!line.includes('ferrite listening')) continue;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { address: string }).address);
      }
    });
    child.on('exit', (code) => reject(new Error(`node exited with ${code} before listening: ${stderr}`)));
  });
  return { url, child, exited, log };
}

/**
 * SIGTERMs a child node and waits for it to exit; a node that has not exited after `graceMs`
 * is SIGKILLed, so one stuck shutdown fails its own test instead of hanging the whole run.
 * SIGCONT first: a process a test froze with SIGSTOP would never act on SIGTERM.
 */
export async function stopChild(node: ChildNode, graceMs = 60_000): Promise<void> {
  node.child.kill('SIGCONT');
  node.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
  const outcome = await Promise.race([node.exited, late]);
  clearTimeout(timer);
  if (outcome !== 'late') return;
  node.child.kill('SIGKILL');
  await node.exited;
  throw new Error(`node did not exit within ${graceMs} ms of SIGTERM (killed); its last log lines:\n${node.log.slice(-20).join('\n')}`);
}

export const UUID = '1b988fd7-d1e1-48ec-848e-55709511d43f';
export const CHECK = `example.com\`http\`c_123_987654::http\`${UUID}`;

/** An M line for the standard test check. */
export function mLine(ts: string, name: string, type: string, value: string, check = CHECK): string {
  return ['M', ts, check, name, type, value].join('\t');
}

export async function put(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/raw`, { method: 'PUT', body, headers });
  return { status: res.status, json: await res.json() };
}

export async function getJson(url: string): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(url);
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}
