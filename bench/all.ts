// `npm run bench`: every benchmark in sequence, each as its own process on a quiet machine,
// their headline figures gathered (bench/summary.ts) into one Markdown table: written to
// bench/results.md and into the README's Performance section between its markers.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { requireShippedNode, victoriaMetricsAvailable } from './peers.js';
import { figuresTable, forgetFigures, readFigures } from './summary.js';

/** Each benchmark with its arguments: full size, and `--quick` (minutes in all, for a smoke run). */
const BENCHES: { script: string; full: string[]; quick: string[] }[] = [
  { script: 'ingest', full: [], quick: ['--metrics', '2000', '--points', '50'] },
  { script: 'reads', full: [], quick: ['--metrics', '20', '--rounds', '5', '--no-month', '--no-load'] },
  { script: 'devops', full: [], quick: ['--hosts', '10'] },
  { script: 'find', full: [], quick: ['--checks', '5000', '--rounds', '20'] },
  { script: 'contention', full: [], quick: ['--metrics', '2000', '--rounds', '20'] },
  { script: 'histogram', full: [], quick: ['--metrics', '10', '--reads', '20'] },
  { script: 'cluster', full: [], quick: ['--metrics', '1000', '--points', '20'] },
  { script: 'index-scale', full: [], quick: ['--series', '200000'] },
  { script: 'scale', full: [], quick: ['--series', '20000'] },
];

const BEGIN = '<!-- bench:summary:begin (npm run bench writes this table) -->';
const END = '<!-- bench:summary:end -->';

function runBench(script: string, args: string[], summary: string): boolean {
  console.log(`\n## bench/${script} ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [path.join('dist/bench', `${script}.js`), ...args], { stdio: 'inherit', env: { ...process.env, BENCH_SUMMARY: summary } });
  if (r.status !== 0) console.log(`bench/${script} failed (exit ${r.status ?? r.signal}); its figures are missing from the table`);
  return r.status === 0;
}

function section(table: string, o: { quick: boolean; kept: boolean }, failed: string[]): string {
  const when = new Date().toISOString().slice(0, 10);
  const runs = o.kept ? 'rows kept across runs (`--figures bench/figures.jsonl`), each benchmark\'s rows from its latest run' : 'every row from this run';
  const how = `${when}, Node ${process.version}, ${o.quick ? '`npm run bench -- --quick` (small sizes)' : '`npm run bench`'}; ${runs}; ferrite and VictoriaMetrics on the same data in the same run of a benchmark. "ferrite advantage" above 1 means ferrite is better.`;
  const missing = failed.length === 0 ? '' : `\n\nNot in this table (the benchmark failed): ${failed.join(', ')}.`;
  return `${BEGIN}\n${how}\n\n${table}${missing}\n${END}`;
}

function writeReadme(block: string): void {
  const readme = readFileSync('README.md', 'utf8');
  const from = readme.indexOf(BEGIN);
  const to = readme.indexOf(END);
  if (from < 0 || to < from) throw new Error(`README.md has no ${BEGIN} … ${END} block to replace`);
  writeFileSync('README.md', readme.slice(0, from) + block + readme.slice(to + END.length));
}

function main(): void {
  const o = new Command('bench')
    .option('--quick', 'small sizes: a smoke run of every benchmark')
    .option('--only <names>', 'comma-separated benchmarks to run')
    .option('--no-readme', 'write bench/results.md only')
    .option('--figures <file>', 'keep the figures in this JSON-lines file across runs: a later run of a benchmark replaces its rows, the table shows them all')
    .parse()
    .opts<{ quick?: boolean; only?: string; readme: boolean; figures?: string }>();
  requireShippedNode();
  if (!victoriaMetricsAvailable()) console.log('VictoriaMetrics is not installed (apt-get install victoria-metrics): the table will have no peer column');
  const only = o.only?.split(',');
  const dir = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-all-'));
  const summary = o.figures ?? path.join(dir, 'figures.jsonl');
  const failed: string[] = [];
  try {
    for (const b of BENCHES.filter((x) => only === undefined || only.includes(x.script))) {
      forgetFigures(summary, b.script);
      if (!runBench(b.script, o.quick ? b.quick : b.full, summary)) failed.push(b.script);
    }
    const block = section(figuresTable(readFigures(summary)), { quick: o.quick === true, kept: o.figures !== undefined }, failed);
    writeFileSync('bench/results.md', `${block}\n`);
    if (o.readme) writeReadme(block);
    console.log(`\n${block}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
