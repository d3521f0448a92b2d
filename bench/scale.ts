// bench/scale (`npm run bench:scale -- --series N`, issue 30): N series (default 1M) × 11
// scrapes 10 s apart, sent scrape-major (every series' sample k acknowledged before any sample
// k + 1 is sent), to ferrite (`ferrite serve`, no memory flags) and to VictoriaMetrics, one
// after the other on the same machine, each on its defaults. For each: load rate until every
// write is acknowledged, peak RSS of the process tree, a 1000-series read over the whole range,
// bytes on disk after a graceful stop, and the time from starting again to the first exact read
// of one known series. Every read is checked sample for sample; a wrong read fails the run.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodiesLazy, ferriteName, prepared, send, UUID, valueOf, vmBodiesLazy, type Bodies, type Dataset } from './dataset.js';
import { diskBytes, requireShippedNode, startFerrite, startVictoriaMetrics, treePeakRss, victoriaMetricsAvailable, watchTreePeakRss, type Running } from './peers.js';
import { keepFiguresIn, recordFigure } from './summary.js';
import { timeRounds } from './timing.js';

/** Scrapes of every series (`--scrapes`; 11 is the figure). */
let scrapes = 11;
const STEP_S = 10;
/** Series in the timed read, spread evenly over all of them. */
const READ_SERIES = 1000;
/** How long a system may take to make acknowledged samples readable, or to come back up. */
const PATIENCE_MS = 600_000;

interface Options {
  series: number;
  scrapes: number;
  batch: number;
  concurrency: number;
  rounds: number;
  vm: boolean;
  ferrite: boolean;
  figures?: string;
  heapSnapshots?: string;
}

/** Sample values per series, in scrape order; what every read must return exactly. */
type Samples = number[][];

/** What a system answers for a set of series over the whole range, series in the order asked. */
type RangeRead = (url: string, series: number[]) => Promise<Samples>;

interface System {
  label: string;
  /** Starts on `dir`, which may hold a previous run's data; resolves once it answers HTTP. */
  start(dir: string): Promise<Running>;
  bodies(d: Dataset): Bodies;
  /** Path and method that take `bodies`. */
  write: { path: string; method: string };
  read: RangeRead;
  /** Where the server's memory goes, as it reports it (one line). */
  memory?: (url: string) => Promise<string>;
  /** Writes heap snapshots of the server's threads into `dir`; their paths. */
  heapSnapshots?: (url: string, dir: string) => Promise<string[]>;
}

