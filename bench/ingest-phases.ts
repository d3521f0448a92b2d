// bench/ingest-phases (`npm run bench:ingest-phases -- --series N`): where ingest's CPU goes at
// scale. Loads N series × P scrapes into ferrite (scrape-major, as bench:scale), and prints the
// wall time and each thread's CPU (from /proc) while scrape 0 names every series for the first
// time, and while scrapes 1..P-1 send known series. Threads show as the kernel names them: the
// main thread, `WorkerThread` (the shard and parse workers), `V8Worker` (V8's GC helpers),
// `libuv-worker`, `rocksdb:*` — with the minor page faults each took (a first touch of a fresh
// page, ≈ 14 µs each on our machines: README, Scale).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodiesLazy, prepared, send, type Bodies } from './dataset.js';
import { requireShippedNode, startFerrite } from './peers.js';

const CLOCK_TICKS = 100;

/** Per thread of process `pid`, by `tid:name`: CPU seconds and minor page faults (each a first touch of a page). */
function threadStats(pid: number): Map<string, { cpu: number; faults: number }> {
  const out = new Map<string, { cpu: number; faults: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(`${tid}:${name}`, { cpu: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS, faults: Number(fields[7]) });
  }
  return out;
}

async function main(): Promise<void> {
  const o = new Command('bench-ingest-phases')
    .option('--series <n>', 'series', (v) => Number(v), 200_000)
    .option('--scrapes <n>', 'scrapes, 10 s apart', (v) => Number(v), 11)
    .option('--batch <n>', 'lines per request (must divide --series)', (v) => Number(v), 5000)
    .parse()
    .opts<{ series: number; scrapes: number; batch: number }>();
  requireShippedNode();
  if (o.series % o.batch !== 0) throw new Error(`--batch ${o.batch} must divide --series ${o.series}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-phases-'));
  const start = Math.floor(Date.now() / 10_000) * 10 - o.scrapes * 10 - 60;
  const all = prepared(ferriteBodiesLazy({ metrics: o.series, points: o.scrapes, stepS: 10, start, batch: o.batch }));
  const perScrape = o.series / o.batch;
  const scrapes = (from: number, to: number): Bodies => ({ length: (to - from) * perScrape, at: (i) => all.at(from * perScrape + i) });
  const server = await startFerrite(dir, [], 600_000);
  try {
    for (const [label, from, to] of [['new series (scrape 0)', 0, 1], [`known series (scrapes 1..${o.scrapes - 1})`, 1, o.scrapes]] as const) {
      const before = threadStats(server.child.pid!);
      const t0 = performance.now();
      const refused = await send(`${server.url}/raw`, scrapes(from, to), 4, 'PUT', {}, true);
      const seconds = (performance.now() - t0) / 1000;
      const used = [...threadStats(server.child.pid!)]
        .map(([k, v]): [string, { cpu: number; faults: number }] => [k, { cpu: v.cpu - (before.get(k)?.cpu ?? 0), faults: v.faults - (before.get(k)?.faults ?? 0) }])
        .filter(([, v]) => v.cpu >= 0.1)
        .sort((a, b) => b[1].cpu - a[1].cpu);
      const cpu = used.reduce((n, [, v]) => n + v.cpu, 0);
      const faults = used.reduce((n, [, v]) => n + v.faults, 0);
      const samples = (to - from) * o.series;
      console.log(`${label}: ${samples} samples in ${seconds.toFixed(1)} s (${(samples / seconds).toFixed(0)}/s), ${refused} refused; CPU ${cpu.toFixed(1)} s = ${((cpu / samples) * 1e6).toFixed(1)} µs/sample; ${(faults / 1000).toFixed(0)}k minor page faults`);
      console.log(`  ${used.map(([k, v]) => `${k} ${v.cpu.toFixed(1)} s ${(v.faults / 1000).toFixed(0)}k faults`).join(', ')}`);
    }
    console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
