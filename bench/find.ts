// bench/find (`npm run bench:find`): tag search over many metrics (default 1M: 100k checks
// × 10 metric names, tags host/region/service with realistic cardinalities) in ferrite
// (`/find/<account>/tags`) and VictoriaMetrics (`/api/v1/series`) on the same series.
// Prints p50/p99 latency of a selective query, a broad glob and a regex, with result counts
// checked equal, plus bytes on disk and peak RSS of each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { send } from './dataset.js';
import { timeRounds } from './timing.js';
import { diskBytes, peakRss, startFerrite, startVictoriaMetrics, victoriaMetricsAvailable } from './peers.js';

interface Options {
  checks: number;
  rounds: number;
  vm: boolean;
}

const NAMES = 10;
const HOSTS = 1000;
const REGIONS = 5;
const SERVICES = 50;
const ACCOUNT = 1;

/** Deterministic check uuid of check c. */
const uuidOf = (c: number) => `00000000-0000-4000-8000-${c.toString(16).padStart(12, '0')}`;
const tagsOf = (c: number) => ({ host: `h${c % HOSTS}`, region: `r${c % REGIONS}`, service: `s${c % SERVICES}` });

function ferriteBodies(checks: number, ts: number): string[] {
  const out: string[] = [];
  let lines: string[] = [];
  for (let c = 0; c < checks; c++) {
    const t = tagsOf(c);
    for (let m = 0; m < NAMES; m++) {
      lines.push(`M\t${ts}.000\tbench\`bench\`c_${ACCOUNT}_${c}::bench\`${uuidOf(c)}\tm${m}|ST[host:${t.host},region:${t.region},service:${t.service}]\tn\t1`);
    }
    if (lines.length >= 5000) {
      out.push(lines.join('\n'));
      lines = [];
    }
  }
  if (lines.length) out.push(lines.join('\n'));
  return out;
}

function vmBodies(checks: number, ts: number): string[] {
  const out: string[] = [];
  let lines: string[] = [];
  for (let c = 0; c < checks; c++) {
    const t = tagsOf(c);
    for (let m = 0; m < NAMES; m++) lines.push(`m${m}{check="${uuidOf(c)}",host="${t.host}",region="${t.region}",service="${t.service}"} 1 ${ts * 1000}`);
    if (lines.length >= 5000) {
      out.push(lines.join('\n') + '\n');
      lines = [];
    }
  }
  if (lines.length) out.push(lines.join('\n') + '\n');
  return out;
}

interface Query {
  name: string;
  ferrite: string;
  vm: string;
}

const QUERIES: Query[] = [
  { name: 'selective: one name on one host', ferrite: 'and(__name:m3,host:h42)', vm: '{__name__="m3",host="h42"}' },
  { name: 'broad glob: every name on hosts h12*', ferrite: 'and(__name:m*,host:h12*)', vm: '{__name__=~"m.*",host=~"h12.*"}' },
  { name: 'regex: three names on ten hosts', ferrite: 'and(__name:/^m[2-4]$/,host:/^h1[0-9]$/)', vm: '{__name__=~"m[2-4]",host=~"h1[0-9]"}' },
];

async function ferriteFind(url: string, query: string): Promise<number> {
  const res = await fetch(`${url}/find/${ACCOUNT}/tags?query=${encodeURIComponent(query)}`, { headers: { 'x-svc-advisory-limit': 'none' } });
  if (res.status !== 200) throw new Error(`ferrite find answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as unknown[]).length;
}

async function vmSeries(url: string, selector: string, start: number): Promise<number> {
  const res = await fetch(`${url}/api/v1/series?match[]=${encodeURIComponent(selector)}&start=${start - 3600}&end=${start + 3600}`);
  if (res.status !== 200) throw new Error(`VictoriaMetrics series answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: unknown[] }).data.length;
}

async function latencies(run: () => Promise<number>, rounds: number): Promise<{ count: number; p50: number; p99: number }> {
  const { first: count, ms } = await timeRounds(run, rounds);
  return { count, p50: ms[Math.floor(ms.length / 2)]!, p99: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]! };
}