interface Result {
  label: string;
  /** Samples per second from the first write sent to the last acknowledged. */
  loadRate: number;
  /** Seconds from the last acknowledgement until the timed read first came back exact. */
  readableAfterS: number;
  /** Requests refused with 503 and sent again after Retry-After. */
  refused: number;
  peakRssMiB: number;
  /** Peak RSS up to the end of the graceful stop after the load (a stop that seals every buffer may need more than the load did). */
  stopPeakRssMiB: number;
  /** Median of the timed rounds of the 1000-series read, ms. */
  readMs: number;
  diskBytes: number;
  /** Seconds from starting the process again to the first exact read of one series. */
  restartS: number;
  /** Seconds a graceful stop took after the load. */
  stopS: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (bytes: number) => bytes / 2 ** 20;

/** The values series m must hold, one per scrape. */
const expected = (m: number): number[] => Array.from({ length: scrapes }, (_, i) => valueOf(m, i));

/** Throws unless every series read back holds exactly its 11 values, in order. */
function checkExact(who: string, series: number[], got: Samples): void {
  if (got.length !== series.length) throw new Error(`${who}: ${got.length} series read back, ${series.length} asked`);
  series.forEach((m, s) => {
    const want = expected(m);
    const row = got[s]!;
    if (row.length !== want.length || row.some((v, i) => v !== want[i])) throw new Error(`${who}: series ${m} read back [${row.join(', ')}], expected [${want.join(', ')}]`);
  });
}

/** `read` repeated until it comes back exact (a system may acknowledge before it can read); ms waited. */
async function untilExact(who: string, read: () => Promise<Samples>, series: number[], server: Running): Promise<number> {
  const t0 = performance.now();
  let last: unknown;
  let told = t0;
  while (performance.now() - t0 < PATIENCE_MS) {
    // A server that died (the kernel's OOM killer leaves no message) fails the run now, not after the patience runs out.
    if (exited(server)) throw new Error(`${who}: the server exited (code ${server.child.exitCode}, signal ${server.child.signalCode})`);
    try {
      checkExact(who, series, await read());
      return performance.now() - t0;
    } catch (error) {
      if (error instanceof BadRead) throw error;
      last = error;
      // A long wait says why, so a run at scale that is stuck can be told from one that is slow.
      if (performance.now() - told > 30_000) {
        told = performance.now();
        console.log(`${who}: not exact yet after ${((told - t0) / 1000).toFixed(0)} s: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`);
      }
      await sleep(100);
    }
  }
  throw new Error(`${who}: no exact read after ${PATIENCE_MS / 1000} s; last: ${last instanceof Error ? last.message : String(last)}`);
}

/** A read the server refused as malformed (4xx): asking again cannot help. */
class BadRead extends Error {}

/** Longest a single read may take before it counts as failed (ferrite's own deadline is 60 s). */
const READ_TIMEOUT_MS = 120_000;

async function json(url: string, init?: RequestInit): Promise<any> {
  // A server that stops answering mid-request must not hang the bench past its patience.
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  if (res.status === 200) return res.json();
  // The tail, where the reason is: the head of a long query's error repeats the query.
  const message = `${url} answered ${res.status}: …${(await res.text()).slice(-300)}`;
  throw res.status >= 400 && res.status < 500 ? new BadRead(message) : new Error(message);
}

/** ferrite: one /fetch of every series, `average` over 10 s slots (one sample each), no reduce. */
function ferriteRead(start: number): RangeRead {
  return async (url, series) => {
    const body = {
      start,
      period: STEP_S,
      count: scrapes,
      streams: series.map((m) => ({ uuid: UUID, name: ferriteName(m), kind: 'numeric', transform: 'average', transform_params: [] })),
      reduce: [],
    };
    // DF4 with `pass`: data[s] is stream s's slots, in the order asked; an empty slot is null.
    const doc = (await json(`${url}/fetch`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })) as { data: (number | null)[][] };
    return doc.data.map((row) => row.filter((v): v is number => v !== null));
  };
}

/** ferrite's /state memory figures: each thread's heap (in use / held from the OS), open buffers, RSS. */
async function ferriteMemory(url: string): Promise<string> {
  interface Heap {
    heap_used_bytes: number;
    heap_committed_bytes: number;
  }
  const state = (await json(`${url}/state`)) as Heap & {
    rss_bytes: number;
    shards: (Heap & { array_buffers_bytes: number; open_buffers: number; open_buffer_bytes: { allocated: number } })[];
    parse_workers: Heap[];
  };
  const m = (b: number) => `${mib(b).toFixed(0)} MiB`;
  const heap = (h: Heap) => `heap ${m(h.heap_used_bytes)} used / ${m(h.heap_committed_bytes)} held`;
  const shards = state.shards.map((s, i) => `shard ${i} ${heap(s)} + array buffers ${m(s.array_buffers_bytes)} (open buffers ${s.open_buffers}, pooled ${m(s.open_buffer_bytes.allocated)})`);
  const parse = state.parse_workers.map((w, i) => `parse ${i} ${heap(w)}`);
  return [`RSS ${m(state.rss_bytes)}`, `main ${heap(state)}`, ...shards, ...parse].join('; ');
}

/** ferrite's threads' heap snapshots (POST /admin/heap-snapshot), moved out of the data dir into `dir`. */
async function ferriteHeapSnapshots(url: string, dir: string): Promise<string[]> {
  const state = (await json(`${url}/state`)) as { shards: unknown[]; parse_workers: unknown[] };
  const threads = ['main', ...state.shards.map((_, i) => String(i)), ...state.parse_workers.map((_, i) => `parse${i}`)];
  mkdirSync(dir, { recursive: true });
  const out: string[] = [];
  for (const of of threads) {
    const written = (await json(`${url}/admin/heap-snapshot?of=${of}`, { method: 'POST' })) as { path: string };
    const to = path.join(dir, path.basename(written.path));
    // Copied, not renamed: the data dir and `dir` may be on different file systems.
    copyFileSync(written.path, to);
    rmSync(written.path);
    out.push(to);
  }
  return out;
}

