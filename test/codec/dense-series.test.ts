// model/dense-series.ts and decodeNumericBlockInto: rollup reads decode blocks straight into
// typed arrays; they must give the samples the general read gives (decode, concatenate,
// normalize), nulls left out, or refuse (null) where a stamp repeats and only the conflict
// resolver can say which sample stands.
import test from 'ava';
import fc from 'fast-check';
import { decodeNumericBlock, decodeNumericBlockInto, encodeNumericBlock } from '../../model/codec/numeric-block.js';
import { sampleCombiner } from '../../model/conflict.js';
import { denseOf, denseOfParts, denseRange, releaseDense, seriesSource } from '../../model/dense-series.js';
import { concatSeries, normalizeNumeric, type Series } from '../../model/series.js';
import type { NumericValue } from '../../model/types.js';

/** Values of every block format: decimals of several widths (packed), doubles (XOR), 64-bit integers (bigint), nulls, NaN and ±∞. */
const valueArb: fc.Arbitrary<NumericValue> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -5000, max: 5000 }).map((m) => m / 100) },
  { weight: 3, arbitrary: fc.integer({ min: -(2 ** 20), max: 2 ** 20 }) },
  { weight: 2, arbitrary: fc.integer({ min: -(2 ** 50), max: 2 ** 50 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }) },
);

/** A normalized block: ascending stamps (ms or whole seconds), values of one kind mostly. */
const blockArb = (from: number) =>
  fc
    .tuple(fc.array(fc.tuple(fc.integer({ min: 1, max: 30_000 }), valueArb), { minLength: 1, maxLength: 200 }), fc.boolean(), fc.boolean())
    .map(([steps, seconds, constant]) => {
      let t = from;
      const s: Series<NumericValue> = { ts: [], values: [] };
      for (const [dt, v] of steps) {
        t += seconds ? dt * 1000 : dt;
        s.ts.push(t);
        s.values.push(constant ? steps[0]![1] : v);
      }
      return s;
    });

test('decodeNumericBlockInto appends the non-null samples decodeNumericBlock gives, any format', (t) => {
  fc.assert(
    fc.property(blockArb(1_700_000_000_000), fc.integer({ min: 0, max: 5 }), (s, at) => {
      const bytes = encodeNumericBlock(s);
      const want = denseOf(decodeNumericBlock(bytes));
      const ts = new Float64Array(at + s.ts.length);
      const values = new Float64Array(at + s.ts.length);
      const end = decodeNumericBlockInto(bytes, ts, values, at);
      t.is(end, at + want.ts.length);
      t.deepEqual([...ts.subarray(at, end)], [...want.ts]);
      for (let i = 0; i < want.values.length; i++) if (!Object.is(values[at + i], want.values[i])) throw new Error(`value ${i}: ${values[at + i]} against ${want.values[i]}`);
    }),
    { numRuns: 400 },
  );
});

test('a block with per-sample generations is left to the general read', (t) => {
  const bytes = encodeNumericBlock({ ts: [1000, 2000], values: [1, 2], gens: [0, 3] });
  t.is(decodeNumericBlockInto(bytes, new Float64Array(2), new Float64Array(2), 0), -1);
  t.is(denseOfParts([bytes], []), null);
});

/** What a partition's general read gives, without nulls. */
const general = (parts: Series<NumericValue>[]) => denseOf(normalizeNumeric(concatSeries(parts), sampleCombiner('abs_biggest')));

