// bench/ingest: ferrite's /raw ingest (TSV, and v2 FlatBuffer MetricLists) against
// VictoriaMetrics' Prometheus import, on the same generated samples in the same run. Prints samples/s, the ratio, on-disk bytes
// per sample and peak RSS for each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { recordFigure } from './summary.js';
import { Command } from 'commander';
import { ferriteBodiesLazy, ferriteName, metricListBodiesLazy, prepared, send, UUID, vmBodiesLazy, type Bodies, type Dataset } from './dataset.js';
import { cpuSeconds, diskBytes, peakRss, startFerrite, startVictoriaMetrics, victoriaMetricsAvailable, type Running } from './peers.js';

interface Options {
  metrics: number;
  points: number;
  batch: number;
  concurrency: number;
  vm: boolean;
  flatbuffer: boolean;
  workers?: string;
  lazy?: boolean;
  shards?: string;
  runs: number;
  syncWrites?: boolean;
}

const STEP_S = 10;
/** Streams per /fetch when counting what ferrite can read. */
const FETCH_STREAMS = 1000;

interface Result {
  name: string;
  seconds: number;
  samplesPerSec: number;
  /** Until the last write was acknowledged (samples may not be queryable yet). */
  ackSeconds: number;
  bytesPerSample: number;
  peakRssMb: number;
  /** CPU µs the server spent per sample, all threads (ingest through the read-back polls). */
  cpuUsPerSample: number;
}

/** One system under test: how to start it, what to send it, how to count what it can read. */
interface System {
  label: string;
  start(dir: string): Promise<Running>;
  submission(url: string): Submission;
  count(url: string): Promise<number>;
}