/** ferrite: the raw samples of one series (what the restart check reads). */
async function ferriteRaw(url: string, m: number, start: number): Promise<Samples> {
  const rows = (await json(`${url}/raw/${UUID}/${encodeURIComponent(ferriteName(m))}?start_ts=${start}&end_ts=${start + scrapes * STEP_S}`)) as [number, number][];
  return [rows.map(([, v]) => v)];
}

/**
 * VictoriaMetrics: one query_range of the same series by name, step 10 s over the scrape
 * timestamps; each point is the series' last sample at or before it, i.e. the sample at it.
 */
function vmRead(start: number): RangeRead {
  return async (url, series) => {
    const names = series.map((m) => `bench_metric_${m}`);
    // The common prefix once: 1000 whole names would pass VictoriaMetrics' default query length limit (16 KiB).
    const form = new URLSearchParams({ query: `{__name__=~"bench_metric_(${series.join('|')})"}`, start: String(start), end: String(start + (scrapes - 1) * STEP_S), step: `${STEP_S}s` });
    const doc = (await json(`${url}/api/v1/query_range`, { method: 'POST', body: form })) as { data: { result: { metric: { __name__: string }; values: [number, string][] }[] } };
    const byName = new Map(doc.data.result.map((r) => [r.metric.__name__, r.values.map(([, v]) => Number(v))]));
    return names.map((n) => byName.get(n) ?? []);
  };
}

/** The bodies of scrape k: batches never straddle scrapes, because the batch size divides the series count. */
function scrape(all: Bodies, k: number, perScrape: number): Bodies {
  return { length: perScrape, at: (i) => all.at(k * perScrape + i) };
}

/** Sends every scrape in turn, each wholly acknowledged before the next; seconds taken and 503s waited out. */
async function load(url: string, s: System, d: Dataset, o: Options): Promise<{ seconds: number; refused: number }> {
  // Made before the clock starts, so the client's formatting does not compete with the server.
  const bodies = prepared(s.bodies(d));
  const perScrape = o.series / o.batch;
  let refused = 0;
  const t0 = performance.now();
  // A refused write (ferrite sheds load past its write latency budget) is retried after Retry-After, inside the clock.
  const each: number[] = [];
  for (let k = 0; k < scrapes; k++) {
    const t = performance.now();
    refused += await send(`${url}${s.write.path}`, scrape(bodies, k, perScrape), o.concurrency, s.write.method, {}, true);
    each.push((performance.now() - t) / 1000);
  }
  // The first scrape creates every series; the others only add samples: where the time goes differs.
  console.log(`${s.label}: seconds per scrape ${each.map((x) => x.toFixed(1)).join(' ')}`);
  return { seconds: (performance.now() - t0) / 1000, refused };
}

const exited = (r: Running): boolean => r.child.exitCode !== null || r.child.signalCode !== null;

/** How long a graceful stop may take before the server is killed (a wedged server must not hang the bench). */
const STOP_PATIENCE_MS = 300_000;

/** Stops gracefully; seconds taken. One that has not exited in time is killed, and the run says so. */
async function stop(r: Running): Promise<number> {
  if (exited(r)) return 0;
  const t0 = performance.now();
  let killed = false;
  const kill = setTimeout(() => {
    killed = true;
    r.child.kill('SIGKILL');
  }, STOP_PATIENCE_MS);
  await r.stop();
  clearTimeout(kill);
  if (killed) console.log(`${r.name}: KILLED after ${STOP_PATIENCE_MS / 1000} s of graceful stop`);
  return (performance.now() - t0) / 1000;
}