test('blocks and open buffers read densely as the general read reads them, or not at all when a stamp repeats', (t) => {
  const partsArb = fc.array(fc.tuple(fc.integer({ min: -2000, max: 4_000_000 }), fc.boolean()), { minLength: 1, maxLength: 6 }).chain((starts) =>
    fc.tuple(...starts.map(([from, open]) => blockArb(1_700_000_000_000 + from).map((s) => ({ s, open })))),
  );
  let dense = 0;
  let refused = 0;
  fc.assert(
    fc.property(partsArb, ([...parts]) => {
      // Sealed blocks come first (key order), open buffers after them, as a partition has them.
      const sealed = parts.filter((p) => !p.open).map((p) => p.s);
      const open = parts.filter((p) => p.open).map((p) => p.s);
      const got = denseOfParts(sealed.map((s) => encodeNumericBlock(s)), open.map(seriesSource));
      const stamps = [...sealed, ...open].flatMap((s) => s.ts);
      const ascending = stamps.every((ts, i) => i === 0 || ts > stamps[i - 1]!);
      if (got === null) {
        refused++;
        const openNull = open.some((s) => s.values.some((v) => v === null));
        t.true(!ascending || openNull, 'refused only where stamps repeat or go back, or an open buffer holds a null');
        return;
      }
      dense++;
      t.true(ascending);
      const want = general([...sealed.map((s) => decodeNumericBlock(encodeNumericBlock(s))), ...open]);
      t.deepEqual([...got.ts], [...want.ts]);
      for (let i = 0; i < want.values.length; i++) if (!Object.is(got.values[i], want.values[i])) throw new Error(`value ${i}`);
    }),
    { numRuns: 300 },
  );
  t.true(dense > 20 && refused > 20, `both cases met (${dense} dense, ${refused} refused)`);
});

test('denseRange keeps [start, end) as views', (t) => {
  const s = denseOf({ ts: [10, 20, 30, 40], values: [1, null, 3, 4] });
  const r = denseRange(s, 20, 40);
  t.deepEqual([...r.ts], [30]);
  t.is(r.ts.buffer, s.ts.buffer);
  t.deepEqual([...denseRange(s, 0, 100).values], [1, 3, 4]);
});

test('decoded samples reuse released buffers, never one buffer for two series at once; short series are scratch views, never pooled', (t) => {
  // Longer than the series whose arrays are scratch views (256 samples).
  const N = 300;
  const block = (from: number) => encodeNumericBlock({ ts: Array.from({ length: N }, (_, i) => from + 10 * i), values: Array.from({ length: N }, (_, i) => i) });
  // Whatever earlier tests left idle in the pool is taken first (and held).
  const held = Array.from({ length: 20 }, () => denseOfParts([block(0)], [])!);
  const a = denseOfParts([block(10_000)], [])!;
  releaseDense(a);
  releaseDense(a); // a second release of the same series changes nothing
  releaseDense(denseOf({ ts: [1], values: [1] })); // nor does one of arrays not from the pool
  const b = denseOfParts([block(20_000)], [])!;
  const c = denseOfParts([block(30_000)], [])!;
  t.true(b.ts.buffer === a.ts.buffer || b.values.buffer === a.ts.buffer, 'a released buffer is taken again');
  for (const [x, y] of [[b.ts, c.ts], [b.values, c.values], [b.ts, c.values], [b.values, c.ts]] as const) t.not(x.buffer, y.buffer);
  t.deepEqual([b.ts[0], b.ts[N - 1], c.ts[0], c.ts[N - 1]], [20_000, 20_000 + 10 * (N - 1), 30_000, 30_000 + 10 * (N - 1)]);
  const short = denseOfParts([encodeNumericBlock({ ts: [5, 15], values: [1, 2] })], [])!;
  t.is(short.ts.buffer, short.values.buffer, 'two samples: views of one scratch slab, not a pooled 16 KiB buffer each');
  t.deepEqual([...short.ts, ...short.values], [5, 15, 1, 2]);
  releaseDense(short); // a slab is never given to the pool: the next series cannot be handed it
  const d = denseOfParts([block(40_000)], [])!;
  t.true(d.ts.buffer !== short.ts.buffer && d.values.buffer !== short.ts.buffer);
  t.deepEqual([...short.ts, ...short.values], [5, 15, 1, 2], 'and the short series still reads the same');
  t.true(held.every((h) => h.ts.buffer !== b.ts.buffer && h.ts.buffer !== c.ts.buffer));
});
