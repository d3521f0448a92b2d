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
