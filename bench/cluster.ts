// bench/cluster: `ferrite cluster --nodes 3 --write-copies 2` on one machine, TSV ingest
// spread over the three nodes. Prints acknowledged samples/s, journal messages' records/s
// (copies sent to other owners), the replication lag seen while loading and how long the
// journals take to drain after the last acknowledgement; a standalone ferrite and
// VictoriaMetrics ingest the same samples in the same run for the ratios.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodies, send, vmBodies, type Dataset } from './dataset.js';
import { startFerrite, startVictoriaMetrics, victoriaMetricsAvailable } from './peers.js';
import { recordFigure } from './summary.js';
import { freePort } from '../transport/ports.js';

interface Options {
  metrics: number;
  points: number;
  batch: number;
  concurrency: number;
  vm: boolean;
}

interface Replication {
  peers: Record<string, { unconfirmed_messages: number; unconfirmed_records: number; oldest_unconfirmed_age: number }>;
  journal_pending: number | null;
}

const STEP_S = 10;
const BIN = path.resolve(process.cwd(), 'bin/ferrite.js');

interface Rig {
  urls: string[];
  stop(): Promise<void>;
}

async function startRig(dir: string): Promise<Rig> {
  const child = spawn(process.execPath, [BIN, 'cluster', '--nodes', '3', '--write-copies', '2', '--base-port', String(await freePort()), '--data-dir', dir, '--log-level', 'warn'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if ((out.match(/^node /gm) ?? []).length === 3) resolve();
    });
    child.on('exit', (code) => reject(new Error(`ferrite cluster exited with ${code}`)));
  });
  return {
    urls: [...out.matchAll(/^node \S+ (\S+)$/gm)].map((m) => m[1]!),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function replication(urls: string[]): Promise<Replication[]> {
  return Promise.all(urls.map(async (u) => ((await (await fetch(`${u}/state`)).json()) as { replication: Replication }).replication));
}

const worstLag = (states: Replication[]): number => Math.max(0, ...states.flatMap((s) => Object.values(s.peers).map((p) => p.oldest_unconfirmed_age)));
const drained = (states: Replication[]): boolean =>
  states.every((s) => s.journal_pending === 0 && Object.values(s.peers).every((p) => p.unconfirmed_messages === 0));

async function journalRecordsApplied(urls: string[]): Promise<number> {
  const stats = await Promise.all(urls.map(async (u) => (await (await fetch(`${u}/stats.json`)).json()) as { ingest: { journal_records_applied: { _value: number } } }));
  return stats.reduce((n, s) => n + s.ingest.journal_records_applied._value, 0);
}

/** Sends a third of the bodies to each node, all at once. */
async function sendSpread(urls: string[], bodies: string[], concurrency: number): Promise<void> {
  await Promise.all(urls.map((u, i) => send(`${u}/raw`, bodies.filter((_, k) => k % urls.length === i), concurrency, 'PUT')));
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const o = new Command('bench-cluster')
    .option('--metrics <n>', 'metrics', (v) => Number(v), 5_000)
    .option('--points <n>', 'points per metric (10 s apart)', (v) => Number(v), 100)
    .option('--batch <n>', 'lines per request', (v) => Number(v), 5000)
    .option('--concurrency <n>', 'requests in flight per node', (v) => Number(v), 2)
    .option('--no-vm', 'skip VictoriaMetrics')
    .parse()
    .opts<Options>();
  const total = o.metrics * o.points;
  const start = Math.floor(Date.now() / 1000) - o.points * STEP_S - 60;
  const data: Dataset = { metrics: o.metrics, points: o.points, stepS: STEP_S, start, batch: o.batch };
  const bodies = ferriteBodies(data);
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-cluster-'));
  console.log(`bench/cluster: ${total} samples (${o.metrics} metrics × ${o.points} points), ${o.batch} lines/request, 3 nodes, W=2, ${o.concurrency} in flight per node`);
  try {
    const rig = await startRig(path.join(root, 'cluster'));
    let lagMax = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        lagMax = Math.max(lagMax, worstLag(await replication(rig.urls)));
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const ackSeconds = await timed(() => sendSpread(rig.urls, bodies, o.concurrency));
    sampling = false;
    await sampler;
    const drainSeconds = await timed(async () => {
      while (!drained(await replication(rig.urls))) await new Promise((r) => setTimeout(r, 100));
    });
    const journaled = await journalRecordsApplied(rig.urls);
    await rig.stop();

    const single = await startFerrite(path.join(root, 'single'));
    const singleSeconds = await timed(() => send(`${single.url}/raw`, bodies, o.concurrency * 3, 'PUT'));
    await single.stop();

    let vmSeconds: number | null = null;
    if (o.vm && victoriaMetricsAvailable()) {
      const vm = await startVictoriaMetrics(path.join(root, 'vm'));
      vmSeconds = await timed(() => send(`${vm.url}/api/v1/import/prometheus`, vmBodies(data), o.concurrency * 3, 'POST'));
      await vm.stop();
    }

    const rows: [string, string][] = [
      ['cluster acknowledged samples/s', Math.round(total / ackSeconds).toString()],
      ['cluster journal records/s (copies applied from peers, over ingest + drain)', Math.round(journaled / (ackSeconds + drainSeconds)).toString()],
      ['cluster stored copies/s (W × samples)', Math.round((2 * total) / (ackSeconds + drainSeconds)).toString()],
      ['worst replication lag while loading (s)', lagMax.toFixed(2)],
      ['journal drain after the last acknowledgement (s)', drainSeconds.toFixed(2)],
      ['standalone ferrite samples/s (acknowledged)', Math.round(total / singleSeconds).toString()],
    ];
    if (vmSeconds !== null) rows.push(['victoria-metrics samples/s (acknowledged)', Math.round(total / vmSeconds).toString()]);
    console.log('\n| measure | value |\n|---|---|');
    for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
    console.log(`\nratio cluster / standalone ferrite (acknowledged samples/s): ${(singleSeconds / ackSeconds).toFixed(3)}`);
    if (vmSeconds !== null) console.log(`ratio cluster / victoria-metrics (acknowledged samples/s): ${(vmSeconds / ackSeconds).toFixed(3)}`);
    recordFigure({ bench: 'cluster', measure: '3 nodes, W=2: acknowledged ingest', unit: 'samples/s', ferrite: total / ackSeconds, peer: vmSeconds === null ? null : total / vmSeconds, better: 'higher' });
    console.log(`journal records/s against IRONdb's documented 700000: ${(journaled / (ackSeconds + drainSeconds) / 700_000).toFixed(3)}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
