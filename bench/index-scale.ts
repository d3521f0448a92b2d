// bench/index-scale (`node dist/bench/index-scale.js --series 10000000`): the metric index
// alone at a size the HTTP ingest path takes too long to load on our machine. Series (the
// bench/find data set: 10 names per check, tags host/region/service) are indexed in batches
// of 5000 exactly as a write does it (name records and type keys written to RocksDB, then
// applied), then queries are evaluated and their records encoded (everything /find does but
// HTTP), then the index is reloaded from disk. Prints build rate, RSS, query p50/p99 and the
// reload time per million series. No peer: VictoriaMetrics' figures come from bench/find.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { canonicalizeMetricName } from '../model/metric-name.js';
import { placeMetric } from '../model/metric-key.js';
import { parseTagQuery } from '../model/tag-query/index.js';
import type { MetricKey } from '../model/types.js';
import { MetricIndex, type IndexableMetric } from '../storage/metric-index/metric-index.js';
import { takeSnapshot, writeSnapshot } from '../storage/metric-index/snapshot.js';
import { evaluate } from '../storage/metric-index/query-plan.js';
import { Store } from '../storage/rocks.js';
import { findBody } from '../actors/shard/find-rows.js';
import { diskBytes } from './peers.js';
import { recordFigure } from './summary.js';

const NAMES = 10;
const uuidOf = (c: number) => `00000000-0000-4000-8000-${c.toString(16).padStart(12, '0')}`;

function metricOf(i: number): IndexableMetric {
  const c = Math.floor(i / NAMES);
  const name = canonicalizeMetricName(`m${i % NAMES}|ST[host:h${c % 1000},region:r${c % 5},service:s${c % 50}]`);
  if (!name.ok) throw new Error(name.reason);
  const uuid = uuidOf(c);
  return { id: placeMetric(`${uuid}-${name.value.canonical}` as MetricKey, 16).id, accountId: 1, uuid, checkName: `c_1_${c}::bench`, name: name.value };
}

const rssMb = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

async function queryTimes(index: MetricIndex, query: string, rounds: number): Promise<{ count: number; p50: number; p99: number }> {
  const q = parseTagQuery(query);
  const ms: number[] = [];
  let count = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const account = index.account(1)!;
    const ids = [...evaluate(q, { categories: account.categories, universe: account.all.view(), bound: index.bound, typesOf: (id) => index.typesOf(id), activeBetween: () => true, checkTags: new Map(), nowSecs: 0 })].filter((id) => index.isAlive(id));
    const body = await findBody({ index, ids, total: ids.length, timedOut: false, checkTags: new Map() }, true);
    ms.push(performance.now() - t0);
    count = ids.length;
    if (body.length === 0) throw new Error('BUG: empty body');
  }
  ms.sort((a, b) => a - b);
  return { count, p50: ms[Math.floor(ms.length / 2)]!, p99: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]! };
}

/** What a clean stop and the next start pay for the index snapshot (storage/metric-index/snapshot.ts). */
async function snapshotRoundTrip(store: Store, file: string, index: MetricIndex): Promise<void> {
  const t0 = performance.now();
  await writeSnapshot(store, file, index.image()!);
  const written = performance.now() - t0;
  const bytes = diskBytes(file);
  const t1 = performance.now();
  const restored = MetricIndex.fromImage(store, (await takeSnapshot(store, file))!);
  const read = performance.now() - t1;
  console.log(`snapshot: written in ${(written / 1000).toFixed(1)} s (${(bytes / 2 ** 20).toFixed(0)} MiB, ${(bytes / restored.report().metrics!).toFixed(0)} B/series); read back in ${(read / 1000).toFixed(1)} s (${(restored.loaded.cpuMs / 1000).toFixed(1)} s of CPU to rebuild from the image)`);
  recordFigure({ bench: 'index-scale', measure: `index ${restored.report().metrics} series: start from snapshot`, unit: 's', ferrite: read / 1000, peer: null, better: 'lower' });
}

async function main(): Promise<void> {
  const o = new Command('bench-index-scale').option('--series <n>', 'series to index', (v) => Number(v), 1_000_000).option('--rounds <n>', 'timed repetitions per query', (v) => Number(v), 50).option('--no-reload', 'skip the full reload from disk (minutes at 10M)').parse().opts<{ series: number; rounds: number; reload: boolean }>();
  const dir = mkdtempSync(path.join(tmpdir(), 'ferrite-index-scale-'));
  const store = await Store.open(dir);
  try {
    const rssStart = rssMb();
    const { index } = await MetricIndex.load(store);
    const t0 = performance.now();
    for (let from = 0; from < o.series; from += 5000) {
      const batch = store.batch();
      const records = [];
      for (let i = from; i < Math.min(o.series, from + 5000); i++) records.push({ metric: metricOf(i), kind: 'numeric' as const });
      const staged = index.stage(batch, records);
      await batch.write();
      index.apply(staged);
      if (from % 1_000_000 === 0 && from > 0) console.log(`${from} series, ${((performance.now() - t0) / 1000).toFixed(0)} s, RSS ${rssMb().toFixed(0)} MiB`);
    }
    const buildS = (performance.now() - t0) / 1000;
    global.gc?.();
    console.log(`indexed ${o.series} series in ${buildS.toFixed(1)} s (${(o.series / buildS).toFixed(0)}/s); RSS ${rssMb().toFixed(0)} MiB (${rssStart.toFixed(0)} at start); heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    recordFigure({ bench: 'index-scale', measure: `index ${o.series} series: RSS per series`, unit: 'B', ferrite: ((rssMb() - rssStart) * 2 ** 20) / o.series, peer: null, better: 'lower' });
    console.log('\n| query | results | p50 ms | p99 ms |\n|---|---|---|---|');
    for (const q of ['and(__name:m3,host:h42)', 'and(__name:m*,host:h12*)', 'and(__name:/^m[2-4]$/,host:/^h1[0-9]$/)']) {
      const t = await queryTimes(index, q, o.rounds);
      console.log(`| \`${q}\` | ${t.count} | ${t.p50.toFixed(2)} | ${t.p99.toFixed(2)} |`);
    }
    await store.flushAll();
    console.log(`\ndisk ${(diskBytes(dir) / 2 ** 20).toFixed(0)} MiB`);
    if (o.reload) await reload(store);
    await snapshotRoundTrip(store, path.join(dir, 'snapshot.index'), index);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A rebuild of the index from the name records, type and activity keys (a start after a crash). */
async function reload(store: Store): Promise<void> {
  const { report } = await MetricIndex.load(store);
  console.log(`reload: ${report.metrics} series in ${(report.ms / 1000).toFixed(1)} s, ${(report.cpuMs / 1000).toFixed(1)} s of CPU (${(report.cpuMs / 1000 / (report.metrics / 1e6)).toFixed(1)} CPU s per million); RSS now ${rssMb().toFixed(0)} MiB (two indexes held)`);
}

await main();
