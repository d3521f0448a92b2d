// bench/contention (`npm run bench:contention`): do reads starve under ingest? ferrite and
// VictoriaMetrics each get the same data set, then their search and fetch latencies are
// measured idle and while an ingest load runs at a fixed fraction (default 80 %) of the
// ingest rate that system reached alone. Prints p50/p99 idle and loaded and their ratio.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodiesLazy, ferriteName, send, UUID, vmBodiesLazy, type Bodies, type Dataset } from './dataset.js';
import { startFerrite, startVictoriaMetrics, victoriaMetricsAvailable, type Running } from './peers.js';
import { recordFigure } from './summary.js';

interface Options {
  metrics: number;
  rounds: number;
  load: number;
  seconds: number;
  vm: boolean;
}

const STEP_S = 10;

interface System {
  name: string;
  ingestUrl: string;
  method: string;
  bodies: (d: Dataset) => Bodies;
  find: () => Promise<unknown>;
  fetch: () => Promise<unknown>;
}

async function ok(res: Response): Promise<unknown> {
  if (res.status !== 200) throw new Error(`${res.url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return res.json();
}

function ferriteSystem(url: string, start: number): System {
  const streams = Array.from({ length: 100 }, (_, m) => ({ uuid: UUID, name: ferriteName(m), kind: 'numeric', transform: 'average' }));
  return {
    name: 'ferrite',
    ingestUrl: `${url}/raw`,
    method: 'PUT',
    bodies: ferriteBodiesLazy,
    find: async () => ok(await fetch(`${url}/find/1/tags?query=${encodeURIComponent('and(__name:bench.metric.1*,host:h1)')}`)),
    fetch: async () =>
      ok(
        await fetch(`${url}/fetch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ start, period: 60, count: 60, streams, reduce: [{ label: 'sum', method: 'sum' }] }),
        }),
      ),
  };
}

function vmSystem(url: string, start: number): System {
  const selector = `{__name__=~"bench_metric_[0-9]{1,2}"}`;
  return {
    name: 'victoria-metrics',
    ingestUrl: `${url}/api/v1/import/prometheus`,
    method: 'POST',
    bodies: vmBodiesLazy,
    find: async () => ok(await fetch(`${url}/api/v1/series?match[]=${encodeURIComponent('{__name__=~"bench_metric_1.*",host="h1"}')}&start=${start}`)),
    fetch: async () => ok(await fetch(`${url}/api/v1/query_range?query=${encodeURIComponent(`sum(avg_over_time(${selector}[60s]))`)}&start=${start}&end=${start + 3540}&step=60`)),
  };
}

/** p50 and p99 of `rounds` sequential calls, ms. */
async function latencies(run: () => Promise<unknown>, rounds: number): Promise<{ p50: number; p99: number }> {
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(ms.length / 2)]!, p99: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]! };
}

/** Sends `bodies` at `samplesPerSec` (paced per request) until `stop` says so. */
async function paced(sys: System, bodies: Bodies, batch: number, samplesPerSec: number, stop: () => boolean): Promise<void> {
  const interval = (batch / samplesPerSec) * 1000;
  let next = 0;
  let due = performance.now();
  while (!stop() && next < bodies.length) {
    await send(sys.ingestUrl, { length: 1, at: () => bodies.at(next++) }, 1, sys.method);
    due += interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

async function measure(sys: System, peer: Running, o: Options, start: number): Promise<{ lines: string[]; slowdown: Record<'find' | 'fetch', number> }> {
  const batch = 5000;
  const base: Dataset = { metrics: o.metrics, points: 360, stepS: STEP_S, start, batch };
  // The readable history: an hour of every metric, loaded at full speed (its rate is the capacity).
  const t0 = performance.now();
  await send(sys.ingestUrl, sys.bodies({ ...base, points: 360 }), 4, sys.method);
  const capacity = (o.metrics * 360) / ((performance.now() - t0) / 1000);
  const idle = { find: await latencies(sys.find, o.rounds), fetch: await latencies(sys.fetch, o.rounds) };
  // The load: later points of the same metrics, at o.load × capacity.
  let stopped = false;
  const loadBodies = sys.bodies({ ...base, start: start + 360 * STEP_S, points: 100_000 });
  const load = paced(sys, loadBodies, batch, capacity * o.load, () => stopped);
  await new Promise((r) => setTimeout(r, 2000));
  const loaded = { find: await latencies(sys.find, o.rounds), fetch: await latencies(sys.fetch, o.rounds) };
  stopped = true;
  await load;
  await peer.stop();
  const row = (what: 'find' | 'fetch') =>
    `| ${sys.name} | ${what} | ${idle[what].p50.toFixed(1)} | ${idle[what].p99.toFixed(1)} | ${loaded[what].p50.toFixed(1)} | ${loaded[what].p99.toFixed(1)} | ${(loaded[what].p99 / idle[what].p99).toFixed(2)} |`;
  const lines = [`${sys.name}: capacity ${Math.round(capacity)} samples/s, load ${Math.round(capacity * o.load)} samples/s`, row('find'), row('fetch')];
  return { lines, slowdown: { find: loaded.find.p99 / idle.find.p99, fetch: loaded.fetch.p99 / idle.fetch.p99 } };
}

async function main(): Promise<void> {
  const o = new Command('bench-contention')
    .option('--metrics <n>', 'metrics', (v) => Number(v), 10_000)
    .option('--rounds <n>', 'timed reads per measurement', (v) => Number(v), 100)
    .option('--load <fraction>', 'ingest load as a fraction of the measured capacity', (v) => Number(v), 0.8)
    .option('--no-vm', 'skip VictoriaMetrics')
    .parse()
    .opts<Options>();
  const start = Math.floor(Date.now() / 1000 / 3600) * 3600 - 4 * 3600;
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-'));
  const lines: string[] = [];
  try {
    const ferrite = await startFerrite(path.join(root, 'ferrite'));
    const f = await measure(ferriteSystem(ferrite.url, start), ferrite, o, start);
    lines.push(...f.lines);
    let v: Awaited<ReturnType<typeof measure>> | null = null;
    if (o.vm && victoriaMetricsAvailable()) {
      const vm = await startVictoriaMetrics(path.join(root, 'vm'));
      v = await measure(vmSystem(vm.url, start), vm, o, start);
    }
    if (v !== null) lines.push(...v.lines);
    for (const read of ['find', 'fetch'] as const) {
      recordFigure({ bench: 'contention', measure: `${read} p99 under ${o.load * 100} % ingest / idle p99`, unit: '×', ferrite: f.slowdown[read], peer: v?.slowdown[read] ?? null, better: 'lower' });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`bench/contention: ${o.metrics} metrics, an hour of 10 s samples, reads idle and under ${o.load * 100} % ingest load, ${o.rounds} rounds`);
  console.log(lines.filter((l) => !l.startsWith('|')).join('\n'));
  console.log('\n| system | read | idle p50 ms | idle p99 ms | loaded p50 ms | loaded p99 ms | p99 loaded / idle |');
  console.log('|---|---|---|---|---|---|---|');
  for (const l of lines.filter((x) => x.startsWith('|'))) console.log(l);
}

await main();
