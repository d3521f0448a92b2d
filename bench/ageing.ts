// bench/ageing (`npm run bench:ageing`): how fast a partition turns a week of raw numeric data into
// rollups, as samples per CPU-second, the two ways ferrite has done it on the same data, through the
// real partition (actors/shard/partition-core.ts) on a real RocksDB:
// - per window (the release before ageing, still used below a data dir's legacy cut): every raw
//   window rolled up as it seals, each pass rewriting the day's chunks of every level;
// - ageing: the week aged at once when it leaves the raw retention (one raw read, each chunk
//   written once, and the raw windows deleted in the same batch).
// No peer: VictoriaMetrics keeps raw data only (its downsampling is an enterprise feature).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { PartitionCore } from '../actors/shard/partition-core.js';
import { resolveConfig } from '../model/config.js';
import { SampleColumns } from '../model/ingest-batch.js';
import { newMetricInfo, type MetricInfo } from '../model/metric-info.js';
import { placeMetric, metricKey } from '../model/metric-key.js';
import { canonicalizeMetricName } from '../model/metric-name.js';
import { CF, rollupAgeingKey } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import { ShardStorage } from '../storage/shard-storage.js';
import type { AccountId } from '../model/types.js';
import { recordFigure } from './summary.js';

const opts = new Command()
  .option('--metrics <n>', 'metrics', '50')
  .option('--days <n>', 'days of raw data per metric', '7')
  .option('--step <s>', 'seconds between samples', '10')
  .parse()
  .opts<{ metrics: string; days: string; step: string }>();
const METRICS = Number(opts.metrics);
const DAYS = Number(opts.days);
const STEP_MS = Number(opts.step) * 1000;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 0, 5);
const config = resolveConfig({ dataDir: '/unused', rollupQuietMs: 0 });

function metricsOf(n: number): MetricInfo[] {
  return Array.from({ length: n }, (_, i) => {
    const name = canonicalizeMetricName(`bench.ageing.${i}`);
    if (!name.ok) throw new Error(name.reason);
    const uuid = '00000000-0000-4000-8000-00000000a9e0';
    const key = metricKey(uuid, name.value.canonical);
    const { id } = placeMetric(key, 1);
    return newMetricInfo({ key, accountId: 1 as AccountId, uuid, checkName: 'c_1_1::bench', name: name.value }, id, id.toString('hex'), 0);
  });
}

/** One hour of every metric's samples: a bounded random walk per metric. */
function hourOf(metrics: MetricInfo[], hour: number): SampleColumns<MetricInfo> {
  const cols = new SampleColumns<MetricInfo>();
  for (const [i, m] of metrics.entries()) {
    for (let t = START + hour * HOUR; t < START + (hour + 1) * HOUR; t += STEP_MS) cols.pushNumeric(m, t, Math.round(500 + 400 * Math.sin(t / 7e6 + i)) / 10);
  }
  return cols;
}

interface Rig {
  core: PartitionCore;
  storage: ShardStorage;
  dir: string;
  clock: { now: number };
}

async function rig(legacy: boolean): Promise<Rig> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-ageing-'));
  if (legacy) {
    // A data dir from before ageing: every window below its cut is rolled up as it seals.
    const store = await Store.open(dir, {});
    await store.batch().put(CF.state, rollupAgeingKey(0), Buffer.from(JSON.stringify({ legacyCut: 2 ** 50 }))).write();
    await store.close();
  }
  const storage = await ShardStorage.open(dir, [0], config);
  const clock = { now: START };
  const core = new PartitionCore({ index: 0, config, ...storage.partitions.get(0)!, tombstones: storage.tombstones, now: () => clock.now });
  return { core, storage, dir, clock };
}

const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
};

async function perWindow(metrics: MetricInfo[]): Promise<{ samples: number; cpu: number }> {
  const r = await rig(true);
  let samples = 0;
  let cpu = 0;
  for (let h = 0; h < DAYS * 24; h++) {
    const cols = hourOf(metrics, h);
    samples += cols.length;
    r.core.apply(h + 1, cols);
    r.clock.now = START + (h + 1) * HOUR + 1;
    await r.core.sealAll();
    const t0 = process.cpuUsage();
    await r.core.rollUp(0);
    cpu += cpuSeconds(t0);
  }
  await r.storage.close(false);
  rmSync(r.dir, { recursive: true, force: true });
  return { samples, cpu };
}

async function ageing(metrics: MetricInfo[]): Promise<{ samples: number; cpu: number }> {
  const r = await rig(false);
  for (let h = 0; h < DAYS * 24; h++) {
    r.core.apply(h + 1, hourOf(metrics, h));
    r.clock.now = START + (h + 1) * HOUR + 1;
    await r.core.sealAll();
  }
  const t0 = process.cpuUsage();
  const samples = await r.core.age(metrics, START + DAYS * 24 * HOUR);
  const cpu = cpuSeconds(t0);
  await r.storage.close(false);
  rmSync(r.dir, { recursive: true, force: true });
  return { samples, cpu };
}

const metrics = metricsOf(METRICS);
const old = await perWindow(metrics);
const aged = await ageing(metricsOf(METRICS));
const rate = (r: { samples: number; cpu: number }) => r.samples / r.cpu;
console.log(`${METRICS} metrics × ${DAYS} days at ${STEP_MS / 1000} s (${old.samples} samples)`);
console.log(`per window (as it seals): ${old.cpu.toFixed(2)} CPU-s, ${Math.round(rate(old))} samples/CPU-s`);
console.log(`ageing (a week at once):  ${aged.cpu.toFixed(2)} CPU-s, ${Math.round(rate(aged))} samples/CPU-s (${aged.samples} samples aged)`);
console.log(`ratio ageing / per window: ${(rate(aged) / rate(old)).toFixed(1)}×`);
recordFigure({ bench: 'ageing', measure: 'raw rolled up, a week at once (per window as peer)', unit: 'samples/CPU-s', ferrite: rate(aged), peer: rate(old), better: 'higher' });
