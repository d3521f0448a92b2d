// Rollup chunk formats v2 and v3: column codecs pinned by hex and round-tripped on random input,
// whole chunks round-tripped, and reads summing chunk periods into slots.
import test from 'ava';
import fc from 'fast-check';
import { accumulate, emptyAccumulator, type RollupAccumulator } from '../../model/rollup/accumulator.js';
import { CHUNK_PERIODS, chunkStartOf, encodeChunk, PARTS, QUANTITIES, RollupChunk, type ChunkPeriods } from '../../model/rollup/chunk.js';
import { ColumnScheme, decimalsOf, decodeColumn, encodeColumn, encodeColumnV3, shiftUlps } from '../../model/rollup/column-codec.js';
import { RollupSlots } from '../../model/rollup/slots.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const roundTrip = (xs: number[]) => Array.from(decodeColumn(encodeColumn(Float64Array.from(xs)), xs.length));

test('column schemes pinned by hex', (t) => {
  t.is(hex(encodeColumn(Float64Array.of(0, 0, 0))), '00');
  // counts 6, 6, 5: deltas 6, 0, -1 zigzagged to 12, 0, 1
  t.is(hex(encodeColumn(Float64Array.of(6, 6, 5))), '010c0001');
  // 1.25, 1.5: two decimals, 125 then +25 → 250 (LEB128 fa 01), 50
  t.is(hex(encodeColumn(Float64Array.of(1.25, 1.5))), '0202fa0132');
  // 1/3 has no short decimal form: XOR planes, most significant byte first
  t.is(hex(encodeColumn(Float64Array.of(1 / 3))), '033fd5555555555555');
});

test('columns pick the smallest fitting scheme', (t) => {
  t.is(decimalsOf(Float64Array.of(1, 2, 3)), 0);
  t.is(decimalsOf(Float64Array.of(0.1, 2.25)), 2);
  t.is(decimalsOf(Float64Array.of(0.1 + 0.2)), -1, '0.30000000000000004 needs 17 digits');
  t.is(encodeColumn(Float64Array.of(0.1 + 0.2))[0], ColumnScheme.xorPlanes);
  const ramp = Float64Array.from({ length: 1440 }, (_, i) => (5000 + i) / 100);
  const coded = encodeColumn(ramp);
  t.is(coded[0]! & 0x7f, ColumnScheme.decimal);
  t.true(coded.length < 1440, `a decimal ramp codes to ${coded.length} bytes`);
});

test('smooth doubles deflate their high planes and keep the low ones raw', (t) => {
  const thirds = Float64Array.from({ length: 1440 }, (_, i) => 1000 + i / 3);
  const coded = encodeColumn(thirds);
  t.is(coded[0], ColumnScheme.xorPlanes | 0x80);
  t.true(coded.length < 1440 * 6, `${coded.length} bytes`);
  t.deepEqual(decodeColumn(coded, thirds.length), thirds);
});

test('columns round-trip any doubles exactly', (t) => {
  const special = fc.constantFrom(0, -0, NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53, -(2 ** 60), 0.1, 1e-9);
  const decimal = fc.integer({ min: -1e9, max: 1e9 }).chain((n) => fc.constantFrom(n, n / 10, n / 1000, n / 1e6));
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.double(), special, decimal), { maxLength: 300 }), (xs) => {
      const back = roundTrip(xs);
      return back.length === xs.length && xs.every((x, i) => Object.is(back[i], x));
    }),
    { numRuns: 2000, examples: [[[4503600, 1e-9]]] },
  );
  t.pass();
});

