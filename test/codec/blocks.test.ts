import test from 'ava';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { BlockFormatError } from '../../model/codec/errors.js';
import { blockHeader, decodeNumericBlock, encodeNumericBlock } from '../../model/codec/numeric-block.js';
import { decodeTextBlock, encodeTextBlock } from '../../model/codec/text-block.js';
import type { NumericValue } from '../../model/types.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const sortedTs = (n: number) =>
  fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 45 }), { minLength: n, maxLength: n }).map((a) => a.sort((x, y) => x - y));

test('exact bytes: a regular integer series', (t) => {
  // format 5, count 3, first 1000, span 20, no nulls, one run of 1 zero dod after the first delta;
  // scale 0, mode 1 (deltas, bit-packed), first 1, deltas: min 1, width 0 (a constant step).
  const b = encodeNumericBlock({ ts: [1000, 1010, 1020], values: [1, 2, 3] });
  t.is(hex(b), '0503e807140028030001020200');
  t.deepEqual(decodeNumericBlock(b), { ts: [1000, 1010, 1020], values: [1, 2, 3] });
});

test('exact bytes: floats, nulls and text', (t) => {
  t.is(hex(encodeNumericBlock({ ts: [5], values: [1.5] })), '0501050000' + '02001e', 'a short decimal: scale 1, a constant mantissa 15');
  t.is(hex(encodeNumericBlock({ ts: [5], values: [Math.PI] })), '0101050000' + '400921fb54442d18', 'a double: raw IEEE-754 bits');
  const withNull = encodeNumericBlock({ ts: [1, 2], values: [null, 7] });
  t.is(hex(withNull), '0502010101400400000e');
  t.is(hex(encodeTextBlock({ ts: [9], values: ['hé'] })), '040109000003' + '68c3a9');
  t.deepEqual(blockHeader(withNull), { version: 5, count: 2, firstTs: 1, lastTs: 2 });
});

test('exact bytes: constant and constant-step blocks cost a few bytes in all', (t) => {
  const ts = [1000, 1010, 1020, 1030];
  t.is(hex(encodeNumericBlock({ ts, values: [7, 7, 7, 7] })), '0504e8071e002805' + '00000e', 'scale 0, mode 0 (constant), 7');
  t.is(hex(encodeNumericBlock({ ts, values: [1200, 1300, 1400, 1500] })), '0504e8071e002805' + '0301180200', 'scale −2 (trailing zeros), deltas: first 12, step 1, width 0');
  const day = Array.from({ length: 8640 }, (_, i) => 1_700_000_000_000 + i * 10_000);
  t.true(encodeNumericBlock({ ts: day, values: day.map(() => 34_359_738_368) }).length < 32);
  t.true(encodeNumericBlock({ ts: day, values: day.map((_, i) => 5 + i * 0.25) }).length < 32);
});

test('timestamps in whole seconds are counted in seconds, and come back in ms', (t) => {
  const ts = [1_700_000_000_000, 1_700_000_010_000, 1_700_000_020_000];
  const b = encodeNumericBlock({ ts, values: [1, 2, 3] });
  t.is(hex(b.subarray(0, 10)), '0503' + '80e2cfaa06' + '14' + '04' + '28', 'first 1 700 000 000 s, span 20 s, flag 4, step 10 s');
  t.deepEqual(decodeNumericBlock(b), { ts, values: [1, 2, 3] });
  t.deepEqual(blockHeader(b), { version: 5, count: 3, firstTs: ts[0], lastTs: ts[2] });
  t.is(encodeNumericBlock({ ts: [...ts.slice(0, 2), ts[2]! + 1], values: [1, 2, 3] })[8]! & 4, 0, 'one timestamp off the second: in ms');
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 200 }).chain((n) => fc.tuple(sortedTs(n), fc.array(fc.oneof(fc.double(), fc.integer(), fc.constant(null)), { minLength: n, maxLength: n }))), ([secs, values]) => {
      const stamps = secs.map((x) => (x % 2 ** 40) * 1000).sort((a, b) => a - b);
      const back = decodeNumericBlock(encodeNumericBlock({ ts: stamps, values }));
      t.deepEqual(back.ts, stamps);
      values.forEach((v, i) => {
        if (!Object.is(back.values[i], v)) throw new Error(`value ${i}`);
      });
    }),
    { numRuns: 200 },
  );
});

/** Values as the fixture writes them: JSON numbers, or strings for what JSON cannot say. */
function fixtureValue(v: number | string | null): NumericValue {
  if (typeof v !== 'string') return v;
  if (v.endsWith('n')) return BigInt(v.slice(0, -1));
  return v === '-0' ? -0 : Number(v);
}

