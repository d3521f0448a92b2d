// Running a JetStream-enabled nats-server (Debian's `nats-server`) on loopback, for
// `ferrite cluster` and the cluster tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';

export interface RunningNatsServer {
  url: string;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export async function startNatsServer(port: number, storeDir: string, binary = 'nats-server'): Promise<RunningNatsServer> {
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const failed = new Promise<never>((_, reject) => {
    child.on('error', (e) => reject(new Error(`cannot run ${binary}: ${e.message} (Debian: apt-get install nats-server)`)));
    child.on('exit', (code) => reject(new Error(`${binary} exited with ${code}: ${stderr.trim()}`)));
  });
  failed.catch(() => {}); // observed below; after startup an exit is reported by stop()
  await Promise.race([waitForPort(port), failed]);
  return {
    url: `nats://127.0.0.1:${port}`,
    child,
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // A server that does not act on SIGTERM (JetStream flushing a wedged store) is killed:
      // its callers are tearing down and must not wait on it forever.
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nats-server did not listen on port ${port} within ${timeoutMs} ms`);
}
