// bench/reads (`npm run bench:rollup`, `npm run bench:fetch`): reading 100 numeric
// metrics × one day at 60 s from ferrite (GET /rollup per metric; POST /fetch with
// `average` + `pass`, and with a `sum` reduce) and from VictoriaMetrics (query_range with
// avg_over_time; sum(...)) on the same samples in the same run. Prints median and p90
// latencies and the ratios (VictoriaMetrics latency / ferrite latency: > 1 means ferrite
// is faster).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodies, ferriteName, send, UUID, vmBodies, type Dataset } from './dataset.js';
import { timeRounds } from './timing.js';
import { startFerrite, startVictoriaMetrics, victoriaMetricsAvailable } from './peers.js';

interface Options {
  metrics: number;
  stepS: number;
  rounds: number;
  scenario: 'rollup' | 'fetch' | 'all';
  vm: boolean;
}

const DAY_S = 86_400;
const PERIOD_S = 60;

/** One timed read; it must return the number of non-null values it saw (checked). */
type Read = () => Promise<number>;

interface Scenario {
  name: string;
  ferrite: Read;
  vm: Read | null;
  /** Values each read must see (metrics × slots, or slots when reduced to one stream). */
  expect: number;
}

async function json(url: string, init?: RequestInit): Promise<any> {
  const res = await fetch(url, init);
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return res.json();
}

/** Runs `reads` with `concurrency` in flight and sums what they return. */
async function all(reads: Read[], concurrency = 8): Promise<number> {
  let next = 0;
  let total = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < reads.length) {
        const got = await reads[next++]!(); // not `total += await …`: that reads total before awaiting
        total += got;
      }
    }),
  );
  return total;
}

const nonNull = (xs: unknown[]) => xs.filter((v) => v !== null).length;

function scenarios(o: Options, dayStart: number, ferriteUrl: string, vmUrl: string | null): Scenario[] {
  const metrics = Array.from({ length: o.metrics }, (_, m) => m);
  const slots = DAY_S / PERIOD_S;
  const fetchBody = (reduce: unknown[]) =>
    JSON.stringify({
      start: dayStart,
      period: PERIOD_S,
      count: slots,
      streams: metrics.map((m) => ({ uuid: UUID, name: ferriteName(m), kind: 'numeric', transform: 'average', transform_params: [] })),
      reduce,
    });
  const ferriteFetch = (reduce: unknown[]) => async () => {
    const doc = await json(`${ferriteUrl}/fetch`, { method: 'POST', body: fetchBody(reduce), headers: { 'content-type': 'application/json' } });
    return (doc.data as unknown[][]).reduce((n, col) => n + nonNull(col), 0);
  };
  // VictoriaMetrics' sample at t covers (t - 60 s, t]; ours at t covers [t, t + 60 s): shift by one step.
  const range = `start=${dayStart + PERIOD_S}&end=${dayStart + DAY_S}&step=${PERIOD_S}s`;
  const vmQuery = (q: string) => async () => {
    const doc = await json(`${vmUrl}/api/v1/query_range?query=${encodeURIComponent(q)}&${range}`);
    return (doc.data.result as { values: unknown[] }[]).reduce((n, r) => n + r.values.length, 0);
  };
  const selector = `{__name__=~"bench_metric_.*"}`;
  const out: Scenario[] = [];
  if (o.scenario !== 'fetch') {
    out.push({
      name: `/rollup × ${o.metrics} vs query_range avg_over_time × ${o.metrics}`,
      expect: o.metrics * slots,
      ferrite: () =>
        all(
          metrics.map((m) => async () => {
            const rows = (await json(`${ferriteUrl}/rollup/${UUID}/${encodeURIComponent(ferriteName(m))}?start_ts=${dayStart}.000&end_ts=${dayStart + DAY_S}.000&rollup_span=${PERIOD_S}s`)) as [number, number | null][];
            return rows.filter(([, v]) => v !== null).length;
          }),
        ),
      vm: vmUrl === null ? null : () => all(metrics.map((m) => vmQuery(`avg_over_time(bench_metric_${m}[${PERIOD_S}s])`))),
    });
  }
  if (o.scenario !== 'rollup') {
    out.push({
      name: `/fetch ${o.metrics} streams average + pass vs query_range avg_over_time({…})`,
      expect: o.metrics * slots,
      ferrite: ferriteFetch([{ label: '', method: 'pass', method_params: [] }]),
      vm: vmUrl === null ? null : vmQuery(`avg_over_time(${selector}[${PERIOD_S}s])`),
    });
    out.push({
      name: `/fetch ${o.metrics} streams average + sum vs query_range sum(avg_over_time({…}))`,
      expect: slots,
      ferrite: ferriteFetch([{ label: 'sum', method: 'sum', method_params: [] }]),
      vm: vmUrl === null ? null : vmQuery(`sum(avg_over_time(${selector}[${PERIOD_S}s]))`),
    });
  }
  return out;
}

