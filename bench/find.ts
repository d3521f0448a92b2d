// bench/find (`npm run bench:find`): tag search over many series (default 1M: 100k checks
// × 10 metric names, tags host/region/service with realistic cardinalities) in ferrite
// (`/find/<account>/tags|tag_cats|tag_vals`) and VictoriaMetrics (`/api/v1/series`,
// `/api/v1/labels`, `/api/v1/label/<name>/values`) on the same series. Each system is queried
// while a writer adds samples to its existing series at half the rate it loaded them (its
// capacity for this data). Prints p50/p99 per query with result counts checked equal, then
// load time, bytes on disk, RSS, and ferrite's index rebuild time on restart.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { timeRounds } from './timing.js';
import { diskBytes, peakRss, startFerrite, startVictoriaMetrics, victoriaMetricsAvailable, type Running } from './peers.js';
import { recordFigure } from './summary.js';

interface Options {
  checks: number;
  rounds: number;
  vm: boolean;
  load: number;
}

const NAMES = 10;
const HOSTS = 1000;
const REGIONS = 5;
const SERVICES = 50;
const ACCOUNT = 1;
const LINES_PER_BODY = 5000;

/** Deterministic check uuid of check c. */
const uuidOf = (c: number) => `00000000-0000-4000-8000-${c.toString(16).padStart(12, '0')}`;
const tagsOf = (c: number) => ({ host: `h${c % HOSTS}`, region: `r${c % REGIONS}`, service: `s${c % SERVICES}` });

/** Body `b` of one pass over every series (LINES_PER_BODY series each), stamped `ts` (s). */
function ferriteBody(checks: number, b: number, ts: number): string {
  const lines: string[] = [];
  for (let i = b * LINES_PER_BODY; i < Math.min(checks * NAMES, (b + 1) * LINES_PER_BODY); i++) {
    const c = Math.floor(i / NAMES);
    const t = tagsOf(c);
    lines.push(`M\t${ts}.000\tbench\`bench\`c_${ACCOUNT}_${c}::bench\`${uuidOf(c)}\tm${i % NAMES}|ST[host:${t.host},region:${t.region},service:${t.service}]\tn\t1`);
  }
  return lines.join('\n');
}

function vmBody(checks: number, b: number, ts: number): string {
  const lines: string[] = [];
  for (let i = b * LINES_PER_BODY; i < Math.min(checks * NAMES, (b + 1) * LINES_PER_BODY); i++) {
    const c = Math.floor(i / NAMES);
    const t = tagsOf(c);
    lines.push(`m${i % NAMES}{check="${uuidOf(c)}",host="${t.host}",region="${t.region}",service="${t.service}"} 1 ${ts * 1000}`);
  }
  return lines.join('\n') + '\n';
}

interface Side {
  url: string;
  /** One request's result count. */
  run(url: string, start: number): Promise<number>;
}

interface Query {
  name: string;
  ferrite: Side;
  vm: Side;
}

const enc = encodeURIComponent;

