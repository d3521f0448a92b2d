// bench/cluster: `ferrite cluster --nodes 3 --write-copies 2` on one machine, TSV ingest
// spread over the three nodes. Prints acknowledged samples/s, journal messages' records/s
// (copies sent to other owners), the replication lag seen while loading and how long the
// journals take to drain after the last acknowledgement; a standalone ferrite and
// VictoriaMetrics ingest the same samples in the same run for the ratios. Then the cluster
// grows to four nodes (the rig's `add` command: a rebalance) while the same load goes on with
// later samples, and it prints the rebalance's rate (metrics and MB moved per second, from the
// nodes' /state `rebalance`) and the ingest rate meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodies, send, vmBodies, type Dataset } from './dataset.js';
import { startFerrite, startVictoriaMetrics, victoriaMetricsAvailable } from './peers.js';
import { recordFigure } from './summary.js';
import { freeBase, startRig, type Rig } from '../test/helpers/rig.js';

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

/** What a node's /state `rebalance` says once it is done (actors/cluster/rebalance-progress.ts). */
interface RebalanceFigures {
  started: string | null;
  finished: string | null;
  metrics_sent: number;
  bytes_sent: number;
  rate_metrics_per_s: number;
  rate_bytes_per_s: number;
}

const urlsOf = (rig: Rig) => rig.nodes.map((n) => n.url);

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

/** Sends each body once through `urls` in turn, `concurrency` in flight per node, while `going()`; the lines acknowledged. */
async function sendWhile(urls: string[], bodies: string[], concurrency: number, going: () => boolean): Promise<number> {
  let next = 0;
  let lines = 0;
  const worker = async (url: string) => {
    while (going() && next < bodies.length) {
      const body = bodies[next++]!;
      const res = await fetch(`${url}/raw`, { method: 'PUT', body });
      await res.arrayBuffer();
      if (res.status === 200) lines += body.split('\n').length;
    }
  };
  await Promise.all(urls.flatMap((u) => Array.from({ length: concurrency }, () => worker(u))));
  return lines;
}

/**
 * Grows the rig by one node (its `add` command) while `bodies` come through the first nodes (one
 * request in flight per node, until they are all sent or the rebalance is done); the rebalance's
 * span from the first activation to the last completion (the nodes' own times), what the old
 * nodes sent, and the lines acknowledged meanwhile.
 */
async function growUnderLoad(rig: Rig, bodies: string[]): Promise<{ seconds: number; metrics: number; bytes: number; walkRate: number; ingestLines: number; ingestSeconds: number }> {
  const old = urlsOf(rig);
  const from = rig.lines.length;
  let rebalancing = true;
  const t0 = performance.now();
  rig.send('add');
  const done = rig.waitFor(/^rebalance complete/, from, 3_600_000).finally(() => (rebalancing = false));
  const ingestLines = await sendWhile(old, bodies, 1, () => rebalancing);
  const ingestSeconds = (performance.now() - t0) / 1000;
  await done;
  const figures = await Promise.all(old.map(async (u) => ((await (await fetch(`${u}/state`)).json()) as { rebalance: RebalanceFigures }).rebalance));
  const started = Math.min(...figures.map((f) => Date.parse(f.started!)));
  const finished = Math.max(...figures.map((f) => Date.parse(f.finished!)));
  return {
    seconds: (finished - started) / 1000,
    metrics: figures.reduce((n, f) => n + f.metrics_sent, 0),
    bytes: figures.reduce((n, f) => n + f.bytes_sent, 0),
    walkRate: figures.reduce((n, f) => n + f.rate_metrics_per_s, 0),
    ingestLines,
    ingestSeconds,
  };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

/** The load on the three nodes, its drain, then the growth to four under more load. */
async function loadAndGrow(rig: Rig, bodies: string[], data: Dataset, o: Options) {
  const urls = urlsOf(rig);
  let lagMax = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      lagMax = Math.max(lagMax, worstLag(await replication(urls)));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const ackSeconds = await timed(() => sendSpread(urls, bodies, o.concurrency));
  sampling = false;
  await sampler;
  const drainSeconds = await timed(async () => {
    while (!drained(await replication(urls))) await new Promise((r) => setTimeout(r, 100));
  });
  const journaled = await journalRecordsApplied(urls);
  // The same metrics, later samples: written while the cluster grows.
  const grown = await growUnderLoad(rig, ferriteBodies({ ...data, start: data.start + o.points * STEP_S }));
  return { ackSeconds, drainSeconds, lagMax, journaled, grown };
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
    const rig = await startRig(await freeBase(4), path.join(root, 'cluster'));
    const { ackSeconds, drainSeconds, lagMax, journaled, grown } = await loadAndGrow(rig, bodies, data, o).finally(() => rig.stop());

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
    rows.push(
      ['rebalance 3 → 4: metrics sent by the old nodes', grown.metrics.toString()],
      ['rebalance 3 → 4: MB sent (journal bodies)', (grown.bytes / 1e6).toFixed(2)],
      ['rebalance 3 → 4: first activation to last completion (s)', grown.seconds.toFixed(2)],
      ['rebalance rate, metrics/s (over that span)', Math.round(grown.metrics / grown.seconds).toString()],
      ['rebalance rate, MB/s (over that span)', (grown.bytes / 1e6 / grown.seconds).toFixed(2)],
      ["walk rate, metrics/s (the old nodes' walks summed, each over its own walk)", Math.round(grown.walkRate).toString()],
      ['cluster acknowledged samples/s during the rebalance (1 request in flight per old node, from the add on)', Math.round(grown.ingestLines / grown.ingestSeconds).toString()],
      ['samples written during the rebalance', grown.ingestLines.toString()],
    );
    console.log('\n| measure | value |\n|---|---|');
    for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
    console.log(`\nratio cluster / standalone ferrite (acknowledged samples/s): ${(singleSeconds / ackSeconds).toFixed(3)}`);
    if (vmSeconds !== null) console.log(`ratio cluster / victoria-metrics (acknowledged samples/s): ${(vmSeconds / ackSeconds).toFixed(3)}`);
    recordFigure({ bench: 'cluster', measure: '3 nodes, W=2: acknowledged ingest', unit: 'samples/s', ferrite: total / ackSeconds, peer: vmSeconds === null ? null : total / vmSeconds, better: 'higher' });
    console.log(`journal records/s against IRONdb's documented 700000: ${(journaled / (ackSeconds + drainSeconds) / 700_000).toFixed(3)}`);
    console.log(`ingest during the rebalance / before it (acknowledged samples/s): ${(grown.ingestLines / grown.ingestSeconds / (total / ackSeconds)).toFixed(3)}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
