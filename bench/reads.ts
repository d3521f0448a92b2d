// bench/reads (`npm run bench:rollup`, `npm run bench:fetch`): reading 100 numeric
// metrics × one day at 60 s from ferrite (GET /rollup per metric; POST /fetch with
// `average` + `pass`, and with a `sum` reduce) and from VictoriaMetrics (query_range with
// avg_over_time; sum(...)) on the same samples in the same run; then 100 metrics × 30 days
// read at 1 h. ferrite keeps raw data for 3 days here (`rawRetention`), so the day is read from
// raw (periods computed on the fly, `dispatch`) and the month mostly from the rollups its raw
// data was aged into, its last day from raw. Every read's values are checked equal between
// the two systems. Also measured: how long ferrite takes to age the month after a restart,
// and /fetch latency idle and under a steady ingest load. Prints medians and the ratios
// (VictoriaMetrics latency / ferrite latency: > 1 means ferrite is faster).
//
// `--cache cold` compares cold to cold: ferrite with its rollup read caches off
// (`rollupCacheBytes: 0`, `fetchCacheBytes: 0`) against VictoriaMetrics with `-search.disableCache`; `--cache warm`
// compares cache to cache (both with their caches, each read repeated); `both` runs the two.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodies, ferriteName, send, UUID, vmBodies, type Dataset } from './dataset.js';
import { timeRounds } from './timing.js';
import { diskBytes, diskByKindLine, startFerrite, startVictoriaMetrics, victoriaMetricsAvailable } from './peers.js';
import { recordFigure } from './summary.js';

interface Options {
  metrics: number;
  stepS: number;
  rounds: number;
  scenario: 'rollup' | 'fetch' | 'all';
  vm: boolean;
  month: boolean;
  load: boolean;
  cache: 'cold' | 'warm' | 'both';
}

/** Raw data kept by ferrite in this bench: the day stays raw, the month (but its last day or so) is aged. */
const RAW_RETENTION_S = 3 * 86_400;

const DAY_S = 86_400;
const PERIOD_S = 60;
const MONTH_DAYS = 30;
const MONTH_STEP_S = 300;
const MONTH_PERIOD_S = 3600;

/** Values per stream and slot (NaN = no value), streams in metric order. */
type Matrix = number[][];
/** One timed read; its answer is checked against the other system's. */
type Read = () => Promise<Matrix>;

interface Scenario {
  name: string;
  ferrite: Read;
  vm: Read | null;
  /** Values each read must see (metrics × slots, or slots when reduced to one stream). */
  expect: number;
}

/** A range of slots: [start + i·period, start + (i + 1)·period) for i < count (seconds). */
interface Grid {
  start: number;
  period: number;
  count: number;
}

async function json(url: string, init?: RequestInit, retried = false): Promise<any> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (error) {
    // A keep-alive connection the server closed just as it was reused: ask again, once.
    if (retried || !(error instanceof TypeError)) throw error;
    return json(url, init, true);
  }
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return res.json();
}

/** Runs `reads` with `concurrency` in flight; their rows in order. */
async function all(reads: Read[], concurrency = 8): Promise<Matrix> {
  const out: Matrix[] = new Array(reads.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < reads.length) {
        const i = next++;
        out[i] = await reads[i]!();
      }
    }),
  );
  return out.flat();
}

const cell = (v: unknown): number => (v === null || v === undefined ? NaN : Number(v));

/**
 * VictoriaMetrics' answer as a matrix, points by slot. Rollup functions drop the metric
 * name, so series are told apart by their `host` tag (`h<m>`, unique below 100 metrics).
 */
function vmMatrix(doc: any, grid: Grid, rows: number): Matrix {
  if (rows > 100) throw new Error('VictoriaMetrics answers are matched to metrics by host, which repeats past 100 metrics');
  const out: Matrix = Array.from({ length: rows }, () => new Array<number>(grid.count).fill(NaN));
  for (const r of doc.data.result as { metric: Record<string, string>; values: [number, string][] }[]) {
    const m = rows === 1 ? 0 : Number(r.metric.host?.slice(1));
    for (const [t, v] of r.values) out[m]![Math.round((t - vmFirst(grid)) / grid.period)] = Number(v);
  }
  return out;
}

