// Bytes of numeric rollup chunks on the devops data (bench/devops-data.ts), without a server:
// the rollups the store would write (60 s periods from raw, coarser levels as sums of finer,
// like storage/rollups.ts), encoded with model/rollup/chunk.ts. Prints, per level and per
// column, record bytes (values, not keys) per 60 s period of data.
//   node dist/bench/rollup-bytes.js [--hosts 5] [--days 1] [--step-s 10]
import { Command } from 'commander';
import { accumulate, addInto, emptyAccumulator, type RollupAccumulator } from '../model/rollup/accumulator.js';
import { CHUNK_PERIODS, chunkStartOf, COLUMNS, encodeChunk, PARTS, QUANTITIES, type ChunkPeriods } from '../model/rollup/chunk.js';
import { FIELDS, prng, series } from './devops-data.js';

const LEVELS = [60, 300, 1800, 10800, 86400];
const DAY_S = 86_400;

interface Options {
  hosts: number;
  days: number;
  stepS: number;
  kind?: string;
}

/** Periods of every level, by level period, by period start (ms). */
function levelsOf(ts: number[], values: Float64Array): Map<number, Map<number, RollupAccumulator>> {
  const out = new Map<number, Map<number, RollupAccumulator>>();
  let finer = accumulate({ ts, values: [...values] }, LEVELS[0]! * 1000, null).periods;
  out.set(LEVELS[0]!, finer);
  for (const period of LEVELS.slice(1)) {
    const ms = period * 1000;
    const coarse = new Map<number, RollupAccumulator>();
    for (const s of [...finer.keys()].sort((a, b) => a - b)) {
      const p = s - (s % ms);
      let acc = coarse.get(p);
      if (acc === undefined) coarse.set(p, (acc = emptyAccumulator()));
      addInto(acc, finer.get(s)!);
    }
    out.set(period, coarse);
    finer = coarse;
  }
  return out;
}

function chunksOf(periods: Map<number, RollupAccumulator>, period: number): ChunkPeriods[] {
  const chunks = new Map<number, ChunkPeriods>();
  for (const [s, acc] of periods) {
    const start = chunkStartOf(s, period);
    let c = chunks.get(start);
    if (c === undefined) chunks.set(start, (c = new Map()));
    c.set((s - start) / (period * 1000), acc);
  }
  return [...chunks.values()];
}

function main(): void {
  const o = new Command('rollup-bytes')
    .option('--hosts <n>', 'hosts (24 series each)', (v) => Number(v), 5)
    .option('--days <n>', 'days of data', (v) => Number(v), 1)
    .option('--step-s <n>', 'seconds between samples', (v) => Number(v), 10)
    .option('--kind <kind>', 'only series of this kind: percent, bytes or counter')
    .parse()
    .opts<Options>();
  const points = (o.days * DAY_S) / o.stepS;
  const start = 20_000 * DAY_S * 1000;
  const ts = Array.from({ length: points }, (_, i) => start + i * o.stepS * 1000);
  const rand = prng(42);
  const fields = FIELDS.filter(([, kind]) => o.kind === undefined || kind === o.kind);
  const seriesCount = o.hosts * fields.length;
  const periods60 = seriesCount * (o.days * DAY_S) / 60;
  const bytes = new Map(LEVELS.map((l) => [l, new Float64Array(COLUMNS)]));
  const chunkCount = new Map(LEVELS.map((l) => [l, 0]));
  let encodeMs = 0;
  let encodedPeriods = 0;
  for (let h = 0; h < o.hosts; h++) {
    for (const [, kind] of FIELDS) {
      const values = series(kind, points, rand);
      if (o.kind !== undefined && kind !== o.kind) continue;
      for (const [period, periods] of levelsOf(ts, values)) {
        for (const chunk of chunksOf(periods, period)) {
          const t0 = process.cpuUsage();
          const records = encodeChunk(chunk);
          const used = process.cpuUsage(t0);
          encodeMs += (used.user + used.system) / 1000;
          encodedPeriods += chunk.size;
          records.forEach((record, c) => (bytes.get(period)![c] += record.length));
          chunkCount.set(period, chunkCount.get(period)! + 1);
        }
      }
    }
  }
  console.log(`rollup-bytes: ${seriesCount} series × ${o.days} day(s) at ${o.stepS} s; bytes of record values per 60 s period of data (keys add 29 B per record)`);
  const names = QUANTITIES.flatMap((q) => PARTS.map((p) => `${q}.${p}`));
  console.log(['level', 'total', 'chunks', ...names].join('\t'));
  let all = 0;
  for (const level of LEVELS) {
    const b = bytes.get(level)!;
    const total = b.reduce((x, y) => x + y, 0);
    all += total;
    console.log([`${level} s`, (total / periods60).toFixed(2), chunkCount.get(level), ...[...b].map((x) => (x / periods60).toFixed(2))].join('\t'));
  }
  console.log(`all levels\t${(all / periods60).toFixed(2)} B per 60 s period; ${(all / (seriesCount * points)).toFixed(2)} B per raw sample; chunk periods ${CHUNK_PERIODS}`);
  console.log(`encoding: ${(encodeMs / 1000).toFixed(2)} CPU-s for ${encodedPeriods} periods (${((encodeMs * 1e6) / encodedPeriods).toFixed(0)} ns a period, ${((encodeMs * 1440) / encodedPeriods).toFixed(2)} ms per 1440-period chunk)`);
}

main();