test('v3 columns round-trip any doubles exactly', (t) => {
  const special = fc.constantFrom(0, -0, NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53, -(2 ** 60), 0.1, 1e-9, 0.1 + 0.2, -1e-17);
  const decimal = fc.integer({ min: -1e9, max: 1e9 }).chain((n) => fc.constantFrom(n, n / 10, n / 1000, n / 1e6, n / 10 + 0.2, n * 1e9 + 0.1));
  const v3 = (xs: number[]) => Array.from(decodeColumn(encodeColumnV3(Float64Array.from(xs)), xs.length));
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.double(), special, decimal, decimal, decimal), { maxLength: 300 }), (xs) => {
      const back = v3(xs);
      return back.length === xs.length && xs.every((x, i) => Object.is(back[i], x));
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('v3: floating-point sums of decimals code as near-decimal, each value its ulps from the decimal', (t) => {
  // Sums of six 2-decimal values, as an accumulator adds them: most land a few ulps off the decimal.
  let x = 7;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const sums = Float64Array.from({ length: 1440 }, () => {
    let s = 0;
    for (let i = 0; i < 6; i++) s += Math.round(next() * 10000) / 100;
    return s;
  });
  t.is(decimalsOf(sums), -1, 'not exact decimals');
  const coded = encodeColumnV3(sums);
  t.is(coded[0]! & 0x3f, ColumnScheme.nearDecimal);
  t.is(coded[0]! & 0x40, 0x40, 'zstd');
  t.true(coded.length < encodeColumn(sums).length / 2, `${coded.length} bytes in v3, ${encodeColumn(sums).length} in v2`);
  t.deepEqual(decodeColumn(coded, sums.length), sums);
  // Short: stored uncompressed; 0.1 + 0.2 is 0.3 and 1 ulp.
  t.is(hex(encodeColumnV3(Float64Array.of(0.1 + 0.2))), '05010603'); // k 1, d 3 (zigzag 6), 1 ulp (zigzag 2, + 1)
});

test('a damaged column is a format error, not a wrong answer', (t) => {
  t.throws(() => decodeColumn(Uint8Array.of(0x09), 1), { message: /unknown column scheme/ });
  t.throws(() => decodeColumn(Uint8Array.of(ColumnScheme.integers, 0x80), 2), { message: /end of block/ });
});

function randomPeriods(seed: number): ChunkPeriods {
  const out: ChunkPeriods = new Map();
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let slot = 0; slot < CHUNK_PERIODS; slot++) {
    if (next() < 0.3) continue;
    const acc = emptyAccumulator();
    for (const q of QUANTITIES) acc[q] = { n: Math.floor(next() * 7), sum: Math.round(next() * 1e5) / 100, sumsq: next() * 1e6 };
    out.set(slot, acc);
  }
  return out;
}

test('chunks round-trip every period and column; an empty chunk too', (t) => {
  for (const seed of [1, 2, 3]) {
    const periods = randomPeriods(seed);
    const chunk = new RollupChunk(encodeChunk(periods));
    t.deepEqual([...chunk.slots], [...periods.keys()]);
    t.deepEqual(chunk.periods(), periods);
  }
  t.is(new RollupChunk(encodeChunk(new Map())).slots.length, 0);
  t.throws(() => new RollupChunk([Uint8Array.of(1, 0)]), { message: /version 1/ });
});

test('column records of one chunk that list other periods are a format error', (t) => {
  const a = encodeChunk(randomPeriods(1));
  const b = encodeChunk(randomPeriods(2));
  t.throws(() => new RollupChunk([a[0], b[1]]), { message: /lists other periods/ });
  const fewer = new Map([...randomPeriods(1)].slice(1));
  t.throws(() => new RollupChunk([a[0], encodeChunk(fewer)[1]]), { message: /lists other periods/ });
  t.notThrows(() => new RollupChunk([a[0], a[1], undefined, a[3]]));
});

test('v3: Σx² columns are coded against (Σx)²/n, and a read of Σx² alone is given n and Σx', (t) => {
  // Byte-sized gauges (integers near 2^34): Σx² is far past 2^53, but within a few 1e-6 of (Σx)²/n.
  let x = 11;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const samples = { ts: Array.from({ length: 3600 }, (_, i) => i * 10_000), values: [] as number[] };
  let v = 2 ** 34;
  for (let i = 0; i < 3600; i++) samples.values.push((v += Math.round((next() - 0.5) * 2 ** 26)));
  const periods: ChunkPeriods = new Map([...accumulate(samples, 60_000, null).periods].map(([s, acc]) => [s / 60_000, acc]));
  const records = encodeChunk(periods);
  const sumsq = 2;
  const chunk = new RollupChunk(records);
  t.deepEqual(chunk.periods(), periods);
  const alone = new RollupChunk(records.map((r, c) => (c === sumsq ? r : undefined)));
  t.deepEqual(alone.copiedColumns().sort(), [0, 1]);
  t.deepEqual(alone.with(records).column('value', 'sumsq'), chunk.column('value', 'sumsq'));
  const v2Bytes = encodeColumn(chunk.column('value', 'sumsq')).length;
  t.true(records[sumsq]!.length < v2Bytes * 0.85, `Σx² in ${records[sumsq]!.length} bytes, ${v2Bytes} in v2`);
});

test('a chunk of format v2 (written before v3) reads back its periods', (t) => {
  const periods = randomPeriods(4);
  // A v2 chunk: the same header with version 2, and the v2 column codec (deflate, no near-decimal).
  const v3 = encodeChunk(periods);
  const headerLength = v3[0]!.length - encodeColumnV3(new RollupChunk(v3).column('value', 'n')).length;
  const v2 = v3.map((record, c) => {
    const column = new RollupChunk(v3).column(QUANTITIES[Math.floor(c / 3)]!, PARTS[c % 3]!);
    const body = encodeColumn(column);
    const out = new Uint8Array(headerLength + body.length);
    out.set(record.subarray(0, headerLength));
    out[0] = 2;
    out.set(body, headerLength);
    return out;
  });
  t.is(v3[0]![0], 3);
  t.deepEqual(new RollupChunk(v2).periods(), periods);
});