/** The round with the median time (its other figures come with it). */
function median(results: Result[]): Result {
  const sorted = [...results].sort((a, b) => a.seconds - b.seconds);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** Samples ferrite can read back: `count` over the whole range through /fetch, 1000 streams a request. */
async function ferriteCount(url: string, o: Options, start: number): Promise<number> {
  let total = 0;
  const chunks: number[][] = [];
  for (let m = 0; m < o.metrics; m += FETCH_STREAMS) chunks.push(Array.from({ length: Math.min(FETCH_STREAMS, o.metrics - m) }, (_, i) => m + i));
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      const chunk = chunks[next++]!;
      const body = {
        start,
        period: o.points * STEP_S,
        count: 1,
        streams: chunk.map((m) => ({ uuid: UUID, name: ferriteName(m), kind: 'numeric', transform: 'count' })),
        reduce: [{ label: 'sum', method: 'sum' }],
      };
      const res = await fetch(`${url}/fetch`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      // A busy node may answer 503/504 while it catches up: that chunk counts as not yet readable.
      const doc = (await res.json()) as { data?: (number | null)[][] };
      total += res.ok ? (doc.data?.[0]?.[0] ?? 0) : 0;
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return total;
}

async function vmCount(url: string, o: Options, start: number): Promise<number> {
  const at = start + o.points * STEP_S;
  const q = encodeURIComponent(`sum(count_over_time({__name__=~"bench_metric_.*"}[${o.points * STEP_S + 1}s]))`);
  const res = await fetch(`${url}/api/v1/query?query=${q}&time=${at}`);
  const doc = (await res.json()) as { data?: { result: { value: [number, string] }[] }; error?: string };
  if (!res.ok) throw new Error(`VictoriaMetrics count failed: ${res.status} ${doc.error ?? ''}`);
  return Number(doc.data!.result[0]?.value[1] ?? 0);
}

interface Submission {
  label: string;
  url: string;
  bodies: Bodies;
  method: string;
  headers?: Record<string, string>;
}

async function measure(peer: Running, submission: Submission, o: Options, count: () => Promise<number>): Promise<Result> {
  const total = o.metrics * o.points;
  const cpuBefore = cpuSeconds(peer.child.pid!);
  const t0 = performance.now();
  await send(submission.url, submission.bodies, o.concurrency, submission.method, submission.headers);
  const acknowledged = (performance.now() - t0) / 1000;
  // Done when every sample is queryable, polling the peer's own query path.
  for (;;) {
    const n = await count();
    if (n >= total) break;
    if (performance.now() - t0 > 600_000) throw new Error(`${peer.name}: only ${n}/${total} samples queryable after 10 min`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - t0) / 1000;
  const rss = peakRss(peer.child.pid!);
  const cpu = cpuSeconds(peer.child.pid!) - cpuBefore;
  await peer.stop();
  // Printed as it comes: a long run that fails later still leaves this figure.
  console.log(`${submission.label}: ${seconds.toFixed(2)} s (every write acknowledged after ${acknowledged.toFixed(2)} s), peak RSS ${(rss / 2 ** 20).toFixed(0)} MiB`);
  return {
    name: submission.label,
    seconds,
    samplesPerSec: total / seconds,
    ackSeconds: acknowledged,
    bytesPerSample: diskBytes(peer.dataDir) / total,
    peakRssMb: rss / 2 ** 20,
    cpuUsPerSample: (cpu * 1e6) / total,
  };
}

async function main(): Promise<void> {
  const o = new Command('bench-ingest')
    .option('--metrics <n>', 'metrics', (v) => Number(v), 10_000)
    .option('--points <n>', 'points per metric (10 s apart)', (v) => Number(v), 100)
    .option('--batch <n>', 'lines per request', (v) => Number(v), 5000)
    .option('--concurrency <n>', 'requests in flight', (v) => Number(v), 4)
    .option('--no-vm', 'skip VictoriaMetrics')
    .option('--no-flatbuffer', 'skip the FlatBuffer run')
    .option('--workers <n>', 'ferrite ingestWorkers (default: cores - 1)')
    .option('--shards <list>', 'also run TSV with each of these shard counts (e.g. 1,2,4) and print throughput and CPU per sample')
    .option('--sync-writes', 'also run TSV with --sync-writes (every acknowledged write fsynced) and print its cost')
    .option('--runs <n>', 'rounds of every system, interleaved; figures are the median round', (v) => Number(v), 3)
    .option('--lazy', 'make each body while sending (for runs too large to hold in memory; the client then competes for CPU)')
    .parse()
    .opts<Options>();
  const total = o.metrics * o.points;
  const start = Math.floor(Date.now() / 1000) - o.points * STEP_S - 60;
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-'));
  console.log(`bench/ingest: ${total} samples (${o.metrics} metrics × ${o.points} points, ${STEP_S} s apart), ${o.batch} lines/request, ${o.concurrency} in flight, median of ${o.runs} interleaved rounds`);
  const results: Result[] = [];
  try {
    const data: Dataset = { metrics: o.metrics, points: o.points, stepS: STEP_S, start, batch: o.batch };
    const args = o.workers === undefined ? [] : ['--ingest-workers', o.workers];
    const bodies = (b: Bodies): Bodies => (o.lazy ? b : prepared(b));
    const tsvBodies = bodies(ferriteBodiesLazy(data));
    const ferrite = (label: string, extra: string[], path_: string, b: Bodies, method: string, headers?: Record<string, string>): System => ({
      label,
      start: (dir) => startFerrite(dir, [...args, ...extra]),
      submission: (url) => ({ label, url: `${url}${path_}`, bodies: b, method, headers }),
      count: (url) => ferriteCount(url, o, start),
    });
    const systems: System[] = [ferrite('ferrite TSV', [], '/raw', tsvBodies, 'PUT')];
    for (const shards of o.shards?.split(',').map(Number) ?? []) systems.push(ferrite(`ferrite TSV, ${shards} shard${shards === 1 ? '' : 's'}`, ['--shards', String(shards)], '/raw', tsvBodies, 'PUT'));
    if (o.syncWrites === true) systems.push(ferrite('ferrite TSV, sync writes', ['--sync-writes'], '/raw', tsvBodies, 'PUT'));
    if (o.flatbuffer) {
      const headers = { 'content-type': 'application/x-svc-metric-list-flatbuffer', 'x-svc-datapoints': String(o.batch) };
      systems.push(ferrite('ferrite FlatBuffer', [], '/raw', bodies(metricListBodiesLazy(data)), 'POST', headers));
    }
    if (!o.vm) console.log('VictoriaMetrics skipped (--no-vm)');
    else if (!victoriaMetricsAvailable()) console.log('VictoriaMetrics not installed (apt-get install victoria-metrics): skipping that side');
    else {
      const vmBodies = bodies(vmBodiesLazy(data));
      systems.push({
        label: 'victoria-metrics',
        start: (dir) => startVictoriaMetrics(dir, ['-search.maxUniqueTimeseries=100000000', '-search.maxSamplesPerQuery=10000000000']),
        submission: (url) => ({ label: 'victoria-metrics', url: `${url}/api/v1/import/prometheus`, bodies: vmBodies, method: 'POST' }),
        count: (url) => vmCount(url, o, start),
      });
    }
    // Rounds interleave the systems, so drift in the machine's load touches each alike; each figure is the median round.
    const rounds = new Map<string, Result[]>(systems.map((x) => [x.label, []]));
    for (let round = 0; round < o.runs; round++) {
      for (const x of systems) {
        const running = await x.start(path.join(root, `${x.label.replace(/\W+/g, '-')}-${round}`));
        rounds.get(x.label)!.push(await measure(running, x.submission(running.url), o, () => x.count(running.url)));
        rmSync(running.dataDir, { recursive: true, force: true });
      }
    }
    for (const x of systems) results.push(median(rounds.get(x.label)!));
  } finally {
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  console.log('\n| system | seconds until queryable | samples/s | seconds until acknowledged | CPU µs/sample | bytes/sample on disk | peak RSS MiB |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.name} | ${r.seconds.toFixed(2)} | ${Math.round(r.samplesPerSec)} | ${r.ackSeconds.toFixed(2)} | ${r.cpuUsPerSample.toFixed(2)} | ${r.bytesPerSample.toFixed(2)} | ${r.peakRssMb.toFixed(0)} |`);
  }
  printSyncCost(results, total);
  const peer = results.find((r) => r.name === 'victoria-metrics') ?? null;
  for (const r of results.filter((x) => x !== peer && !/shard|sync/.test(x.name))) {
    const format = r.name.replace(/^ferrite /, '');
    recordFigure({ bench: 'ingest', measure: `${format} ingest until queryable, ${o.metrics} series`, unit: 'samples/s', ferrite: r.samplesPerSec, peer: peer?.samplesPerSec ?? null, better: 'higher' });
    const acked = (x: Result) => total / x.ackSeconds;
    recordFigure({ bench: 'ingest', measure: `${format} ingest until acknowledged, ${o.metrics} series`, unit: 'samples/s', ferrite: acked(r), peer: peer === null ? null : acked(peer), better: 'higher' });
    recordFigure({ bench: 'ingest', measure: `${format} server CPU per sample`, unit: 'µs', ferrite: r.cpuUsPerSample, peer: peer?.cpuUsPerSample ?? null, better: 'lower' });
    recordFigure({ bench: 'ingest', measure: `${format} peak RSS`, unit: 'MiB', ferrite: r.peakRssMb, peer: peer?.peakRssMb ?? null, better: 'lower' });
  }
  if (peer === null) return;
  console.log('');
  for (const r of results) if (r !== peer) console.log(`ratio ${r.name} / victoria-metrics (ingest samples/s): ${(r.samplesPerSec / peer.samplesPerSec).toFixed(3)}`);
}

/** What --sync-writes costs: its throughput against the default's in the same run (issue 35: ≥ 0.8×). */
function printSyncCost(results: Result[], total: number): void {
  const base = results.find((r) => r.name === 'ferrite TSV');
  const synced = results.find((r) => r.name === 'ferrite TSV, sync writes');
  if (base === undefined || synced === undefined) return;
  const queryable = synced.samplesPerSec / base.samplesPerSec;
  const acknowledged = base.ackSeconds / synced.ackSeconds;
  console.log(`\nsync writes cost: ${queryable.toFixed(2)}× the default's samples/s until queryable, ${acknowledged.toFixed(2)}× until acknowledged (${Math.round(total / synced.ackSeconds)} against ${Math.round(total / base.ackSeconds)} samples/s)`);
}

await main();
