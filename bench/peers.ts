// Starting the systems a benchmark compares: ferrite as a child process, and the peer
// (VictoriaMetrics from Debian's `victoria-metrics` package) on a loopback port.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, waitHttp } from '../transport/ports.js';

export interface Running {
  name: string;
  url: string;
  child: ChildProcess;
  dataDir: string;
  /** Stops gracefully and resolves with the exit code. */
  stop(): Promise<number | null>;
}

function stopper(child: ChildProcess, signal: NodeJS.Signals): () => Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return () => {
    child.kill(signal);
    return exited;
  };
}

/** Benchmarks measure ferrite on the runtime it ships with; on an older Node, ferrite would re-exec itself and the bench would measure the wrapper. */
export function requireShippedNode(): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) throw new Error(`benchmarks run on Node ≥ 22 (this is ${process.version}): start them with npm run bench… (it puts the packaged Node 24 first)`);
}

export async function startFerrite(dataDir: string, extraArgs: string[] = [], readyTimeoutMs = 30_000): Promise<Running> {
  requireShippedNode();
  const port = await freePort();
  const bin = path.resolve(process.cwd(), 'bin/ferrite.js');
  // BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the server (NODE_OPTIONS refuses --cpu-prof).
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve', '--port', String(port), '--data-dir', dataDir, '--log-level', 'warn', ...extraArgs], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/state`, readyTimeoutMs);
  return { name: 'ferrite', url, child, dataDir, stop: stopper(child, 'SIGTERM') };
}

export const VM_BINARY = '/usr/bin/victoria-metrics';

export function victoriaMetricsAvailable(): boolean {
  return existsSync(VM_BINARY);
}

/** `cache: false` (the default) runs it with `-search.disableCache`: no cached query results. */
export async function startVictoriaMetrics(dataDir: string, extraArgs: string[] = [], o: { cache?: boolean } = {}): Promise<Running> {
  const port = await freePort();
  const child = spawn(
    VM_BINARY,
    [
      `-storageDataPath=${dataDir}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      '-retentionPeriod=100y',
      '-search.latencyOffset=0s',
      ...(o.cache === true ? [] : ['-search.disableCache']),
      '-loggerLevel=ERROR',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/health`);
  return { name: 'victoria-metrics', url, child, dataDir, stop: stopper(child, 'SIGINT') };
}

/** Peak resident set size (VmHWM) of a running process, in bytes. */
export function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Process ids of `pid` and all its descendants (every thread's children, recursively). */
function processTree(pid: number): number[] {
  const out = [pid];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // exited while we looked
  }
  for (const tid of tasks) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of children.split(' ').filter((c) => c !== '')) out.push(...processTree(Number(child)));
  }
  return out;
}

/**
 * Peak resident set size of a process and its descendants, in bytes: VmHWM summed over the tree.
 * Worker threads share their process' VmHWM; child processes (a re-exec, a helper) each have their own.
 */
export function treePeakRss(pid: number): number {
  return processTree(pid).reduce((sum, p) => {
    try {
      return sum + peakRss(p);
    } catch {
      return sum; // a child that exited between listing and reading
    }
  }, 0);
}

/**
 * Polls the process tree's peak RSS (VmHWM) until `stop()`, which returns the highest seen: a
 * process about to exit (a graceful stop) can no longer be asked afterwards.
 */
export function watchTreePeakRss(pid: number, everyMs = 100): { stop(): number } {
  let highest = 0;
  const poll = () => {
    const now = treePeakRss(pid);
    // NaN once the process has exited (a zombie's status has no VmHWM).
    if (Number.isFinite(now)) highest = Math.max(highest, now);
  };
  poll();
  const timer = setInterval(poll, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return highest;
    },
  };
}

/** CPU seconds (user + system, every thread) the process has used so far. */
export function cpuSeconds(pid: number): number {
  // /proc/<pid>/stat: fields after the command's closing parenthesis; utime and stime are the 12th and 13th, in clock ticks.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim();
  return (Number(fields[11]) + Number(fields[12])) / Number(ticks || 100);
}

export function diskBytes(dir: string): number {
  const r = spawnSync('du', ['-sb', dir], { encoding: 'utf8' });
  return Number(r.stdout.split('\t')[0]);
}

/** ferrite's bytes on disk by kind of data (`/state` → `disk.by_kind`), as a line of a bench's output. */
export async function diskByKindLine(url: string): Promise<string> {
  const state = (await (await fetch(`${url}/state`)).json()) as { disk: { total_bytes: number; by_kind: Record<string, number> } };
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const parts = Object.entries(state.disk.by_kind).map(([kind, bytes]) => `${kind} ${mib(bytes)}`);
  return `ferrite on disk by kind (MiB): ${parts.join(', ')}; total ${mib(state.disk.total_bytes)}`;
}
