// bench/overload: more writers than a node can serve in time (32 × 5000-line TSV bodies by
// default), once with the write latency budget (writeLatencyBudgetMs, 1 s by default) and once
// without it. Prints, for each, the acknowledged writes' p50/p99/slowest, the refused (503)
// answers and the samples acknowledged per second. Writers that are refused wait Retry-After,
// as a client should; `--no-backoff` sends again at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { envName } from '../bin/config-sources.js';
import { UUID } from './dataset.js';
import { startFerrite } from './peers.js';

const CHECK = `bench.example\`bench\`c_1_1::bench\`${UUID}`;

interface Options {
  writers: number;
  lines: number;
  seconds: number;
  budgetMs: number;
  backoff: boolean;
}

interface Outcome {
  label: string;
  acked: number[];
  refused: number;
  other: number;
  seconds: number;
}

function body(writer: number, seq: number, lines: number): string {
  const ts = Math.floor(Date.now() / 1000) - 5;
  return Array.from({ length: lines }, (_, i) => `M\t${ts}.${String(seq % 1000).padStart(3, '0')}\t${CHECK}\tbench.overload.w${writer}.m${i}\tn\t${seq}`).join('\n');
}

async function run(label: string, budgetMs: number, o: Options, root: string): Promise<Outcome> {
  process.env[envName('writeLatencyBudgetMs')] = String(budgetMs);
  const node = await startFerrite(path.join(root, label.replace(/\W+/g, '-')), [], 60_000);
  const out: Outcome = { label, acked: [], refused: 0, other: 0, seconds: o.seconds };
  try {
    const until = performance.now() + o.seconds * 1000;
    await Promise.all(
      Array.from({ length: o.writers }, async (_, w) => {
        for (let seq = 0; performance.now() < until; seq++) {
          const sent = performance.now();
          const res = await fetch(`${node.url}/raw`, { method: 'PUT', body: body(w, seq, o.lines) });
          await res.arrayBuffer();
          if (res.status === 200) out.acked.push(performance.now() - sent);
          else if (res.status === 503) {
            out.refused++;
            if (o.backoff) await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
          } else out.other++;
        }
      }),
    );
  } finally {
    await node.stop();
  }
  return out;
}

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;

async function main(): Promise<void> {
  const o = new Command('bench-overload')
    .option('--writers <n>', 'writers, each sending one body after another', (v) => Number(v), 32)
    .option('--lines <n>', 'lines per body', (v) => Number(v), 5000)
    .option('--seconds <n>', 'seconds of each run', (v) => Number(v), 20)
    .option('--budget-ms <n>', 'writeLatencyBudgetMs of the run with a budget', (v) => Number(v), 1000)
    .option('--no-backoff', 'refused writers send again at once instead of waiting Retry-After')
    .parse()
    .opts<Options>();
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-overload-'));
  const outcomes: Outcome[] = [];
  try {
    outcomes.push(await run(`budget ${o.budgetMs} ms`, o.budgetMs, o, root));
    outcomes.push(await run('no budget', 0, o, root));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`bench/overload: ${o.writers} writers × ${o.lines}-line bodies for ${o.seconds} s, ${o.backoff ? 'refused writers wait Retry-After' : 'refused writers send again at once'}`);
  console.log('\n| run | acknowledged | p50 ms | p99 ms | slowest ms | refused (503) | other | samples/s acknowledged |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const x of outcomes) {
    const sorted = [...x.acked].sort((a, b) => a - b);
    const rate = (x.acked.length * o.lines) / x.seconds;
    console.log(`| ${x.label} | ${x.acked.length} | ${pct(sorted, 0.5).toFixed(0)} | ${pct(sorted, 0.99).toFixed(0)} | ${(sorted.at(-1) ?? NaN).toFixed(0)} | ${x.refused} | ${x.other} | ${Math.round(rate)} |`);
  }
}

await main();
