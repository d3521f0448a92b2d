// `ferrite cluster` run as a child process for tests: its printed lines, its stdin commands.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { BIN } from './node.js';

export interface Rig {
  /** The nodes printed at start: `node <id> <url>`. */
  nodes: { id: string; url: string }[];
  hash: string;
  /** Every line printed on stdout so far. */
  lines: string[];
  /** Sends one command line on the rig's stdin. */
  send(command: string): void;
  /** Resolves with the first line from `from` on (index into `lines`) matching `pattern`. */
  waitFor(pattern: RegExp, from?: number, timeoutMs?: number): Promise<RegExpExecArray>;
  stop(): Promise<number | null>;
}

/** Starts the rig and reads the node URLs it prints. */
export async function startRig(basePort: number, dataDir: string, nodes = 3): Promise<Rig> {
  const child = spawn(process.execPath, [BIN, 'cluster', '--nodes', String(nodes), '--write-copies', '2', '--base-port', String(basePort), '--data-dir', dataDir], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines: string[] = [];
  let partial = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  const waitFor = async (pattern: RegExp, from = 0, timeoutMs = 60_000): Promise<RegExpExecArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const line of lines.slice(from)) {
        const m = pattern.exec(line);
        if (m !== null) return m;
      }
      if (child.exitCode !== null) throw new Error(`rig exited with ${child.exitCode}: ${err}`);
      if (Date.now() > deadline) throw new Error(`no line matching ${pattern} within ${timeoutMs} ms; stdout: ${lines.slice(-20).join('\n')}; stderr: ${err.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await waitFor(/^ready: /);
  const hash = (await waitFor(/^topology ([0-9a-f]{64})/))[1]!;
  const printed = lines.filter((l) => /^node \S+ \S+$/.test(l)).map((l) => l.split(' '));
  return {
    nodes: printed.map(([, id, url]) => ({ id: id!, url: url! })),
    hash,
    lines,
    send: (command) => child.stdin!.write(`${command}\n`),
    waitFor,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

export async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A base port with `count` free ports from it. */
export async function freeBase(count = 3): Promise<number> {
  for (;;) {
    // Below Linux's ephemeral range (32768–60999): there the tests' own outgoing connections take
    // ports between this check and the rig's listen (an EADDRINUSE seen in CI).
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    let free = true;
    for (let i = 0; i < count && free; i++) free = await portFree(base + i);
    if (free) return base;
  }
}
