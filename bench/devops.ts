// bench/devops (`npm run bench:devops`): bytes on disk for a TSBS-style "devops" data set in
// ferrite and VictoriaMetrics. Hosts × 24 series each — cpu usage_* (10 gauges in [0, 100],
// 2 decimals), mem (used_percent, 2 decimals; free/used/cached/buffered bytes), disk
// (used_percent; free/used bytes) as bounded random walks, and diskio/net counters that only
// grow — one day at 10 s. Both systems take the same samples, then settle: a graceful stop,
// a restart, compactions (ferrite: every column family; VictoriaMetrics: force_merge), a
// graceful stop. ferrite is measured twice: with the day raw (within the raw retention, as
// VictoriaMetrics keeps it) and once the day is aged into rollups (a restart with a raw
// retention of an hour). Sizes are split into index and data (raw blocks and rollup chunks).
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ALL_COLUMN_FAMILIES, CF, type ColumnFamilyName } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import { UUID } from './dataset.js';
import { diskByKindLine, diskBytes, startFerrite, startVictoriaMetrics, victoriaMetricsAvailable, type Running } from './peers.js';
import { FIELDS, prng, series } from './devops-data.js';
import { recordFigure } from './summary.js';

interface Options {
  hosts: number;
  stepS: number;
  points?: number;
  vm: boolean;
}

const DAY_S = 86_400;
const CHECK = `devops.example\`devops\`c_1_1::devops\`${UUID}`;

interface Host {
  name: string;
  region: string;
  datacenter: string;
}

function hostsOf(n: number): Host[] {
  return Array.from({ length: n }, (_, h) => ({ name: `host_${h}`, region: `eu-${h % 3}`, datacenter: `eu-${h % 3}${'abc'[h % 3]}` }));
}

/** Request bodies, time-major (every series at t, then t + step), `batch` lines each. */
function* bodies(hosts: Host[], values: Float64Array[], start: number, stepS: number, batch: number, line: (h: Host, field: string, ts: number, v: number) => string): Generator<string> {
  let lines: string[] = [];
  const points = values[0]!.length;
  for (let i = 0; i < points; i++) {
    hosts.forEach((h, hi) =>
      FIELDS.forEach(([field], fi) => {
        lines.push(line(h, field, start + i * stepS, values[hi * FIELDS.length + fi]![i]!));
      }),
    );
    if (lines.length >= batch) {
      yield lines.join('\n') + '\n';
      lines = [];
    }
  }
  if (lines.length > 0) yield lines.join('\n') + '\n';
}

const ferriteLine = (h: Host, field: string, ts: number, v: number) => `M\t${ts}.000\t${CHECK}\t${field.replace('_', '.')}|ST[datacenter:${h.datacenter},hostname:${h.name},region:${h.region}]\tn\t${v}`;
const vmLine = (h: Host, field: string, ts: number, v: number) => `${field}{hostname="${h.name}",region="${h.region}",datacenter="${h.datacenter}"} ${v} ${ts * 1000}`;

