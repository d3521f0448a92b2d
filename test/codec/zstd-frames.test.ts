// model/codec/zstd-frames.ts: one reused zstd context must frame every input exactly as
// node:zlib's zstdCompressSync does (rollup chunks are pinned to those bytes), whatever it
// framed before: small and large inputs in any order, outputs past one 16 KiB native write.
import { zstdCompressSync, zstdDecompressSync, constants } from 'node:zlib';
import test from 'ava';
import { ZstdFrames } from '../../model/codec/zstd-frames.js';

function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

test('frames are those of zstdCompressSync, context reused across sizes and contents', (t) => {
  const next = lcg(5);
  for (const level of [3, 1]) {
    const frames = new ZstdFrames(level);
    const options = { params: { [constants.ZSTD_c_compressionLevel]: level } };
    for (let k = 0; k < 400; k++) {
      // Mostly column-sized inputs; some empty, some whose frames (noise) pass 16 KiB.
      const n = k % 50 === 0 ? 0 : Math.floor(next() ** 3 * 70_000);
      const style = k % 4;
      const input = Uint8Array.from({ length: n }, (_, i) => (style === 0 ? next() * 256 : style === 1 ? (i % 7) * 3 + next() * 4 : style === 2 ? (next() < 0.9 ? 0 : next() * 256) : (i >> 5) * 13));
      const lead = k % 3;
      const framed = frames.frameAfter(lead, input);
      const want = zstdCompressSync(input, options);
      if (!want.equals(framed.subarray(lead))) return t.fail(`input ${k} (${n} bytes, style ${style}, level ${level}) framed otherwise`);
      t.deepEqual(new Uint8Array(zstdDecompressSync(framed.subarray(lead))), input);
    }
  }
  t.pass();
});