test('blocks written before format 5 (formats 1–3) still decode to the samples they were written from', (t) => {
  const cases = JSON.parse(readFileSync('test/fixtures/raw-blocks-v1/blocks.json', 'utf8')) as { name: string; hex: string; ts: number[]; values: (number | string | null)[]; gens?: number[] }[];
  t.true(cases.length >= 9);
  t.deepEqual([...new Set(cases.map((c) => c.hex.slice(0, 2)))].sort(), ['01', '02', '03'], 'the fixture holds every old numeric format');
  for (const c of cases) {
    const block = Buffer.from(c.hex, 'hex');
    const back = decodeNumericBlock(block);
    t.deepEqual(back.ts, c.ts, c.name);
    t.is(back.values.length, c.values.length, c.name);
    c.values.forEach((v, i) => t.true(Object.is(back.values[i], fixtureValue(v)), `${c.name}: value ${i}`));
    t.deepEqual(back.gens, c.gens, c.name);
    const again = encodeNumericBlock(back);
    t.deepEqual(decodeNumericBlock(again), back, `${c.name} re-encodes in today's format`);
    if (c.hex.startsWith('02') && c.ts.length > 50) t.true(again.length < block.length, `${c.name}: format 5 is smaller (${again.length} < ${block.length})`);
  }
});

test('packed blocks pick delta-of-delta, bit-packing, varints or zstd by size, and every choice round-trips', (t) => {
  const ts = Array.from({ length: 500 }, (_, i) => 1_700_000_000_000 + i * 10_000);
  const shapes: Record<string, number[]> = {
    'accelerating counter (delta of delta)': ts.map((_, i) => 1000 + i * i * 3),
    'random walk (bit-packed deltas)': ts.map((_, i) => Math.round(1e6 * Math.sin(i * 1.7))),
    'mostly flat with spikes (zstd)': ts.map((_, i) => (i % 97 === 0 ? 2 ** 40 + i : 5)),
    'wide integers': ts.map((_, i) => (i % 2 === 0 ? 2 ** 51 : -(2 ** 51))),
    'negative decimals': ts.map((_, i) => -(i + 1) / 1000),
  };
  for (const [name, values] of Object.entries(shapes)) {
    const block = encodeNumericBlock({ ts, values });
    t.is(block[0], 5, name);
    t.deepEqual(decodeNumericBlock(block).values, values, name);
  }
  t.true(encodeNumericBlock({ ts, values: shapes['accelerating counter (delta of delta)']! }).length < 40, 'a constant second difference costs a few bytes');
  t.true(encodeNumericBlock({ ts, values: shapes['mostly flat with spikes (zstd)']! }).length < 200);
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
  const spiky = Array.from({ length: 100 }, (_, i) => (i % 9 === 0 ? 2 ** 40 + i : i % 3));
  const blocks = [
    encodeNumericBlock({ ts: [1, 2, 3, 10], values: [1.5, 2.25, null, -3] }),
    encodeNumericBlock({ ts: spiky.map((_, i) => i * 10), values: spiky }),
    encodeNumericBlock({ ts: [1, 2, 3, 4, 5], values: [1, 4, 9, 16, 25] }),
    encodeNumericBlock({ ts: [1, 2, 3], values: [5, 5, 5] }),
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

test('bit-packed residuals of every width read back, the stream end included', (t) => {
  // Deltas spread evenly over [0, 2^w) are bit-packed at width w; short and long blocks put the
  // last values at every distance from the stream's end (the fast path reads four bytes at a time).
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let w = 1; w <= 40; w++) {
    for (const n of [3, 4, 5, 9, 17, 33, 100, 361]) {
      const values = [0];
      for (let i = 1; i < n; i++) values.push(values[i - 1]! + Math.floor(next() * 2 ** w));
      const ts = values.map((_, i) => 1000 * (i + 1));
      const back = decodeNumericBlock(encodeNumericBlock({ ts, values }));
      t.deepEqual(back.values, values, `width ${w}, ${n} values`);
    }
  }
});

test('blocks are encoded through one reused writer: a huge block leaves nothing behind for the next', (t) => {
  const small = { ts: [1000, 2000, 3000], values: [1.5, 2.25, 3] };
  const before = Buffer.from(encodeNumericBlock(small));
  const n = 200_000;
  const huge = { ts: Array.from({ length: n }, (_, i) => i * 1000), values: Array.from({ length: n }, (_, i) => (i * 7919) % 100_003) };
  const hugeBytes = encodeNumericBlock(huge);
  t.deepEqual(decodeNumericBlock(hugeBytes), huge);
  const after = encodeNumericBlock(small);
  t.deepEqual(Buffer.from(after), before, 'the same bytes as before the huge block');
  t.is(after.buffer.byteLength, after.byteLength, 'each block its own memory, not a view of the writer');
  t.deepEqual(decodeNumericBlock(hugeBytes), huge, 'an earlier block is not overwritten by a later one');
});