async function json<T>(res: Response, what: string): Promise<T> {
  if (res.status !== 200) throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

const noLimit = { headers: { 'x-svc-advisory-limit': 'none' } };
const ferriteTags = (query: string): Side => ({
  url: query,
  run: async (url) => (await json<unknown[]>(await fetch(`${url}/find/${ACCOUNT}/tags?query=${enc(query)}`, noLimit), 'ferrite find')).length,
});
const ferriteCount = (query: string): Side => ({
  url: query,
  run: async (url) => (await json<{ count: number }>(await fetch(`${url}/find/${ACCOUNT}/tags?count_only=1&query=${enc(query)}`, noLimit), 'ferrite count')).count,
});
const ferriteList = (what: string, query: string, extra = ''): Side => ({
  url: query,
  run: async (url) => (await json<string[]>(await fetch(`${url}/find/${ACCOUNT}/${what}?query=${enc(query)}${extra}`, noLimit), `ferrite ${what}`)).length,
});
const window = (start: number) => `start=${start - 3600}&end=${start + 7200}`;
const vmSeries = (selector: string): Side => ({
  url: selector,
  run: async (url, start) => (await json<{ data: unknown[] }>(await fetch(`${url}/api/v1/series?match[]=${enc(selector)}&${window(start)}`), 'VM series')).data.length,
});
/** VM's labels include `__name__` and the check label, which ferrite reports as `__name` / `__check_uuid` (not categories). */
const vmLabels = (selector: string): Side => ({
  url: selector,
  run: async (url, start) => (await json<{ data: string[] }>(await fetch(`${url}/api/v1/labels?match[]=${enc(selector)}&${window(start)}`), 'VM labels')).data.filter((l) => l !== '__name__' && l !== 'check').length,
});
const vmValues = (label: string, selector: string): Side => ({
  url: selector,
  run: async (url, start) => (await json<{ data: string[] }>(await fetch(`${url}/api/v1/label/${label}/values?match[]=${enc(selector)}&${window(start)}`), 'VM label values')).data.length,
});

const QUERIES: Query[] = [
  { name: 'selective: `and(__name:m3,host:h42)`', ferrite: ferriteTags('and(__name:m3,host:h42)'), vm: vmSeries('{__name__="m3",host="h42"}') },
  { name: 'broad glob: `and(__name:m*,host:h12*)`', ferrite: ferriteTags('and(__name:m*,host:h12*)'), vm: vmSeries('{__name__=~"m.*",host=~"h12.*"}') },
  { name: 'regex: `and(__name:/^m[2-4]$/,host:/^h1[0-9]$/)`', ferrite: ferriteTags('and(__name:/^m[2-4]$/,host:/^h1[0-9]$/)'), vm: vmSeries('{__name__=~"m[2-4]",host=~"h1[0-9]"}') },
  { name: 'count_only: `and(__name:m*,host:h12*)`', ferrite: ferriteCount('and(__name:m*,host:h12*)'), vm: vmSeries('{__name__=~"m.*",host=~"h12.*"}') },
  { name: 'count_only, 1/5 of all: `and(region:r1)`', ferrite: ferriteCount('and(region:r1)'), vm: vmSeries('{region="r1"}') },
  { name: 'tag_cats: `and(host:h12*)`', ferrite: ferriteList('tag_cats', 'and(host:h12*)'), vm: vmLabels('{host=~"h12.*"}') },
  { name: 'tag_vals host: `and(__name:m3,host:h1*)`', ferrite: ferriteList('tag_vals', 'and(__name:m3,host:h1*)', '&category=host'), vm: vmValues('host', '{__name__="m3",host=~"h1.*"}') },
];

function percentiles(ms: number[]): { p50: number; p99: number } {
  return { p50: ms[Math.floor(ms.length / 2)]!, p99: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]! };
}

