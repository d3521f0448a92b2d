// bench/parse-worker (`npm run bench:parse-worker -- --series 1000000`): one ingest parse worker
// (actors/ingest/worker.ts) alone, fed bench:scale's TSV bodies (5000 lines each) one at a time,
// scrape after scrape: scrape 0 names every series for the first time, the later ones send known
// series. Prints the worker's time per line of each scrape. No peer and no other thread busy: it
// says what the worker costs, where bench:scale says what the node does with it (issue 30).
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { ferriteBodiesLazy, type Dataset } from './dataset.js';
import type { ParseJob, ParseResult } from '../actors/ingest/wire.js';
import type { AccountId, EpochMs } from '../model/types.js';

const WORKER = fileURLToPath(new URL('../actors/ingest/worker.js', import.meta.url));

async function main(): Promise<void> {
  const o = new Command()
    .option('--series <n>', 'series', (v) => Number(v), 1_000_000)
    .option('--scrapes <n>', 'scrapes of every series', (v) => Number(v), 4)
    .option('--partitions <n>', 'partitions (the node default)', (v) => Number(v), 16)
    .parse()
    .opts<{ series: number; scrapes: number; partitions: number }>();
  const batch = 5000;
  if (o.series % batch !== 0) throw new Error(`--series must be a multiple of ${batch}`);
  const d: Dataset = { metrics: o.series, points: o.scrapes, stepS: 10, start: 1_700_000_000, batch };
  const bodies = ferriteBodiesLazy(d);
  const perScrape = o.series / batch;
  const worker = new Worker(WORKER, { workerData: { partitions: o.partitions, shards: 1 } });
  let answer: ((r: ParseResult) => void) | null = null;
  worker.on('message', (r: ParseResult) => answer?.(r));
  const ctx = { latestAllowed: Number.MAX_SAFE_INTEGER as EpochMs, textSizeLimit: 4096, headerAccount: null as AccountId | null };
  console.log(`bench/parse-worker: ${o.series} series × ${o.scrapes} scrapes, ${batch} TSV lines a body, one body at a time`);
  let id = 0;
  for (let k = 0; k < o.scrapes; k++) {
    // Made before the clock starts: the client's formatting is not the worker's cost.
    const made = Array.from({ length: perScrape }, (_, i) => Buffer.from(bodies.at(k * perScrape + i) as string));
    const t0 = performance.now();
    for (const body of made) {
      const job: ParseJob = { id: ++id, format: 'tsv', ctx, body: new Uint8Array(body.buffer, body.byteOffset, body.length) };
      const r = await new Promise<ParseResult>((resolve) => {
        answer = resolve;
        worker.postMessage(job, [body.buffer as ArrayBuffer]);
      });
      if (r.errors.length > 0) throw new Error(`the worker refused lines: ${JSON.stringify(r.errors.slice(0, 3))}`);
    }
    const ms = performance.now() - t0;
    console.log(`scrape ${k}${k === 0 ? ' (every series new)' : ''}: ${(ms / 1000).toFixed(2)} s, ${((ms * 1e6) / o.series).toFixed(0)} ns a line`);
  }
  await worker.terminate();
}

await main();
