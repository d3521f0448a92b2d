// bench/ingest: ferrite's /raw TSV ingest against VictoriaMetrics' Prometheus import, on
// the same generated samples in the same run. Prints samples/s, the ratio, on-disk bytes
// per sample and peak RSS for each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { diskBytes, peakRss, startFerrite, startVictoriaMetrics, victoriaMetricsAvailable, type Running } from './peers.js';

interface Options {
  metrics: number;
  points: number;
  batch: number;
  concurrency: number;
  vm: boolean;
}

const UUID = '1b988fd7-d1e1-48ec-848e-55709511d43f';
const CHECK = `bench.example\`bench\`c_1_1::bench\`${UUID}`;
const STEP_S = 10;

/** Sample i of metric m: a slowly varying gauge, so compression sees realistic data. */
const valueOf = (m: number, i: number) => Math.round((50 + 40 * Math.sin((m + i) / 17)) * 1000) / 1000;
const tags = (m: number) => ({ host: `h${m % 100}`, region: `r${m % 5}` });

function ferriteLines(o: Options, start: number): string[] {
  const bodies: string[] = [];
  let lines: string[] = [];
  for (let i = 0; i < o.points; i++) {
    const ts = `${start + i * STEP_S}.000`;
    for (let m = 0; m < o.metrics; m++) {
      const t = tags(m);
      lines.push(`M\t${ts}\t${CHECK}\tbench.metric.${m}|ST[host:${t.host},region:${t.region}]\tn\t${valueOf(m, i)}`);
      if (lines.length === o.batch) {
        bodies.push(lines.join('\n'));
        lines = [];
      }
    }
  }
  if (lines.length) bodies.push(lines.join('\n'));
  return bodies;
}

function vmLines(o: Options, start: number): string[] {
  const bodies: string[] = [];
  let lines: string[] = [];
  for (let i = 0; i < o.points; i++) {
    const tsMs = (start + i * STEP_S) * 1000;
    for (let m = 0; m < o.metrics; m++) {
      const t = tags(m);
      lines.push(`bench_metric_${m}{host="${t.host}",region="${t.region}"} ${valueOf(m, i)} ${tsMs}`);
      if (lines.length === o.batch) {
        bodies.push(lines.join('\n') + '\n');
        lines = [];
      }
    }
  }
  if (lines.length) bodies.push(lines.join('\n') + '\n');
  return bodies;
}

async function send(url: string, bodies: string[], concurrency: number, method: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const res = await fetch(url, { method, body });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

interface Result {
  name: string;
  seconds: number;
  samplesPerSec: number;
  bytesPerSample: number;
  peakRssMb: number;
}

async function ferriteCount(url: string, o: Options, start: number): Promise<number> {
  let total = 0;
  let next = 0;
  const end = `${start + o.points * STEP_S}.000`;
  const worker = async () => {
    while (next < o.metrics) {
      const m = next++;
      const t = tags(m);
      const name = encodeURIComponent(`bench.metric.${m}|ST[host:${t.host},region:${t.region}]`);
      const res = await fetch(`${url}/raw/${UUID}/${name}?start_ts=${start}.000&end_ts=${end}`);
      total += ((await res.json()) as unknown[]).length;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return total;
}

async function vmCount(url: string, o: Options, start: number): Promise<number> {
  const at = start + o.points * STEP_S;
  const q = encodeURIComponent(`sum(count_over_time({__name__=~"bench_metric_.*"}[${o.points * STEP_S + 1}s]))`);
  const res = await fetch(`${url}/api/v1/query?query=${q}&time=${at}`);
  const doc = (await res.json()) as { data: { result: { value: [number, string] }[] } };
  return Number(doc.data.result[0]?.value[1] ?? 0);
}

async function measure(
  peer: Running,
  bodies: string[],
  o: Options,
  ingestUrl: string,
  count: () => Promise<number>,
): Promise<Result> {
  const total = o.metrics * o.points;
  const t0 = performance.now();
  await send(ingestUrl, bodies, o.concurrency, peer.name === 'ferrite' ? 'PUT' : 'POST');
  // Done when every sample is queryable, polling the peer's own query path.
  for (;;) {
    const n = await count();
    if (n >= total) break;
    if (performance.now() - t0 > 600_000) throw new Error(`${peer.name}: only ${n}/${total} samples queryable after 10 min`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - t0) / 1000;
  const rss = peakRss(peer.child.pid!);
  await peer.stop();
  return {
    name: peer.name,
    seconds,
    samplesPerSec: total / seconds,
    bytesPerSample: diskBytes(peer.dataDir) / total,
    peakRssMb: rss / 2 ** 20,
  };
}

async function main(): Promise<void> {
  const o = new Command('bench-ingest')
    .option('--metrics <n>', 'metrics', (v) => Number(v), 10_000)
    .option('--points <n>', 'points per metric (10 s apart)', (v) => Number(v), 100)
    .option('--batch <n>', 'lines per request', (v) => Number(v), 5000)
    .option('--concurrency <n>', 'requests in flight', (v) => Number(v), 4)
    .option('--no-vm', 'skip VictoriaMetrics')
    .parse()
    .opts<Options>();
  const total = o.metrics * o.points;
  const start = Math.floor(Date.now() / 1000) - o.points * STEP_S - 60;
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-'));
  console.log(`bench/ingest: ${total} samples (${o.metrics} metrics × ${o.points} points, ${STEP_S} s apart), ${o.batch} lines/request, ${o.concurrency} in flight`);
  const results: Result[] = [];
  try {
    const fBodies = ferriteLines(o, start);
    const ferrite = await startFerrite(path.join(root, 'ferrite'));
    results.push(await measure(ferrite, fBodies, o, `${ferrite.url}/raw`, () => ferriteCount(ferrite.url, o, start)));
    if (!o.vm) console.log('VictoriaMetrics skipped (--no-vm)');
    else if (!victoriaMetricsAvailable()) console.log('VictoriaMetrics not installed (apt-get install victoria-metrics): skipping that side');
    else {
      const vBodies = vmLines(o, start);
      const vm = await startVictoriaMetrics(path.join(root, 'vm'));
      results.push(await measure(vm, vBodies, o, `${vm.url}/api/v1/import/prometheus`, () => vmCount(vm.url, o, start)));
    }
  } finally {
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  console.log('\n| system | seconds | samples/s | bytes/sample on disk | peak RSS MiB |');
  console.log('|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.name} | ${r.seconds.toFixed(2)} | ${Math.round(r.samplesPerSec)} | ${r.bytesPerSample.toFixed(2)} | ${r.peakRssMb.toFixed(0)} |`);
  }
  if (results.length === 2) console.log(`\nratio ferrite/victoria-metrics (ingest samples/s): ${(results[0]!.samplesPerSec / results[1]!.samplesPerSec).toFixed(3)}`);
}

await main();
