// model/text-arena.ts: texts read back exactly as added, by number, across growths, whatever
// their characters (lone surrogates aside: metric names are valid UTF-8 by the time they are kept),
// and compare and match in UTF-8 byte order.
import test from 'ava';
import fc from 'fast-check';
import { TextArena } from '../model/text-arena.js';

test('every text added reads back as added, by its number, past many growths', (t) => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 300 }), { maxLength: 3000 }), (texts) => {
      const arena = new TextArena();
      const numbers = texts.map((s) => arena.add(s));
      return numbers.every((n, i) => n === i && arena.text(n) === texts[i]) && arena.size === texts.length;
    }),
    { numRuns: 30 },
  );
  t.pass();
});

test('texts compare and match as their UTF-8 bytes, whether added as text or as bytes', (t) => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }), { minLength: 2, maxLength: 200 }), (texts) => {
      const arena = new TextArena(16, 2);
      texts.forEach((s, i) => (i % 2 === 0 ? arena.add(s) : arena.addBytes(Buffer.from(s), Buffer.byteLength(s))));
      const sign = (x: number) => Math.sign(x);
      return texts.every((a, i) => {
        const b = texts[(i + 1) % texts.length]!;
        const bytes = Buffer.from(b);
        const prefix = Buffer.from(a).subarray(0, 2);
        return (
          arena.text(i) === a &&
          arena.byteLength(i) === Buffer.byteLength(a) &&
          sign(arena.compare(i, (i + 1) % texts.length)) === sign(Buffer.compare(Buffer.from(a), bytes)) &&
          sign(arena.compareBytes(i, bytes, bytes.length)) === sign(Buffer.compare(Buffer.from(a), bytes)) &&
          arena.startsWith(i, prefix, prefix.length) &&
          arena.startsWith(i, bytes, bytes.length) === Buffer.from(a).subarray(0, bytes.length).equals(bytes)
        );
      });
    }),
    { numRuns: 50 },
  );
  t.pass();
});

test('a number not handed out is a bug, not an empty text', (t) => {
  const arena = new TextArena();
  arena.add('a|ST[b:c]');
  t.is(arena.text(0), 'a|ST[b:c]');
  t.throws(() => arena.text(1), { message: /BUG: text 1 of 1/ });
  t.throws(() => arena.text(-1), { instanceOf: RangeError });
});

test('sortedRange gives a range of texts in UTF-8 byte order, equal texts by number', (t) => {
  // Texts sharing long prefixes (what the keyed sort skips), ending inside and past the 4-byte key,
  // with NUL bytes (which the key pads with), repeats and non-ASCII; ranges that start past 0.
  const stem = fc.constantFrom('', 'bench.metric.', 'bench.metric.1', 'h\u00e9', 'a\u0000', '\u{1F600}');
  const text = fc.tuple(stem, fc.oneof(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.nat(100_000).map(String), fc.constantFrom('', '\u0000', '\u0000\u0000', '1', '12', '1234', '12345'))).map(([a, b]) => a + b);
  fc.assert(
    fc.property(fc.array(text, { maxLength: 300 }), fc.nat(20), (texts, skip) => {
      const arena = new TextArena(16, 2);
      for (const s of texts) arena.add(s);
      const from = Math.min(skip, texts.length);
      const want = texts
        .map((s, i) => ({ s, i }))
        .slice(from)
        .sort((a, b) => Buffer.compare(Buffer.from(a.s), Buffer.from(b.s)) || a.i - b.i)
        .map((x) => x.i);
      t.deepEqual([...arena.sortedRange(from, texts.length)], want);
    }),
    { numRuns: 300 },
  );
});

test('mergeSorted merges two lists in byte order into one in byte order, ties taking the first list first', (t) => {
  const stem = fc.constantFrom('', 'bench.metric.', 'bench.metric.12', 'h\u00e9', 'a\u0000');
  const text = fc.tuple(stem, fc.oneof(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.nat(100_000).map(String), fc.constantFrom('', '\u0000', '1234', '12345'))).map(([a, b]) => a + b);
  fc.assert(
    fc.property(fc.array(fc.tuple(text, fc.boolean()), { maxLength: 200 }), (items) => {
      const arena = new TextArena(16, 2);
      for (const [s] of items) arena.add(s);
      const order = (list: number[]) => list.sort((x, y) => Buffer.compare(Buffer.from(items[x]![0]), Buffer.from(items[y]![0])) || x - y);
      const a = order(items.flatMap(([, first], i) => (first ? [i] : [])));
      const b = order(items.flatMap(([, first], i) => (first ? [] : [i])));
      const into = new Uint32Array(items.length);
      arena.mergeSorted(Uint32Array.from(a), Uint32Array.from(b), into);
      const fromA = new Set(a);
      const want = [...a, ...b].sort((x, y) => Buffer.compare(Buffer.from(items[x]![0]), Buffer.from(items[y]![0])) || Number(fromA.has(y)) - Number(fromA.has(x)) || x - y);
      t.deepEqual([...into], want);
    }),
    { numRuns: 300 },
  );
});