interface Timing {
  median: number;
  p90: number;
}

async function time(read: Read, expect: number, rounds: number, who: string): Promise<Timing> {
  const { first: got, ms } = await timeRounds(read, rounds); // the warm-up is the correctness check
  if (got !== expect) throw new Error(`${who}: expected ${expect} values, got ${got}`);
  return { median: ms[Math.floor(ms.length / 2)]!, p90: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.9))]! };
}

/** Waits until every metric's day is rolled up (the 1-day level counts every sample). */
async function waitRolledUp(url: string, o: Options, dayStart: number): Promise<void> {
  const want = DAY_S / o.stepS;
  const deadline = Date.now() + 600_000;
  for (;;) {
    let done = 0;
    for (let m = 0; m < o.metrics; m++) {
      const rows = (await json(`${url}/rollup/${UUID}/${encodeURIComponent(ferriteName(m))}?start_ts=${dayStart}.000&end_ts=${dayStart + DAY_S}.000&rollup_span=${DAY_S}s&get_engine=nnt&type=count`)) as [number, number | null][];
      if (rows[0]?.[1] === want) done++;
    }
    if (done === o.metrics) return;
    if (Date.now() > deadline) throw new Error(`rollups incomplete after 10 min (${done}/${o.metrics} metrics)`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function main(): Promise<void> {
  const o = new Command('bench-reads')
    .option('--metrics <n>', 'metrics', (v) => Number(v), 100)
    .option('--step-s <n>', 'seconds between stored samples', (v) => Number(v), 10)
    .option('--rounds <n>', 'timed repetitions of each read', (v) => Number(v), 15)
    .option('--scenario <name>', 'rollup | fetch | all', 'all')
    .option('--no-vm', 'skip VictoriaMetrics')
    .parse()
    .opts<Options>();
  // A whole UTC day two days ago: old enough to be sealed and rolled up, as history is.
  const dayStart = (Math.floor(Date.now() / 1000 / DAY_S) - 2) * DAY_S;
  const data: Dataset = { metrics: o.metrics, points: DAY_S / o.stepS, stepS: o.stepS, start: dayStart, batch: 5000 };
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-'));
  console.log(`bench/reads: ${o.metrics} metrics × 1 day (${data.points} samples each, ${o.stepS} s apart), read at ${PERIOD_S} s; ${o.rounds} rounds, medians`);
  const withVm = o.vm && victoriaMetricsAvailable();
  if (!withVm) console.log('VictoriaMetrics skipped (not installed or --no-vm)');
  const ferriteDir = path.join(root, 'ferrite');
  let ferrite = await startFerrite(ferriteDir);
  const vm = withVm ? await startVictoriaMetrics(path.join(root, 'vm')) : null;
  try {
    await send(`${ferrite.url}/raw`, ferriteBodies(data), 4, 'PUT');
    // A graceful restart seals every buffer, as hours of quiet would; the day is then rolled up.
    await ferrite.stop();
    ferrite = await startFerrite(ferriteDir);
    await waitRolledUp(ferrite.url, o, dayStart);
    if (vm !== null) {
      await send(`${vm.url}/api/v1/import/prometheus`, vmBodies(data), 4, 'POST');
      await fetch(`${vm.url}/internal/force_flush`);
    }
    console.log('\n| read | ferrite median ms | ferrite p90 ms | VM median ms | VM p90 ms | ratio VM/ferrite (median) |');
    console.log('|---|---|---|---|---|---|');
    for (const s of scenarios(o, dayStart, ferrite.url, vm?.url ?? null)) {
      const f = await time(s.ferrite, s.expect, o.rounds, `ferrite ${s.name}`);
      const v = s.vm === null ? null : await time(s.vm, s.expect, o.rounds, `victoria-metrics ${s.name}`);
      const fmt = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));
      console.log(`| ${s.name} | ${fmt(f.median)} | ${fmt(f.p90)} | ${fmt(v?.median)} | ${fmt(v?.p90)} | ${v === null ? '–' : (v.median / f.median).toFixed(2)} |`);
    }
  } finally {
    await ferrite.stop();
    await vm?.stop();
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

await main();
