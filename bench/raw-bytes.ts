// bench/raw-bytes (`npm run bench:raw-bytes`): bytes per sample of raw numeric blocks, per kind of
// series, without a server: the devops generator's series (bench/devops-data.ts) cut into blocks the
// way a partition seals them (one block per `blockSpanMs` window, at most `maxBlockSamples`), each
// encoded by the block codec and counted with its RocksDB key. Two shapes: realistic (≈ 1000 series ×
// 1 day at 10 s) and short (10k series × 100 points), plus constant series on their own.
import { Command } from 'commander';
import { encodeNumericBlock } from '../model/codec/numeric-block.js';
import { METRIC_ID_BYTES } from '../storage/keys.js';
import { FIELDS, prng, series, type Kind } from './devops-data.js';

interface Options {
  series: number;
  points: number;
  shortSeries: number;
  shortPoints: number;
  stepS: number;
  spanS: number;
  maxBlock: number;
}

type Shape = Kind | 'constant';
const KEY_BYTES = METRIC_ID_BYTES + 16;
const T0 = 1_748_736_000_000;

interface Tally {
  series: number;
  samples: number;
  blocks: number;
  bytes: number;
}

/** Encodes one series as sealed blocks; returns its bytes (values + keys) and block count. */
function encodeSeries(values: Float64Array, o: Options): { bytes: number; blocks: number } {
  const spanMs = o.spanS * 1000;
  let bytes = 0;
  let blocks = 0;
  let i = 0;
  while (i < values.length) {
    const window = Math.floor((T0 + i * o.stepS * 1000) / spanMs);
    const ts: number[] = [];
    const vs: number[] = [];
    while (i < values.length && ts.length < o.maxBlock && Math.floor((T0 + i * o.stepS * 1000) / spanMs) === window) {
      ts.push(T0 + i * o.stepS * 1000);
      vs.push(values[i]!);
      i++;
    }
    bytes += encodeNumericBlock({ ts, values: vs }).length + KEY_BYTES;
    blocks++;
  }
  return { bytes, blocks };
}

function constantSeries(points: number, rand: () => number): Float64Array {
  return new Float64Array(points).fill(Math.floor(rand() * 64) * 2 ** 30);
}

function measure(label: string, count: number, points: number, shapes: readonly Shape[], o: Options): void {
  const rand = prng(42);
  const tallies = new Map<Shape, Tally>();
  for (let s = 0; s < count; s++) {
    const shape = shapes[s % shapes.length]!;
    const values = shape === 'constant' ? constantSeries(points, rand) : series(shape, points, rand);
    const { bytes, blocks } = encodeSeries(values, o);
    const t = tallies.get(shape) ?? { series: 0, samples: 0, blocks: 0, bytes: 0 };
    t.series++;
    t.samples += points;
    t.blocks += blocks;
    t.bytes += bytes;
    tallies.set(shape, t);
  }
  const total: Tally = { series: 0, samples: 0, blocks: 0, bytes: 0 };
  console.log(`\n${label}: ${count} series × ${points} points at ${o.stepS} s`);
  console.log('| kind | series | samples | blocks | bytes | bytes/sample | of which keys |');
  console.log('|---|---|---|---|---|---|---|');
  const row = (name: string, t: Tally) =>
    console.log(`| ${name} | ${t.series} | ${t.samples} | ${t.blocks} | ${t.bytes} | ${(t.bytes / t.samples).toFixed(3)} | ${((t.blocks * KEY_BYTES) / t.samples).toFixed(3)} |`);
  for (const [shape, t] of tallies) {
    row(shape, t);
    for (const k of ['series', 'samples', 'blocks', 'bytes'] as const) total[k] += t[k];
  }
  if (tallies.size > 1) row('all', total);
}

function main(): void {
  const o = new Command('bench-raw-bytes')
    .option('--series <n>', 'realistic: series (devops kinds in turn)', (v) => Number(v), 1008)
    .option('--points <n>', 'realistic: points per series', (v) => Number(v), 8640)
    .option('--short-series <n>', 'short: series', (v) => Number(v), 10_000)
    .option('--short-points <n>', 'short: points per series', (v) => Number(v), 100)
    .option('--step-s <n>', 'seconds between samples', (v) => Number(v), 10)
    .option('--span-s <n>', 'block window (blockSpanMs), seconds', (v) => Number(v), 3600)
    .option('--max-block <n>', 'most samples a sealed block holds (maxBlockSamples)', (v) => Number(v), 4096)
    .parse()
    .opts<Options>();
  const devops = FIELDS.map(([, kind]) => kind);
  measure('realistic (devops kinds)', o.series, o.points, devops, o);
  measure('short (devops kinds)', o.shortSeries, o.shortPoints, devops, o);
  measure('constant', 100, o.points, ['constant'], o);
}

main();