interface Footprint {
  name: string;
  ingestS: number;
  diskMb: number;
  rssMb: number;
}

async function load(url: string, bodies: string[], method: string): Promise<number> {
  const t0 = performance.now();
  await send(url, bodies, 4, method);
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const o = new Command('bench-find')
    .option('--checks <n>', 'checks (10 metrics each)', (v) => Number(v), 100_000)
    .option('--rounds <n>', 'timed repetitions of each query', (v) => Number(v), 50)
    .option('--no-vm', 'skip VictoriaMetrics')
    .parse()
    .opts<Options>();
  const ts = Math.floor(Date.now() / 1000) - 600;
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-'));
  console.log(`bench/find: ${o.checks * NAMES} metrics (${o.checks} checks × ${NAMES} names; ${HOSTS} hosts, ${REGIONS} regions, ${SERVICES} services), ${o.rounds} rounds per query`);
  const withVm = o.vm && victoriaMetricsAvailable();
  const ferrite = await startFerrite(path.join(root, 'ferrite'));
  // VictoriaMetrics refuses searches matching more than 30k series unless told otherwise.
  const vm = withVm ? await startVictoriaMetrics(path.join(root, 'vm'), ['-search.maxSeries=10000000', '-search.maxUniqueTimeseries=10000000']) : null;
  const footprints: Footprint[] = [];
  try {
    const fIngest = await load(`${ferrite.url}/raw`, ferriteBodies(o.checks, ts), 'PUT');
    let vIngest = 0;
    if (vm !== null) {
      vIngest = await load(`${vm.url}/api/v1/import/prometheus`, vmBodies(o.checks, ts), 'POST');
      await fetch(`${vm.url}/internal/force_flush`);
      // Series become searchable once VictoriaMetrics has registered them all.
      while ((await vmSeries(vm.url, '{__name__="m0"}', ts)) < o.checks) await new Promise((r) => setTimeout(r, 200));
    }
    console.log('\n| query | results | ferrite p50 ms | ferrite p99 ms | VM p50 ms | VM p99 ms | ratio VM/ferrite (p50) |');
    console.log('|---|---|---|---|---|---|---|');
    for (const q of QUERIES) {
      const f = await latencies(() => ferriteFind(ferrite.url, q.ferrite), o.rounds);
      const v = vm === null ? null : await latencies(() => vmSeries(vm.url, q.vm, ts), o.rounds);
      if (v !== null && v.count !== f.count) throw new Error(`${q.name}: ferrite found ${f.count}, VictoriaMetrics ${v.count}`);
      const fmt = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));
      console.log(`| ${q.name} | ${f.count} | ${fmt(f.p50)} | ${fmt(f.p99)} | ${fmt(v?.p50)} | ${fmt(v?.p99)} | ${v === null ? '–' : (v.p50 / f.p50).toFixed(2)} |`);
    }
    footprints.push({ name: 'ferrite', ingestS: fIngest, rssMb: peakRss(ferrite.child.pid!) / 2 ** 20, diskMb: 0 });
    if (vm !== null) footprints.push({ name: 'victoria-metrics', ingestS: vIngest, rssMb: peakRss(vm.child.pid!) / 2 ** 20, diskMb: 0 });
  } finally {
    await ferrite.stop();
    await vm?.stop();
    footprints[0] && (footprints[0].diskMb = diskBytes(ferrite.dataDir) / 2 ** 20);
    if (vm !== null && footprints[1]) footprints[1].diskMb = diskBytes(vm.dataDir) / 2 ** 20;
    console.log('\n| system | load s | disk MiB (after stop) | peak RSS MiB |');
    console.log('|---|---|---|---|');
    for (const f of footprints) console.log(`| ${f.name} | ${f.ingestS.toFixed(1)} | ${f.diskMb.toFixed(1)} | ${f.rssMb.toFixed(0)} |`);
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

await main();