async function measure(s: System, dir: string, d: Dataset, o: Options): Promise<Result> {
  const readSeries = Array.from({ length: Math.min(READ_SERIES, o.series) }, (_, j) => Math.floor((j * o.series) / Math.min(READ_SERIES, o.series)));
  const known = o.series - 1; // written last in every scrape
  let running = await s.start(dir);
  try {
    const { seconds: loadS, refused } = await load(running.url, s, d, o);
    console.log(`${s.label}: ${o.series * scrapes} samples acknowledged in ${loadS.toFixed(1)} s (${refused} requests refused with 503 and sent again)`);
    const read = () => s.read(running.url, readSeries);
    const readableAfterS = (await untilExact(`${s.label} ${readSeries.length}-series read`, read, readSeries, running)) / 1000;
    const { ms } = await timeRounds(async () => checkExact(`${s.label} ${readSeries.length}-series read`, readSeries, await read()), o.rounds);
    const peak = treePeakRss(running.child.pid!);
    if (s.memory !== undefined) console.log(`${s.label}: memory after the load: ${await s.memory(running.url)}`);
    if (s.heapSnapshots !== undefined && o.heapSnapshots !== undefined) console.log(`${s.label}: heap snapshots after the load: ${(await s.heapSnapshots(running.url, o.heapSnapshots)).join(', ')}`);
    // Each figure printed as soon as it exists: a restart that never reads back must not take them with it.
    console.log(`${s.label}: readable ${readableAfterS.toFixed(2)} s after the last acknowledgement; ${readSeries.length}-series read median ${ms[Math.floor((ms.length - 1) / 2)]!.toFixed(1)} ms; peak RSS ${mib(peak).toFixed(0)} MiB`);
    const peakWatch = watchTreePeakRss(running.child.pid!);
    const stopS = await stop(running);
    const stopPeak = Math.max(peak, peakWatch.stop());
    const disk = diskBytes(dir);
    console.log(`${s.label}: stopped in ${stopS.toFixed(1)} s; ${mib(disk).toFixed(1)} MiB on disk after the graceful stop; starting again`);
    const t0 = performance.now();
    running = await s.start(dir);
    const readKnown = s.label === 'ferrite' ? () => ferriteRaw(running.url, known, d.start) : () => s.read(running.url, [known]);
    await untilExact(`${s.label} read after restart`, readKnown, [known], running);
    const restartS = (performance.now() - t0) / 1000;
    const r: Result = { label: s.label, loadRate: (o.series * scrapes) / loadS, readableAfterS, refused, peakRssMiB: mib(peak), stopPeakRssMiB: mib(stopPeak), readMs: ms[Math.floor((ms.length - 1) / 2)]!, diskBytes: disk, restartS, stopS };
    // Printed as it comes: a run that fails later still leaves this system's figures.
    console.log(`${s.label}: ${JSON.stringify(r)}`);
    return r;
  } finally {
    await stop(running);
  }
}

function systems(o: Options, start: number): System[] {
  const out: System[] = [];
  if (o.ferrite) {
    out.push({
      label: 'ferrite',
      // The index of a million series takes a while to reload: wait for readiness as long as for data.
      start: (dir) => startFerrite(dir, [], PATIENCE_MS),
      bodies: ferriteBodiesLazy,
      write: { path: '/raw', method: 'PUT' },
      read: ferriteRead(start),
      memory: ferriteMemory,
      heapSnapshots: ferriteHeapSnapshots,
    });
  }
  if (!o.vm) console.log('VictoriaMetrics skipped (--no-vm)');
  else if (!victoriaMetricsAvailable()) console.log('VictoriaMetrics not installed (apt-get install victoria-metrics): skipping that side');
  else out.push({ label: 'victoria-metrics', start: (dir) => startVictoriaMetrics(dir), bodies: vmBodiesLazy, write: { path: '/api/v1/import/prometheus', method: 'POST' }, read: vmRead(start) });
  return out;
}

