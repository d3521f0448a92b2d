// bench/histogram: histogram ingest through H1 TSV records and /histogram/write, then the
// read latency of one day of histograms per metric at 60, 300 and 1800 s. ferrite only: no peer stores
// circllhist histograms, so these figures track ferrite against itself over time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { Histogram, histogramToBase64 } from '../model/histogram/index.js';
import { startFerrite } from './peers.js';
import { recordFigure } from './summary.js';

interface Options {
  metrics: number;
  batch: number;
  concurrency: number;
  reads: number;
}

const UUID = '1b988fd7-d1e1-48ec-848e-55709511d43f';
const CHECK = `bench.example\`bench\`c_1_1::bench\`${UUID}`;
const DAY_S = 86400;
const STEP_S = 60;

/** A latency-like histogram: ~40 bins of log-normal samples, different per metric and minute. */
function sampleHistogram(seed: number): { b64: string; bins: number } {
  const h = Histogram.empty();
  let x = seed * 2654435761 % 2 ** 32;
  for (let i = 0; i < 200; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    h.insert(Math.exp((x / 2 ** 31) * 6 - 3));
  }
  return { b64: histogramToBase64(h), bins: h.bucketCount };
}

async function send(url: string, method: string, bodies: string[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const res = await fetch(url, { method, body: bodies[next++]! });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

function batches<T>(items: T[], size: number, join: (part: T[]) => string): string[] {
  const out: string[] = [];
  for (let i = 0; i < items.length; i += size) out.push(join(items.slice(i, i + size)));
  return out;
}

async function main(): Promise<void> {
  const o = new Command('bench-histogram')
    .option('--metrics <n>', 'metrics (each gets one day at 60 s)', (v) => Number(v), 50)
    .option('--batch <n>', 'histograms per request', (v) => Number(v), 2000)
    .option('--concurrency <n>', 'requests in flight', (v) => Number(v), 4)
    .option('--reads <n>', 'day-long reads to time', (v) => Number(v), 50)
    .parse()
    .opts<Options>();
  const start = Math.floor(Date.now() / 1000 / DAY_S) * DAY_S - 2 * DAY_S;
  const perDay = DAY_S / STEP_S;
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-hist-'));
  const ferrite = await startFerrite(path.join(root, 'ferrite'));
  try {
    const samples = Array.from({ length: perDay }, (_, i) => sampleHistogram(i));
    const binsPerHist = samples.reduce((s, x) => s + x.bins, 0) / samples.length;
    const half = Math.floor(o.metrics / 2);
    const h1: string[] = [];
    const json: object[] = [];
    for (let m = 0; m < o.metrics; m++) {
      for (let i = 0; i < perDay; i++) {
        const ts = start + i * STEP_S;
        if (m < half) h1.push(`H1\t${ts}.000\t${CHECK}\tbench.hist.${m}\t${samples[i]!.b64}`);
        else json.push({ metric: `bench.hist.${m}`, id: UUID, offset: ts, period: STEP_S, histogram: samples[i]!.b64, account_id: 1 });
      }
    }
    console.log(`bench/histogram: ${o.metrics} metrics × ${perDay} histograms (≈${binsPerHist.toFixed(0)} bins each), ${o.batch}/request, ${o.concurrency} in flight`);
    const rate = async (label: string, count: number, run: () => Promise<void>) => {
      const t0 = performance.now();
      await run();
      const s = (performance.now() - t0) / 1000;
      console.log(`${label}: ${count} histograms in ${s.toFixed(2)} s = ${Math.round(count / s)} histograms/s, ${Math.round((count * binsPerHist) / s)} bins/s`);
      recordFigure({ bench: 'histogram', measure: `${label} ingest`, unit: 'histograms/s', ferrite: count / s, peer: null, better: 'higher' });
    };
    await rate('H1 /raw', h1.length, () => send(`${ferrite.url}/raw`, 'PUT', batches(h1, o.batch, (p) => p.join('\n')), o.concurrency));
    await rate('/histogram/write', json.length, () => send(`${ferrite.url}/histogram/write`, 'POST', batches(json, o.batch, (p) => JSON.stringify(p)), o.concurrency));
    // Coarse periods of the day (within the raw retention) are merged from its 60 s records when read.
    for (const period of [STEP_S, 300, 1800]) {
      const rowsWanted = DAY_S / period;
      const latencies: number[] = [];
      for (let r = 0; r < o.reads; r++) {
        const m = r % o.metrics;
        const t0 = performance.now();
        const res = await fetch(`${ferrite.url}/histogram/${start}/${start + DAY_S - 1}/${period}/${UUID}/bench.hist.${m}`);
        const rows = (await res.json()) as unknown[];
        if (!Array.isArray(rows)) throw new Error(`read of bench.hist.${m} answered ${res.status}: ${JSON.stringify(rows)}`);
        latencies.push(performance.now() - t0);
        if (rows.length !== rowsWanted) throw new Error(`read of bench.hist.${m} at ${period} s gave ${rows.length} rows, expected ${rowsWanted}`);
      }
      latencies.sort((a, b) => a - b);
      const pct = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
      console.log(`read one day at ${period} s (${rowsWanted} rows): median ${pct(0.5)} ms, p90 ${pct(0.9)} ms over ${o.reads} reads`);
      recordFigure({ bench: 'histogram', measure: `read one day at ${period} s (median)`, unit: 'ms', ferrite: Number(pct(0.5)), peer: null, better: 'lower' });
    }
  } finally {
    await ferrite.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