/** Sends every body once (4 in flight), waiting out 503s (load shedding) as Retry-After asks; seconds taken. */
async function loadAll(url: string, bodies: number, body: (b: number) => string, method: string): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  let refused = 0;
  const worker = async () => {
    for (let b = next++; b < bodies; b = next++) {
      const text = body(b);
      for (;;) {
        const res = await fetch(url, { method, body: text });
        const answer = await res.text();
        if (res.status < 300) break;
        if (res.status !== 503) throw new Error(`${url} answered ${res.status}: ${answer.slice(0, 200)}`);
        refused++;
        await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  if (refused > 0) console.log(`${url}: ${refused} requests refused with 503 and retried while loading`);
  return (performance.now() - t0) / 1000;
}

/** A writer adding samples to existing series at `perSecond`, until stopped; resolves with samples sent. */
function backgroundLoad(url: string, method: string, bodies: number, body: (b: number, ts: number) => string, perSecond: number, ts0: number): () => Promise<number> {
  let stopped = false;
  let sent = 0;
  const interval = (LINES_PER_BODY / perSecond) * 1000;
  const loop = (async () => {
    let next = performance.now();
    for (let k = 0; !stopped; k++) {
      try {
        const res = await fetch(url, { method, body: body(k % bodies, ts0 + 10 * (1 + Math.floor(k / bodies))) });
        await res.arrayBuffer();
        if (res.status < 300) sent += LINES_PER_BODY;
      } catch {
        // A write refused before its body was read (load shedding) may reset the connection.
      }
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return sent;
  };
}

function currentRss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

interface Timings {
  count: number;
  p50: number;
  p99: number;
}

/** Each query `rounds` times against one system while its background writer runs. */
async function measure(sys: Running, side: (q: Query) => Side, start: number, rounds: number, writer: () => Promise<number>): Promise<{ timings: Timings[]; written: number; seconds: number }> {
  const t0 = performance.now();
  const timings: Timings[] = [];
  try {
    for (const q of QUERIES) {
      const s = side(q);
      const { first, ms } = await timeRounds(() => s.run(sys.url, start), rounds);
      timings.push({ count: first, ...percentiles(ms) });
    }
  } catch (error) {
    await writer();
    throw error;
  }
  const written = await writer();
  return { timings, written, seconds: (performance.now() - t0) / 1000 };
}

async function main(): Promise<void> {
  const o = new Command('bench-find')
    .option('--checks <n>', 'checks (10 series each)', (v) => Number(v), 100_000)
    .option('--rounds <n>', 'timed repetitions of each query', (v) => Number(v), 100)
    .option('--load <fraction>', 'background ingest while querying, as a fraction of the rate each system loaded at', (v) => Number(v), 0.5)
    .option('--no-vm', 'skip VictoriaMetrics')
    .parse()
    .opts<Options>();
  const series = o.checks * NAMES;
  const bodies = Math.ceil(series / LINES_PER_BODY);
  const ts = Math.floor(Date.now() / 1000) - 1800;
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-'));
  console.log(`bench/find: ${series} series (${o.checks} checks × ${NAMES} names; ${HOSTS} hosts, ${REGIONS} regions, ${SERVICES} services), ${o.rounds} rounds per query, background ingest at ${o.load} of each system's load rate`);
  console.log(`load average at start: ${loadAverage()}`);
  const withVm = o.vm && victoriaMetricsAvailable();
  let ferrite = await startFerrite(path.join(root, 'ferrite'), [], 600_000);
  // VictoriaMetrics refuses searches matching more than 30k series unless told otherwise.
  const vm = withVm ? await startVictoriaMetrics(path.join(root, 'vm'), ['-search.maxSeries=100000000', '-search.maxUniqueTimeseries=100000000']) : null;
  const rows: string[] = [];
  try {
    const fLoad = await loadAll(`${ferrite.url}/raw`, bodies, (b) => ferriteBody(o.checks, b, ts), 'PUT');
    const fRssLoaded = currentRss(ferrite.child.pid!);
    console.log(`ferrite loaded in ${fLoad.toFixed(1)} s (${(series / fLoad).toFixed(0)} series/s), RSS ${(fRssLoaded / 2 ** 20).toFixed(0)} MiB; load average ${loadAverage()}`);
    let vLoad = 0;
    if (vm !== null) {
      vLoad = await loadAll(`${vm.url}/api/v1/import/prometheus`, bodies, (b) => vmBody(o.checks, b, ts), 'POST');
      await fetch(`${vm.url}/internal/force_flush`);
      // Series become searchable once VictoriaMetrics has registered them all.
      while ((await vmSeries('{__name__="m0"}').run(vm.url, ts)) < o.checks) await new Promise((r) => setTimeout(r, 200));
      console.log(`VictoriaMetrics loaded in ${vLoad.toFixed(1)} s (${(series / vLoad).toFixed(0)} series/s); load average ${loadAverage()}`);
    }
    const fRate = (series / fLoad) * o.load;
    const f = await measure(ferrite, (q) => q.ferrite, ts, o.rounds, o.load > 0 ? backgroundLoad(`${ferrite.url}/raw`, 'PUT', bodies, (b, t) => ferriteBody(o.checks, b, t), fRate, ts) : async () => 0);
    console.log(`ferrite queried for ${f.seconds.toFixed(0)} s while taking ${(f.written / f.seconds).toFixed(0)} samples/s (target ${fRate.toFixed(0)}); load average ${loadAverage()}`);
    let v: Awaited<ReturnType<typeof measure>> | null = null;
    if (vm !== null) {
      const vRate = (series / vLoad) * o.load;
      v = await measure(vm, (q) => q.vm, ts, o.rounds, o.load > 0 ? backgroundLoad(`${vm.url}/api/v1/import/prometheus`, 'POST', bodies, (b, t) => vmBody(o.checks, b, t), vRate, ts) : async () => 0);
      console.log(`VictoriaMetrics queried for ${v.seconds.toFixed(0)} s while taking ${(v.written / v.seconds).toFixed(0)} samples/s (target ${vRate.toFixed(0)}); load average ${loadAverage()}`);
    }
    console.log('\n| query | results | ferrite p50 ms | ferrite p99 ms | VM p50 ms | VM p99 ms | VM/ferrite p50 | VM/ferrite p99 |');
    console.log('|---|---|---|---|---|---|---|---|');
    const fmt = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));
    QUERIES.forEach((q, i) => {
      const a = f.timings[i]!;
      const b = v?.timings[i];
      const mismatch = b !== undefined && b.count !== a.count ? ` (VM: ${b.count})` : '';
      console.log(`| ${q.name} | ${a.count}${mismatch} | ${fmt(a.p50)} | ${fmt(a.p99)} | ${fmt(b?.p50)} | ${fmt(b?.p99)} | ${b ? (b.p50 / a.p50).toFixed(2) : '–'} | ${b ? (b.p99 / a.p99).toFixed(2) : '–'} |`);
      recordFigure({ bench: 'find', measure: `${q.name}, ${series} series (p50)`, unit: 'ms', ferrite: a.p50, peer: b?.p50 ?? null, better: 'lower' });
    });
    const fRss = { now: currentRss(ferrite.child.pid!), peak: peakRss(ferrite.child.pid!) };
    const vRss = vm === null ? null : { now: currentRss(vm.child.pid!), peak: peakRss(vm.child.pid!) };
    await ferrite.stop();
    const fDisk = diskBytes(ferrite.dataDir);
    // Restart: the index is rebuilt from the name records before the node listens.
    const t0 = performance.now();
    ferrite = await startFerrite(ferrite.dataDir, [], 600_000);
    const restartS = (performance.now() - t0) / 1000;
    const index = (await json<{ index: { load_ms: number; load_cpu_ms: number; metrics: number } }>(await fetch(`${ferrite.url}/state`), 'ferrite state')).index;
    const after = await timeRounds(() => QUERIES[0]!.ferrite.run(ferrite.url, ts), o.rounds);
    const restartRss = currentRss(ferrite.child.pid!);
    rows.push(`| ferrite | ${fLoad.toFixed(1)} | ${(fDisk / 2 ** 20).toFixed(1)} | ${(fRssLoaded / 2 ** 20).toFixed(0)} | ${(fRss.now / 2 ** 20).toFixed(0)} | ${(fRss.peak / 2 ** 20).toFixed(0)} |`);
    if (vm !== null && vRss !== null) {
      await vm.stop();
      rows.push(`| victoria-metrics | ${vLoad.toFixed(1)} | ${(diskBytes(vm.dataDir) / 2 ** 20).toFixed(1)} | – | ${(vRss.now / 2 ** 20).toFixed(0)} | ${(vRss.peak / 2 ** 20).toFixed(0)} |`);
    }
    console.log('\n| system | load s | disk MiB (after stop) | RSS after load MiB | RSS after queries MiB | peak RSS MiB |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);
    recordFigure({ bench: 'find', measure: `load ${series} series`, unit: 's', ferrite: fLoad, peer: vm === null ? null : vLoad, better: 'lower' });
    recordFigure({ bench: 'find', measure: `peak RSS, ${series} series`, unit: 'MiB', ferrite: fRss.peak / 2 ** 20, peer: vRss === null ? null : vRss.peak / 2 ** 20, better: 'lower' });
    const p = percentiles(after.ms);
    console.log(
      `\nferrite restart: ${restartS.toFixed(1)} s to listening, index of ${index.metrics} series loaded in ${(index.load_ms / 1000).toFixed(1)} s, ${(index.load_cpu_ms / 1000).toFixed(1)} s of CPU (${(index.load_cpu_ms / 1000 / (index.metrics / 1e6)).toFixed(1)} CPU s per million); RSS after restart ${(restartRss / 2 ** 20).toFixed(0)} MiB; selective query after restart p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms (idle)`,
    );
    console.log(`load average at end: ${loadAverage()}`);
  } finally {
    await ferrite.stop();
    await vm?.stop();
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

await main();