function report(results: Result[], o: Options): void {
  const [f, v] = [results.find((r) => r.label === 'ferrite'), results.find((r) => r.label === 'victoria-metrics')];
  const samples = o.series * scrapes;
  const rows: { measure: string; unit: string; of: (r: Result) => number; better: 'higher' | 'lower'; digits: number }[] = [
    { measure: 'load rate until every write acknowledged', unit: 'samples/s', of: (r) => r.loadRate, better: 'higher', digits: 0 },
    { measure: 'peak RSS, process tree', unit: 'MiB', of: (r) => r.peakRssMiB, better: 'lower', digits: 0 },
    { measure: 'peak RSS through the graceful stop', unit: 'MiB', of: (r) => r.stopPeakRssMiB, better: 'lower', digits: 0 },
    { measure: `${Math.min(READ_SERIES, o.series)}-series read, whole range (median of ${o.rounds})`, unit: 'ms', of: (r) => r.readMs, better: 'lower', digits: 1 },
    { measure: 'bytes on disk after a graceful stop', unit: 'MiB', of: (r) => mib(r.diskBytes), better: 'lower', digits: 1 },
    { measure: 'bytes on disk per sample', unit: 'B', of: (r) => r.diskBytes / samples, better: 'lower', digits: 2 },
    { measure: 'graceful stop after the load', unit: 's', of: (r) => r.stopS, better: 'lower', digits: 1 },
    { measure: 'restart to first exact read', unit: 's', of: (r) => r.restartS, better: 'lower', digits: 2 },
    { measure: 'acknowledged to readable (1000-series read exact)', unit: 's', of: (r) => r.readableAfterS, better: 'lower', digits: 2 },
  ];
  // Not a figure to compare, but it explains the load rate: each refusal costs its writer a Retry-After.
  const refusals = (r: Result | undefined) => (r === undefined ? '–' : String(r.refused));
  const refusedRow = `| write requests refused (503) and sent again | ${refusals(f)} | ${refusals(v)} | – |`;
  const fmt = (x: number | undefined, digits: number) => (x === undefined ? '–' : x.toFixed(digits));
  console.log(`\n| ${o.series} series × ${scrapes} scrapes | ferrite | VictoriaMetrics | ratio ferrite / VM |\n|---|---|---|---|`);
  for (const row of rows) {
    const [a, b] = [f && row.of(f), v && row.of(v)];
    console.log(`| ${row.measure} (${row.unit}) | ${fmt(a, row.digits)} | ${fmt(b, row.digits)} | ${a === undefined || b === undefined ? '–' : (a / b).toFixed(2)} |`);
    if (a !== undefined) recordFigure({ bench: 'scale', measure: `${row.measure}, ${o.series} series × ${scrapes}`, unit: row.unit, ferrite: a, peer: b ?? null, better: row.better });
  }
  console.log(refusedRow);
}

async function main(): Promise<void> {
  const o = new Command('bench-scale')
    .option('--series <n>', 'series', (v) => Number(v), 1_000_000)
    .option('--scrapes <n>', 'scrapes of every series, 10 s apart (more than 11 shows what open buffers hold over an hour)', (v) => Number(v), 11)
    .option('--batch <n>', 'lines per request (must divide --series)', (v) => Number(v), 5000)
    .option('--concurrency <n>', 'requests in flight within a scrape', (v) => Number(v), 4)
    .option('--rounds <n>', 'timed repetitions of the 1000-series read', (v) => Number(v), 10)
    .option('--no-vm', 'skip VictoriaMetrics')
    .option('--no-ferrite', 'skip ferrite (to look at the peer alone)')
    .option('--heap-snapshots <dir>', "after the load, copy V8 heap snapshots of ferrite's threads into this directory (summarise them with bench/heap-summary.ts)")
    .option('--figures <file>', 'append the headline figures to this JSON-lines file (replacing this bench\'s earlier rows)')
    .parse()
    .opts<Options>();
  requireShippedNode(); // before anything runs, not after the peer's half
  scrapes = o.scrapes;
  o.batch = Math.min(o.batch, o.series);
  if (o.series % o.batch !== 0) throw new Error(`--batch ${o.batch} must divide --series ${o.series}, so no request holds two scrapes`);
  if (o.figures !== undefined) keepFiguresIn(o.figures, 'scale');
  // Recent enough for both systems' default retention, aligned to the step so VictoriaMetrics' points land on the samples.
  const start = Math.floor(Date.now() / 1000 / STEP_S) * STEP_S - scrapes * STEP_S - 60;
  const d: Dataset = { metrics: o.series, points: scrapes, stepS: STEP_S, start, batch: o.batch };
  console.log(`bench/scale: ${o.series} series × ${scrapes} scrapes ${STEP_S} s apart (${o.series * scrapes} samples), ${o.batch} lines/request, ${o.concurrency} in flight`);
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-scale-'));
  const results: Result[] = [];
  const failures: string[] = [];
  try {
    for (const s of systems(o, start)) {
      try {
        results.push(await measure(s, path.join(root, s.label), d, o));
      } catch (error) {
        // The other system still runs, so a failing side leaves the figures it can.
        failures.push(`${s.label}: ${error instanceof Error ? error.message : String(error)}`);
        console.log(`${s.label} FAILED: ${failures.at(-1)}`);
      }
      rmSync(path.join(root, s.label), { recursive: true, force: true });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  report(results, o);
  if (failures.length > 0) {
    console.log(`\nfailed:\n${failures.join('\n')}`);
    process.exitCode = 1;
  }
}

await main();