async function sendAll(url: string, list: Iterable<string>, concurrency: number, method: string): Promise<void> {
  const it = list[Symbol.iterator]();
  const worker = async () => {
    for (let next = it.next(); !next.done; next = it.next()) {
      const res = await fetch(url, { method, body: next.value });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Waits until the day level of every series counts the whole day. */
async function waitRolledUp(url: string, hosts: Host[], start: number, want: number): Promise<void> {
  const deadline = Date.now() + 1_200_000;
  for (const h of hosts) {
    for (const [field] of FIELDS) {
      const name = `${field.replace('_', '.')}|ST[datacenter:${h.datacenter},hostname:${h.name},region:${h.region}]`;
      for (;;) {
        const res = await fetch(`${url}/rollup/${UUID}/${encodeURIComponent(name)}?start_ts=${start}&end_ts=${start + DAY_S}&rollup_span=${DAY_S}s&get_engine=nnt&type=count`);
        const rows = (await res.json()) as [number, number | null][];
        if (rows[0]?.[1] === want) break;
        if (Date.now() > deadline) throw new Error(`rollups incomplete after 20 min (${name})`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

/** Keys plus values of each column family (what its SST files hold before block overhead), over the node's and every shard's store. */
async function ferriteSizes(dir: string): Promise<{ logical: Map<ColumnFamilyName, number>; disk: number }> {
  const logical = new Map<ColumnFamilyName, number>();
  const shards = path.join(dir, 'shards');
  const stores = [dir, ...(existsSync(shards) ? readdirSync(shards).filter((s) => /^\d+$/.test(s)).map((s) => path.join(shards, s)) : [])];
  for (const storeDir of stores) {
    const store = await Store.open(storeDir);
    try {
      for (const cf of ALL_COLUMN_FAMILIES) await store.compact(cf);
      for (const cf of ALL_COLUMN_FAMILIES) {
        let bytes = 0;
        for await (const { key, value } of store.scan(cf, { capacity: 4096 })) bytes += key.length + value.length;
        logical.set(cf, (logical.get(cf) ?? 0) + bytes);
      }
      await store.flushAll();
    } finally {
      await store.close();
    }
  }
  return { logical, disk: diskBytes(dir) };
}

/** VictoriaMetrics after a restart and a forced merge of every partition. */
async function settleVictoriaMetrics(vm: Running, start: number): Promise<Running> {
  await fetch(`${vm.url}/internal/force_flush`);
  await vm.stop();
  const again = await startVictoriaMetrics(vm.dataDir);
  const month = new Date(start * 1000).toISOString().slice(0, 7).replace('-', '_');
  const res = await fetch(`${again.url}/internal/force_merge?partition_prefix=${month}`);
  await res.text();
  // force_merge returns at once; merges are done when no merge is active.
  for (let i = 0; i < 600; i++) {
    const metrics = await (await fetch(`${again.url}/metrics`)).text();
    const active = [...metrics.matchAll(/^vm_active_merges\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    if (active === 0 && i > 2) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return again;
}

const dirBytes = (dir: string): number => (readdirSync(dir).length === 0 ? 0 : diskBytes(dir));
const mb = (b: number) => (b / 2 ** 20).toFixed(2);
const perSample = (b: number, samples: number) => (b / samples).toFixed(3);

async function main(): Promise<void> {
  const o = new Command('bench-devops')
    .option('--hosts <n>', 'hosts (24 series each)', (v) => Number(v), 5)
    .option('--step-s <n>', 'seconds between samples', (v) => Number(v), 10)
    .option('--points <n>', 'points per series (default: one day); e.g. --hosts 417 --points 100 for short series', (v) => Number(v))
    .option('--no-vm', 'skip VictoriaMetrics')
    .parse()
    .opts<Options>();
  const start = (Math.floor(Date.now() / 1000 / DAY_S) - 2) * DAY_S;
  const points = o.points ?? DAY_S / o.stepS;
  const hosts = hostsOf(o.hosts);
  const rand = prng(42);
  const values = hosts.flatMap(() => FIELDS.map(([, kind]) => series(kind, points, rand)));
  const samples = values.length * points;
  console.log(`bench/devops: ${o.hosts} hosts × ${FIELDS.length} series × ${points} points at ${o.stepS} s = ${samples} samples`);
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-devops-'));
  const withVm = o.vm && victoriaMetricsAvailable();
  try {
    const ferriteDir = path.join(root, 'ferrite');
    let ferrite = await startFerrite(ferriteDir);
    await sendAll(`${ferrite.url}/raw`, bodies(hosts, values, start, o.stepS, 5000, ferriteLine), 4, 'PUT');
    await ferrite.stop();
    // Within the raw retention the day stays raw (rollups are written when raw data ages out).
    ferrite = await startFerrite(ferriteDir);
    console.log(await diskByKindLine(ferrite.url));
    await ferrite.stop();
    const f = await ferriteSizes(ferriteDir);
    // Then the same day aged into rollups (a raw retention of an hour, swept at once).
    const agedConfig = path.join(root, 'aged.json');
    writeFileSync(agedConfig, JSON.stringify({ rawRetention: 3600, retentionSweepIntervalMs: 200 }));
    ferrite = await startFerrite(ferriteDir, ['--config', agedConfig]);
    await waitRolledUp(ferrite.url, hosts, start, points);
    console.log(await diskByKindLine(ferrite.url));
    await ferrite.stop();
    const aged = await ferriteSizes(ferriteDir);
    console.log('\n| system | index MiB | data MiB | of which raw | of which rollups | total on disk MiB | bytes/sample on disk |');
    console.log('|---|---|---|---|---|---|---|');
    for (const [label, sizes] of [['ferrite (logical), raw kept', f], ['ferrite (logical), aged into rollups', aged]] as const) {
      const cf = (name: ColumnFamilyName) => sizes.logical.get(name) ?? 0;
      const index = cf(CF.index) + cf(CF.metrics);
      console.log(`| ${label} | ${mb(index)} | ${mb(cf(CF.numeric) + cf(CF.rollup))} | ${mb(cf(CF.numeric))} | ${mb(cf(CF.rollup))} | ${mb(sizes.disk)} | ${perSample(sizes.disk, samples)} |`);
    }
    let vmDisk: number | null = null;
    if (withVm) {
      let vm = await startVictoriaMetrics(path.join(root, 'vm'));
      await sendAll(`${vm.url}/api/v1/import/prometheus`, bodies(hosts, values, start, o.stepS, 5000, vmLine), 4, 'POST');
      vm = await settleVictoriaMetrics(vm, start);
      await vm.stop();
      const vmIndex = dirBytes(path.join(vm.dataDir, 'indexdb'));
      const vmData = dirBytes(path.join(vm.dataDir, 'data'));
      vmDisk = diskBytes(vm.dataDir);
      console.log(`| victoria-metrics | ${mb(vmIndex)} | ${mb(vmData)} | ${mb(vmData)} | – | ${mb(vmDisk)} | ${perSample(vmDisk, samples)} |`);
    }
    recordFigure({ bench: 'devops', measure: `bytes on disk per sample, ${o.hosts} hosts × ${o.points === undefined ? '1 day' : `${points} points`}`, unit: 'B', ferrite: f.disk / samples, peer: vmDisk === null ? null : vmDisk / samples, better: 'lower' });
  } finally {
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

await main();
