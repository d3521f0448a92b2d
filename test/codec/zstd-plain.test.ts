// model/codec/zstd-plain.ts: zstd frames decoded on one reused context give what
// zstdDecompressSync gives, a bad frame fails as it does and leaves the next frame unharmed,
// and frames the context must not take (no stated size, a checksum) still decode.
import test from 'ava';
import fc from 'fast-check';
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { contentSize, ZstdPlain } from '../../model/codec/zstd-plain.js';

const errorOf = (f: () => unknown): string | null => {
  try {
    f();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
};

test('frames of any content decode to it, one after another on the same context', (t) => {
  const z = new ZstdPlain();
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 3000 }), { minLength: 1, maxLength: 6 }), (inputs) => {
      for (const input of inputs) t.deepEqual(Buffer.from(z.plain(zstdCompressSync(input))), Buffer.from(input));
    }),
    { numRuns: 150 },
  );
  t.true(z.reused > 150, `${z.reused} frames decoded on the reused context`);
});

test('the stated content size is read at every width of the field', (t) => {
  for (const n of [0, 1, 255, 256, 257, 65_791, 65_792, 70_000, 1 << 20]) {
    const input = Uint8Array.from({ length: n }, (_, i) => (i * 31) % 251);
    t.is(contentSize(zstdCompressSync(input)), n, `${n} bytes`);
    t.deepEqual(Buffer.from(new ZstdPlain().plain(zstdCompressSync(input))), Buffer.from(input));
  }
  t.is(contentSize(Uint8Array.of(1, 2, 3, 4, 5, 6)), null, 'not a zstd frame');
});

test('a truncated or corrupted frame fails as zstdDecompressSync fails, and the next frame decodes', (t) => {
  const z = new ZstdPlain();
  const input = Uint8Array.from({ length: 5000 }, (_, i) => (i * i) % 253);
  const frame = zstdCompressSync(input);
  const good = zstdCompressSync(Uint8Array.of(9, 8, 7));
  for (const bad of [frame.subarray(0, frame.length - 3), frame.subarray(0, 40), Uint8Array.from(frame, (b, i) => (i === 30 ? b ^ 0xff : b))]) {
    const want = errorOf(() => zstdDecompressSync(bad));
    const got = errorOf(() => z.plain(bad));
    if (want === null) t.deepEqual(Buffer.from(z.plain(bad)), zstdDecompressSync(bad));
    else t.is(got, want);
    t.deepEqual(Array.from(z.plain(good)), [9, 8, 7]);
  }
});

test('bytes after a frame: decoded as zstdDecompressSync decodes them, and the next frame is unharmed', (t) => {
  const z = new ZstdPlain();
  const a = Uint8Array.from({ length: 300 }, (_, i) => i % 11);
  const b = Uint8Array.from({ length: 200 }, (_, i) => i % 5);
  for (const after of [zstdCompressSync(b), zstdCompressSync(b).subarray(0, 9), Buffer.from('junk')]) {
    const input = Buffer.concat([zstdCompressSync(a), after]);
    t.is(contentSize(input), null);
    t.is(errorOf(() => z.plain(input)), errorOf(() => zstdDecompressSync(input)));
    if (errorOf(() => zstdDecompressSync(input)) === null) t.deepEqual(Buffer.from(z.plain(input)), zstdDecompressSync(input));
    t.deepEqual(Buffer.from(z.plain(zstdCompressSync(b))), Buffer.from(b));
  }
});

test('frames with a checksum or past the output limit go the plain way', (t) => {
  const z = new ZstdPlain();
  const input = Uint8Array.from({ length: 400 }, (_, i) => i % 7);
  const checked = zstdCompressSync(input, { params: { [constants.ZSTD_c_checksumFlag]: 1 } });
  t.is(contentSize(checked), null);
  t.deepEqual(Buffer.from(z.plain(checked)), Buffer.from(input));
  t.throws(() => z.plain(zstdCompressSync(input), 100), { message: /100|larger|limit|exceed/i });
  t.deepEqual(Buffer.from(z.plain(zstdCompressSync(input), 400)), Buffer.from(input));
});
