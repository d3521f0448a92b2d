// storage/keys.ts: 64-bit big-endian numbers in keys are the bytes BigInt wrote before, so keys
// written by earlier releases sort and read the same.
import test from 'ava';
import fc from 'fast-check';
import { blockKey, decodeU64, encodeU64, histogramKey, rollupKey, writeU64 } from '../../storage/keys.js';

const bigIntBytes = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

test('writeU64 writes the bytes writeBigUInt64BE writes, and decodeU64 reads them back', (t) => {
  const edges = [0, 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 1_795_000_000_000, Number.MAX_SAFE_INTEGER, 2 ** 53, 2 ** 60];
  fc.assert(
    fc.property(fc.oneof(fc.constantFrom(...edges), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })), (n) => {
      const b = Buffer.alloc(12);
      writeU64(b, n, 3);
      t.deepEqual(b.subarray(3, 11), bigIntBytes(n));
      t.deepEqual(encodeU64(n), bigIntBytes(n));
      t.is(decodeU64(b, 3), n);
    }),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 8, maxLength: 8 }), (bytes) => {
      const b = Buffer.from(bytes);
      t.is(decodeU64(b), Number(b.readBigUInt64BE(0)), 'any 8 bytes, rounded as BigInt rounds');
    }),
    { numRuns: 2000 },
  );
  t.throws(() => writeU64(Buffer.alloc(8), -1, 0), { instanceOf: RangeError });
  t.throws(() => writeU64(Buffer.alloc(8), 1.5, 0), { instanceOf: RangeError });
});

test('keys order by their numbers as bytes', (t) => {
  const id = Buffer.alloc(16, 7);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 48 }), fc.integer({ min: 0, max: 2 ** 48 }), (a, b) => {
      const sign = Math.sign(a - b);
      t.is(Math.sign(Buffer.compare(blockKey(id, a, 5), blockKey(id, b, 5))), sign);
      t.is(Math.sign(Buffer.compare(blockKey(id, 9, a), blockKey(id, 9, b))), sign);
      t.is(Math.sign(Buffer.compare(histogramKey(id, 60, a, 1), histogramKey(id, 60, b, 1))), sign);
      t.is(Math.sign(Buffer.compare(rollupKey(id, 60, a), rollupKey(id, 60, b))), sign);
    }),
  );
});
