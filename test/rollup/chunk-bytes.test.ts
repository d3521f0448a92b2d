// The rollup chunk encoder's exact output, pinned. Chunks already stored are compared and
// merged by what they decode to, but ageing's speed-ups (issue 31: one zstd context reused,
// columns coded in reused memory) were meant to change no byte; these hashes were taken from
// the encoder before them, over inputs that reach every column scheme: integers, decimals,
// near-decimal sums with and without the Σx² prediction, predicted ulps, XOR planes, copies,
// escapes (NaN, ±∞, -0, huge and tiny values) and columns past one 16 KiB zstd output chunk.
import { createHash } from 'node:crypto';
import test from 'ava';
import { accumulate } from '../../model/rollup/accumulator.js';
import { encodeChunk, type ChunkPeriods } from '../../model/rollup/chunk.js';
import { encodeColumnV3 } from '../../model/rollup/column-codec.js';

function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/** A day of samples of one shape, 10 s apart (with gaps in some), as the chunk of its 60 s periods. */
function dayOf(shape: number, seed: number): ChunkPeriods {
  const next = lcg(seed);
  const samples = { ts: [] as number[], values: [] as number[] };
  let v = 1000;
  for (let i = 0; i < 8640; i++) {
    if (shape === 5 && i % 1000 < 170) continue; // gaps
    let x: number;
    switch (shape) {
      case 0: x = Math.round(500 + 400 * Math.sin(i / 700 + seed)) / 10; break; // the ageing bench's gauge
      case 1: x = v = Math.max(0, Math.min(100, v / 10 + (next() - 0.5) * 3)) * 10; x = Math.round(x) / 100; break; // 2 decimals
      case 2: x = v += Math.floor(next() * 1e4); break; // a counter
      case 3: x = Math.floor(8e9 + next() * 1e9); break; // bytes
      case 4: x = (next() - 0.5) * 10 ** Math.floor(next() * 20 - 10); break; // any doubles
      case 5: x = Math.round(next() * 1000) / 8; break;
      default: x = [NaN, Infinity, -Infinity, 0, 1e300, -1e300, 5e-324, 0.1, 1 / 3][Math.floor(next() * 9)]!;
    }
    samples.ts.push(i * 10_000);
    samples.values.push(x);
  }
  return new Map([...accumulate(samples, 60_000, null).periods].map(([s, acc]) => [s / 60_000, acc]));
}

/** A column of odd doubles: values of one style, some of them escaped. */
function oddColumn(style: number, n: number, seed: number): Float64Array {
  const next = lcg(seed);
  const odd = [0, -0, NaN, Infinity, -Infinity, 5e-324, 2 ** 53, 2 ** 50 + 1, -(2 ** 50), 1e-9, 0.1, 0.30000000000000004, 1e21, Number.MAX_VALUE];
  const bits = new Float64Array(1);
  const words = new Uint32Array(bits.buffer);
  return Float64Array.from({ length: n }, (_, i) => {
    switch (style) {
      case 0: return odd[Math.floor(next() * odd.length)]!;
      case 1: return Math.round(next() * 1e6) / 100 + (next() < 0.1 ? 0.1 + 0.2 : 0);
      case 2:
        words[0] = Math.floor(next() * 2 ** 32);
        words[1] = Math.floor(next() * 2 ** 32);
        return bits[0]!;
      default: return (i % 2 ? -1 : 1) * (Math.round(next() * 1e4) / 1e3 + Number.EPSILON * i);
    }
  });
}

test('the v3 chunk encoder writes the bytes it always has', (t) => {
  const chunks = createHash('sha256');
  for (let shape = 0; shape < 7; shape++) for (const seed of [1, 2]) for (const record of encodeChunk(dayOf(shape, seed))) chunks.update(record);
  t.is(chunks.digest('hex'), '85fa0d644e4c6a2f376afc9d907ac1abd5bec8600b7c22c3763c4f9d57011b4a');
  const columns = createHash('sha256');
  for (let style = 0; style < 4; style++) {
    for (const n of [1, 5, 95, 96, 97, 1440, 3000]) {
      const xs = oddColumn(style, n, style * 100 + n);
      columns.update(encodeColumnV3(xs));
      // Against a prediction near the values (Σx² columns): predicted ulps and predicted decimals.
      columns.update(encodeColumnV3(xs, Float64Array.from(xs, (x, i) => (i % 7 === 0 ? x * (1 + 1e-13) : x + 1e-9))));
    }
  }
  t.is(columns.digest('hex'), 'd4b158863acd04ab7c4b70f8b78f2a1c4b711b3ede96ccb351dbffd0417be872');
});