/**
 * VictoriaMetrics' point at t covers (t − period, t]; ferrite's slot covers [s, s + period).
 * VictoriaMetrics is sent every sample 1 ms late (`vmOffsetMs`) and asked at t = s + period, so
 * the two windows hold the same samples with every query time a multiple of the step (with its
 * cache on, VictoriaMetrics aligns query times to the step).
 */
const vmFirst = (g: Grid): number => g.start + g.period;

function scenarios(o: Options, dayStart: number, ferriteUrl: string, vmUrl: string | null): Scenario[] {
  const metrics = Array.from({ length: o.metrics }, (_, m) => m);
  const day: Grid = { start: dayStart, period: PERIOD_S, count: DAY_S / PERIOD_S };
  const month: Grid = { start: dayStart - MONTH_DAYS * DAY_S, period: MONTH_PERIOD_S, count: (MONTH_DAYS * DAY_S) / MONTH_PERIOD_S };
  const ferriteFetch = (grid: Grid, family: string, reduce: unknown[]) => async () => {
    const body = JSON.stringify({
      ...grid,
      streams: metrics.map((m) => ({ uuid: UUID, name: ferriteName(m, family), kind: 'numeric', transform: 'average', transform_params: [] })),
      reduce,
    });
    const doc = await json(`${ferriteUrl}/fetch`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    return (doc.data as unknown[][]).map((col) => col.map(cell));
  };
  const vmQuery = (grid: Grid, q: string, rows: number) => async () => {
    const range = `start=${vmFirst(grid)}&end=${vmFirst(grid) + (grid.count - 1) * grid.period}&step=${grid.period}s`;
    return vmMatrix(await json(`${vmUrl}/api/v1/query_range?query=${encodeURIComponent(q)}&${range}`), grid, rows);
  };
  const selector = (family: string) => `{__name__=~"bench_${family}_.*"}`;
  const pass = [{ label: '', method: 'pass', method_params: [] }];
  const sum = [{ label: 'sum', method: 'sum', method_params: [] }];
  const out: Scenario[] = [];
  if (o.scenario !== 'fetch') {
    const rollups = (grid: Grid, family: string) => () =>
      all(
        metrics.map((m) => async () => {
          const rows = (await json(`${ferriteUrl}/rollup/${UUID}/${encodeURIComponent(ferriteName(m, family))}?start_ts=${grid.start}.000&end_ts=${grid.start + grid.count * grid.period}.000&rollup_span=${grid.period}s`)) as [number, number | null][];
          return [rows.map(([, v]) => cell(v))];
        }),
      );
    const vmEach = (grid: Grid, family: string) => () => all(metrics.map((m) => async () => [(await vmQuery(grid, `avg_over_time(bench_${family}_${m}[${grid.period}s])`, 1)())[0]!]));
    out.push({
      name: `/rollup × ${o.metrics} vs query_range avg_over_time × ${o.metrics}`,
      expect: o.metrics * day.count,
      ferrite: rollups(day, 'metric'),
      vm: vmUrl === null ? null : vmEach(day, 'metric'),
    });
    if (o.month) {
      out.push({
        name: `/rollup × ${o.metrics} × ${MONTH_DAYS} days at 1 h vs query_range avg_over_time × ${o.metrics}`,
        expect: o.metrics * month.count,
        ferrite: rollups(month, 'month'),
        vm: vmUrl === null ? null : vmEach(month, 'month'),
      });
    }
  }
  if (o.scenario !== 'rollup') {
    out.push({
      name: `/fetch ${o.metrics} streams average + pass vs query_range avg_over_time({…})`,
      expect: o.metrics * day.count,
      ferrite: ferriteFetch(day, 'metric', pass),
      vm: vmUrl === null ? null : vmQuery(day, `avg_over_time(${selector('metric')}[${PERIOD_S}s])`, o.metrics),
    });
    out.push({
      name: `/fetch ${o.metrics} streams average + sum vs query_range sum(avg_over_time({…}))`,
      expect: day.count,
      ferrite: ferriteFetch(day, 'metric', sum),
      vm: vmUrl === null ? null : vmQuery(day, `sum(avg_over_time(${selector('metric')}[${PERIOD_S}s]))`, 1),
    });
    if (o.month) {
      out.push({
        name: `/fetch ${o.metrics} streams × ${MONTH_DAYS} days at 1 h, average + pass`,
        expect: o.metrics * month.count,
        ferrite: ferriteFetch(month, 'month', pass),
        vm: vmUrl === null ? null : vmQuery(month, `avg_over_time(${selector('month')}[1h])`, o.metrics),
      });
      out.push({
        name: `/fetch ${o.metrics} streams × ${MONTH_DAYS} days at 1 h, average + sum`,
        expect: month.count,
        ferrite: ferriteFetch(month, 'month', sum),
        vm: vmUrl === null ? null : vmQuery(month, `sum(avg_over_time(${selector('month')}[1h]))`, 1),
      });
    }
  }
  return out;
}

interface Timing {
  median: number;
  p90: number;
  p99: number;
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
const timing = (ms: number[]): Timing => ({ median: quantile(ms, 0.5), p90: quantile(ms, 0.9), p99: quantile(ms, 0.99) });
const present = (m: Matrix): number => m.reduce((n, row) => n + row.filter((v) => !Number.isNaN(v)).length, 0);

async function time(read: Read, expect: number, rounds: number, who: string): Promise<{ t: Timing; answer: Matrix }> {
  const { first: answer, ms } = await timeRounds(read, rounds); // the warm-up is the correctness check
  if (present(answer) !== expect) throw new Error(`${who}: expected ${expect} values, got ${present(answer)}`);
  return { t: timing(ms), answer };
}

/** Largest relative difference between the two answers; throws when they differ in shape or presence. */
function compare(a: Matrix, b: Matrix, what: string): number {
  let worst = 0;
  if (a.length !== b.length) throw new Error(`${what}: ${a.length} streams against ${b.length}`);
  a.forEach((row, s) =>
    row.forEach((x, i) => {
      const y = b[s]![i]!;
      if (Number.isNaN(x) !== Number.isNaN(y)) throw new Error(`${what}: stream ${s} slot ${i}: ${x} against ${y}`);
      if (!Number.isNaN(x)) worst = Math.max(worst, Math.abs(x - y) / Math.max(1, Math.abs(x), Math.abs(y)));
    }),
  );
  if (worst > 1e-9) throw new Error(`${what}: values differ by up to ${worst} (relative)`);
  return worst;
}

/**
 * Waits until every metric's whole days before `to` (s) are aged into rollups (the stored 1-day
 * level counts every sample); returns seconds waited. Metrics found done are not asked again.
 */
async function waitAged(url: string, metrics: number, family: string, first: number, to: number, stepS: number): Promise<number> {
  const t0 = performance.now();
  const want = DAY_S / stepS;
  const days = Math.floor((to - first) / DAY_S);
  const deadline = Date.now() + 1_200_000;
  const q = `start_ts=${first}.000&end_ts=${first + days * DAY_S}.000&rollup_span=${DAY_S}s&get_engine=nnt&type=count`;
  let pending = Array.from({ length: metrics }, (_, m) => m);
  while (pending.length > 0) {
    const left: number[] = [];
    for (const m of pending) {
      const rows = (await json(`${url}/rollup/${UUID}/${encodeURIComponent(ferriteName(m, family))}?${q}`)) as [number, number | null][];
      if (rows.length !== days || rows.some(([, n]) => n !== want)) left.push(m);
    }
    pending = left;
    if (pending.length === 0) break;
    if (Date.now() > deadline) throw new Error(`ageing incomplete after 20 min (${pending.length}/${metrics} metrics left)`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return (performance.now() - t0) / 1000;
}

/** Sends `samplesPerS` fresh samples a second to ferrite until stopped; returns samples sent. */
function steadyIngest(url: string, metrics: number, samplesPerS: number): { stop(): Promise<number> } {
  let running = true;
  let sent = 0;
  const linesPerBody = 1000;
  const loop = (async () => {
    let t = Math.floor(Date.now() / 1000) - 3600;
    while (running) {
      const started = performance.now();
      const body = Array.from({ length: linesPerBody }, (_, i) => {
        const m = (sent + i) % metrics;
        if (m === 0) t += 1;
        return `M\t${t}.000\tbench.example\`bench\`c_1_1::bench\`${UUID}\t${ferriteName(m, 'live')}\tn\t${(sent + i) % 97}`;
      }).join('\n');
      const res = await fetch(`${url}/raw`, { method: 'PUT', body });
      await res.text();
      if (res.status !== 200) throw new Error(`steady ingest answered ${res.status}`);
      sent += linesPerBody;
      const wait = (linesPerBody / samplesPerS) * 1000 - (performance.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return sent;
    },
  };
}

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const fmt = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));

/** ferrite's config file for this bench: the raw retention, the month aged at once (`ageNow`), caches on or off. */
function ferriteConfig(root: string, o: { ageNow: boolean; cold: boolean }): string[] {
  const file = path.join(root, `ferrite-${o.ageNow ? 'age' : 'read'}-${o.cold ? 'cold' : 'warm'}.json`);
  writeFileSync(file, JSON.stringify({ rawRetention: RAW_RETENTION_S, ...(o.ageNow ? { retentionSweepIntervalMs: 200 } : {}), ...(o.cold ? { rollupCacheBytes: 0, fetchCacheBytes: 0 } : {}) }));
  return ['--config', file];
}

async function main(): Promise<void> {
  const o = new Command('bench-reads')
    .option('--metrics <n>', 'metrics', (v) => Number(v), 100)
    .option('--step-s <n>', 'seconds between stored samples', (v) => Number(v), 10)
    .option('--rounds <n>', 'timed repetitions of each read', (v) => Number(v), 15)
    .option('--scenario <name>', 'rollup | fetch | all', 'all')
    .option('--cache <mode>', 'cold (no result caches on either side) | warm (both with their caches) | both', 'both')
    .option('--no-vm', 'skip VictoriaMetrics')
    .option('--no-month', 'skip the 30-day read')
    .option('--no-load', 'skip /fetch under a steady ingest load')
    .parse()
    .opts<Options>();
  // A whole UTC day two days ago: sealed, within the raw retention.
  const dayStart = (Math.floor(Date.now() / 1000 / DAY_S) - 2) * DAY_S;
  const data: Dataset = { metrics: o.metrics, points: DAY_S / o.stepS, stepS: o.stepS, start: dayStart, batch: 5000, vmOffsetMs: 1 };
  const monthData: Dataset = { metrics: o.metrics, points: (MONTH_DAYS * DAY_S) / MONTH_STEP_S, stepS: MONTH_STEP_S, start: dayStart - MONTH_DAYS * DAY_S, batch: 5000, family: 'month', vmOffsetMs: 1 };
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-'));
  console.log(`bench/reads: ${o.metrics} metrics × 1 day (${data.points} samples each, ${o.stepS} s apart), read at ${PERIOD_S} s; ${o.rounds} rounds, medians`);
  if (o.month) console.log(`and ${o.metrics} metrics × ${MONTH_DAYS} days (${monthData.points} samples each, ${MONTH_STEP_S} s apart), read at ${MONTH_PERIOD_S} s`);
  console.log(`ferrite's raw retention: ${RAW_RETENTION_S / DAY_S} days (the day is read from raw, the month mostly from aged rollups)`);
  console.log(`load average at start: ${loadavg()}`);
  const withVm = o.vm && victoriaMetricsAvailable();
  if (!withVm) console.log('VictoriaMetrics skipped (not installed or --no-vm)');
  const ferriteDir = path.join(root, 'ferrite');
  const vmDir = path.join(root, 'vm');
  let ferrite = await startFerrite(ferriteDir, ferriteConfig(root, { ageNow: false, cold: false }));
  let vm = withVm ? await startVictoriaMetrics(vmDir) : null;
  try {
    // A graceful restart seals every buffer, as hours of quiet would.
    await send(`${ferrite.url}/raw`, ferriteBodies(data), 4, 'PUT');
    if (o.month) await send(`${ferrite.url}/raw`, ferriteBodies(monthData), 4, 'PUT');
    await ferrite.stop();
    if (o.month) {
      // The month's raw data past the retention is aged by the first sweep after the restart.
      ferrite = await startFerrite(ferriteDir, ferriteConfig(root, { ageNow: true, cold: false }));
      const horizon = Math.floor(Date.now() / 1000) - RAW_RETENTION_S;
      const took = await waitAged(ferrite.url, o.metrics, 'month', monthData.start, Math.min(dayStart, horizon), MONTH_STEP_S);
      console.log(`ageing after a restart: ${o.metrics} metrics × ${Math.floor((horizon - monthData.start) / DAY_S)} days at ${MONTH_STEP_S} s aged in ${took.toFixed(2)} s (polled every 0.25 s)`);
      recordFigure({ bench: 'reads', measure: `age ${o.metrics} metrics × ${MONTH_DAYS - 1} days at ${MONTH_STEP_S} s after a restart`, unit: 's', ferrite: took, peer: null, better: 'lower' });
      await ferrite.stop();
    }
    if (vm !== null) {
      await send(`${vm.url}/api/v1/import/prometheus`, vmBodies(data), 4, 'POST');
      if (o.month) await send(`${vm.url}/api/v1/import/prometheus`, vmBodies(monthData), 4, 'POST');
      await fetch(`${vm.url}/internal/force_flush`);
    }
    for (const mode of o.cache === 'both' ? (['cold', 'warm'] as const) : [o.cache]) {
      const cold = mode === 'cold';
      ferrite = await startFerrite(ferriteDir, ferriteConfig(root, { ageNow: false, cold }));
      if (vm !== null) {
        await vm.stop();
        vm = await startVictoriaMetrics(vmDir, [], { cache: !cold });
      }
      console.log(`\n${cold ? 'cold to cold: ferrite rollupCacheBytes 0 and fetchCacheBytes 0, VictoriaMetrics -search.disableCache' : 'cache to cache: ferrite and VictoriaMetrics with their caches (each read repeated)'}`);
      console.log(await diskByKindLine(ferrite.url));
      if (vm !== null) console.log(`victoria-metrics on disk (MiB): ${(diskBytes(vm.dataDir) / 2 ** 20).toFixed(1)}`);
      console.log('\n| read | ferrite median ms | ferrite p90 ms | VM median ms | VM p90 ms | ratio VM/ferrite (median) | values checked equal |');
      console.log('|---|---|---|---|---|---|---|');
      for (const s of scenarios(o, dayStart, ferrite.url, vm?.url ?? null)) {
        const f = await time(s.ferrite, s.expect, o.rounds, `ferrite ${s.name}`);
        const v = s.vm === null ? null : await time(s.vm, s.expect, o.rounds, `victoria-metrics ${s.name}`);
        const diff = v === null ? null : compare(f.answer, v.answer, s.name);
        recordFigure({ bench: o.scenario === 'all' ? 'reads' : o.scenario, measure: `${s.name}, ${cold ? 'cold' : 'cached'} (median)`, unit: 'ms', ferrite: f.t.median, peer: v?.t.median ?? null, better: 'lower' });
        console.log(`| ${s.name} | ${fmt(f.t.median)} | ${fmt(f.t.p90)} | ${fmt(v?.t.median)} | ${fmt(v?.t.p90)} | ${v === null ? '–' : (v.t.median / f.t.median).toFixed(2)} | ${diff === null ? '–' : `${s.expect} (max rel. diff ${diff.toExponential(1)})`} |`);
      }
      if (o.load && !cold) await fetchUnderLoad(o, dayStart, ferrite.url);
      await ferrite.stop();
    }
  } finally {
    console.log(`load average at end: ${loadavg()}`);
    if (ferrite.child.exitCode === null && ferrite.child.signalCode === null) await ferrite.stop();
    await vm?.stop();
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

/** /fetch average + sum latency idle, then while 20 000 samples/s of fresh data arrive. */
async function fetchUnderLoad(o: Options, dayStart: number, url: string): Promise<void> {
  const rounds = Math.max(50, o.rounds);
  const read = scenarios({ ...o, scenario: 'fetch', month: false }, dayStart, url, null)[1]!.ferrite;
  const idle = timing((await timeRounds(read, rounds)).ms);
  const load = steadyIngest(url, 1000, 20_000);
  await new Promise((r) => setTimeout(r, 2000));
  const busy = timing((await timeRounds(read, rounds)).ms);
  const sent = await load.stop();
  console.log(`\n/fetch ${o.metrics} streams average + sum, ${rounds} rounds: idle median ${fmt(idle.median)} ms, p99 ${fmt(idle.p99)} ms; under 20 000 samples/s of ingest (${sent} sent) median ${fmt(busy.median)} ms, p99 ${fmt(busy.p99)} ms: p99 ratio ${(busy.p99 / idle.p99).toFixed(2)}`);
}

await main();
