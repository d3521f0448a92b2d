import test from 'ava';
import fc from 'fast-check';
import { BlockFormatError } from '../../model/codec/errors.js';
import { blockHeader, decodeNumericBlock, encodeNumericBlock } from '../../model/codec/numeric-block.js';
import { decodeTextBlock, encodeTextBlock } from '../../model/codec/text-block.js';
import type { NumericValue } from '../../model/types.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const sortedTs = (n: number) =>
  fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 45 }), { minLength: n, maxLength: n }).map((a) => a.sort((x, y) => x - y));

test('exact bytes: a regular integer series', (t) => {
  // format 2, count 3, first 1000, span 20, no nulls, one run of 1 zero dod after the first delta.
  const b = encodeNumericBlock({ ts: [1000, 1010, 1020], values: [1, 2, 3] });
  t.is(hex(b), '0203e8071400280300020202');
  t.deepEqual(decodeNumericBlock(b), { ts: [1000, 1010, 1020], values: [1, 2, 3] });
});

test('exact bytes: floats, nulls and text', (t) => {
  t.is(hex(encodeNumericBlock({ ts: [5], values: [1.5] })), '0201050000' + '011e', 'a short decimal: scale 1, mantissa 15');
  t.is(hex(encodeNumericBlock({ ts: [5], values: [Math.PI] })), '0101050000' + '400921fb54442d18', 'a double: raw IEEE-754 bits');
  const withNull = encodeNumericBlock({ ts: [1, 2], values: [null, 7] });
  t.is(hex(withNull), '02020101014004000e');
  t.is(hex(encodeTextBlock({ ts: [9], values: ['hé'] })), '040109000003' + '68c3a9');
  t.deepEqual(blockHeader(withNull), { version: 2, count: 2, firstTs: 1, lastTs: 2 });
});

test('numeric blocks round-trip every double bit pattern, ints, bigints and nulls', (t) => {
  const value: fc.Arbitrary<NumericValue> = fc.oneof(
    fc.double(),
    fc.integer(),
    fc.constant(null),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
    fc.constant(-0),
    fc.constant(NaN),
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 300 }).chain((n) => fc.tuple(sortedTs(n), fc.array(value, { minLength: n, maxLength: n }))), ([ts, values]) => {
      const back = decodeNumericBlock(encodeNumericBlock({ ts, values }));
      t.deepEqual(back.ts, ts);
      t.is(back.values.length, values.length);
      values.forEach((v, i) => {
        if (!Object.is(back.values[i], v)) throw new Error(`value ${i}: ${String(v)} came back as ${String(back.values[i])}`);
      });
    }),
    { numRuns: 300 },
  );
  // NaN payloads survive bit for bit.
  const buf = new DataView(new ArrayBuffer(8));
  buf.setUint32(0, 0x7ff80000 | 0x1234);
  buf.setUint32(4, 0xdeadbeef);
  const odd = buf.getFloat64(0);
  const back = decodeNumericBlock(encodeNumericBlock({ ts: [1, 2], values: [1, odd] })).values[1] as number;
  const out = new DataView(new ArrayBuffer(8));
  out.setFloat64(0, back);
  t.is(out.getUint32(4), 0xdeadbeef);
});

test('numeric blocks keep generations when one is non-zero', (t) => {
  const plain = encodeNumericBlock({ ts: [1, 2, 3], values: [1, null, 3], gens: [0, 0, 0] });
  t.deepEqual(decodeNumericBlock(plain), { ts: [1, 2, 3], values: [1, null, 3] }, 'all-zero generations cost nothing');
  t.deepEqual(plain, encodeNumericBlock({ ts: [1, 2, 3], values: [1, null, 3] }));
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 100 }).chain((n) => fc.tuple(sortedTs(n), fc.array(fc.integer({ min: -32768, max: 32767 }), { minLength: n, maxLength: n }))), ([ts, gens]) => {
      const values = ts.map((x, i) => (i % 3 === 0 ? null : x / 4));
      const back = decodeNumericBlock(encodeNumericBlock({ ts, values, gens }));
      t.deepEqual([back.ts, back.values, back.gens ?? ts.map(() => 0)], [ts, values, gens]);
    }),
    { numRuns: 200 },
  );
});

test('text blocks round-trip unicode, empty strings and nulls', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 100 }).chain((n) => fc.tuple(sortedTs(n), fc.array(fc.option(fc.string({ unit: 'grapheme' })), { minLength: n, maxLength: n }))), ([ts, values]) => {
      t.deepEqual(decodeTextBlock(encodeTextBlock({ ts, values })), { ts, values });
    }),
  );
});

test('truncated or corrupted blocks raise BlockFormatError, never anything else', (t) => {
  const blocks = [
    encodeNumericBlock({ ts: [1, 2, 3, 10], values: [1.5, 2.25, null, -3] }),
    encodeNumericBlock({ ts: [1, 2], values: [2n ** 63n, 1] }),
    encodeNumericBlock({ ts: [1, 2, 3], values: [1, 2, 3] }),
    encodeTextBlock({ ts: [1, 5], values: ['abc', null] }),
  ];
  for (const block of blocks) {
    for (let cut = 0; cut < block.length; cut++) {
      const piece = block.subarray(0, cut);
      const decode = block[0] === 4 ? decodeTextBlock : decodeNumericBlock;
      t.throws(() => decode(piece), { instanceOf: BlockFormatError }, `cut at ${cut}`);
    }
  }
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (junk) => {
      for (const decode of [decodeNumericBlock, decodeTextBlock]) {
        try {
          decode(junk);
        } catch (error) {
          if (!(error instanceof BlockFormatError)) throw error;
        }
      }
    }),
  );
  t.pass();
});

test('10 s-spaced slowly varying floats cost under 4 bytes per sample', (t) => {
  const ts = Array.from({ length: 360 }, (_, i) => 1_700_000_000_000 + i * 10_000);
  const values = ts.map((_, i) => Math.round((50 + 40 * Math.sin(i / 17)) * 1000) / 1000);
  const bytes = encodeNumericBlock({ ts, values }).length;
  t.true(bytes / ts.length < 4, `${(bytes / ts.length).toFixed(2)} bytes/sample`);
  const counter = encodeNumericBlock({ ts, values: ts.map((_, i) => 1000 + i * 7) }).length;
  t.true(counter / ts.length < 1.5, `counter: ${(counter / ts.length).toFixed(2)} bytes/sample`);
});

test('blocks decode from a view at any offset of a larger buffer (as RocksDB hands them out)', (t) => {
  const value: fc.Arbitrary<NumericValue> = fc.oneof(fc.double(), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }), fc.integer(), fc.constant(null));
  fc.assert(
    fc.property(fc.array(value, { minLength: 1, maxLength: 50 }), fc.nat(15), (values, offset) => {
      const ts = values.map((_, i) => 1000 + i);
      const block = encodeNumericBlock({ ts, values });
      // A pooled Buffer: the block sits inside a bigger ArrayBuffer, unaligned.
      const pool = Buffer.alloc(offset + block.length + 64, 0xa5);
      pool.set(block, offset);
      const back = decodeNumericBlock(pool.subarray(offset, offset + block.length));
      values.forEach((v, i) => {
        if (!Object.is(back.values[i], v)) throw new Error(`value ${i}: ${String(v)} came back as ${String(back.values[i])}`);
      });
    }),
    { numRuns: 500 },
  );
  t.pass();
});