test('slots sum the periods of a finer level and take recalculated ones over stored ones', (t) => {
  // 60 s periods of one hour of samples 10 s apart, read per 300 s.
  const samples = { ts: Array.from({ length: 360 }, (_, i) => i * 10_000), values: Array.from({ length: 360 }, (_, i) => i % 7) };
  const fine = accumulate(samples, 60_000, null).periods;
  const coarse = accumulate(samples, 300_000, null).periods;
  const periods: ChunkPeriods = new Map([...fine].map(([s, acc]) => [s / 60_000, acc]));
  const slots = new RollupSlots(0, 300_000, 13);
  slots.addChunk(new RollupChunk(encodeChunk(periods)), chunkStartOf(0, 60), 60_000);
  for (let i = 0; i < 12; i++) {
    const want = coarse.get(i * 300_000)!;
    for (const part of PARTS) t.true(Math.abs(slots.column('value', part)[i]! - want.value[part]) < 1e-9);
    t.is(slots.row(i)!.derivative.n, want.derivative.n);
  }
  t.is(slots.present[12], 0);
  t.is(slots.row(12), null);
  const replaced: RollupAccumulator = { ...emptyAccumulator(), value: { n: 1, sum: 42, sumsq: 1764 } };
  slots.replace(3, replaced);
  slots.replace(4, null);
  t.is(slots.column('value', 'sum')[3], 42);
  t.is(slots.column('value', 'n')[4], 0);
  t.is(slots.present[4], 0);
  t.deepEqual(slots.row(3), replaced);
});

test('a column equal to an earlier one is stored as a copy of it', (t) => {
  // A counter that only grows: its counter rates are its derivative rates.
  const samples = { ts: Array.from({ length: 600 }, (_, i) => i * 10_000), values: Array.from({ length: 600 }, (_, i) => i * i) };
  const periods: ChunkPeriods = new Map([...accumulate(samples, 60_000, null).periods].map(([s, acc]) => [s / 60_000, acc]));
  const records = encodeChunk(periods);
  const chunk = new RollupChunk(records);
  const bytes = { length: records.reduce((n, r) => n + r.length, 0) };
  t.deepEqual(chunk.periods(), periods);
  t.deepEqual(chunk.column('counter', 'sumsq'), chunk.column('derivative', 'sumsq'));
  const shifted = (a: RollupAccumulator): RollupAccumulator => ({ ...a, counter: { n: a.counter.n, sum: a.counter.sum + 0.5, sumsq: a.counter.sumsq + 0.5 } });
  const distinct = encodeChunk(new Map([...periods].map(([s, a]) => [s, shifted(a)]))).reduce((n, r) => n + r.length, 0);
  t.true(bytes.length < distinct, `${bytes.length} bytes with copies, ${distinct} without`);
  // A read of the counter columns alone is given the columns they copy.
  const counterOnly = new RollupChunk(records.map((r, c) => (c >= 6 && c < 9 ? r : undefined)));
  t.true(counterOnly.copiedColumns().length > 0);
  t.throws(() => counterOnly.column('counter', 'sumsq'), { message: /not read/ });
  t.deepEqual(counterOnly.with(records).column('counter', 'sumsq'), chunk.column('derivative', 'sumsq'));
});

test('a decoded value is its decimal moved by whole ulps, sign kept, across the low word, never past the largest double', (t) => {
  const out = new Float64Array(1);
  const at = (y: number, ulps: number): number | null => (shiftUlps(y, ulps, out, 0) ? out[0]! : null);
  t.is(at(1.5, 1), 1.5 + Number.EPSILON);
  t.is(at(-1.5, 1), -(1.5 + Number.EPSILON), 'magnitude grows, sign stays');
  t.is(at(0.1 + 0.2, -1), 0.3);
  const words = new Uint32Array(2);
  words[0] = 0xffffffff;
  words[1] = 0x3ff00000;
  const beforeCarry = new Float64Array(words.buffer)[0]!;
  t.is(at(beforeCarry, 1), 1 + 2 ** -20, 'the carry goes into the high word');
  t.is(at(2, -1), 2 - Number.EPSILON, 'a borrow from the high word');
  t.is(at(Number.MAX_VALUE, 1), null);
  t.is(at(Number.MAX_VALUE, -1), Number.MAX_VALUE - 2 ** 971);
  t.is(at(Number.NaN, 0), null);
  out[0] = 7;
  shiftUlps(Number.MAX_VALUE, 1, out, 0);
  t.is(out[0], 7, 'nothing written when out of range');
});
