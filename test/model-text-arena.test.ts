// model/text-arena.ts: texts read back exactly as added, by number, across growths, whatever
// their characters (lone surrogates aside: metric names are valid UTF-8 by the time they are kept).
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

test('a number not handed out is a bug, not an empty text', (t) => {
  const arena = new TextArena();
  arena.add('a|ST[b:c]');
  t.is(arena.text(0), 'a|ST[b:c]');
  t.throws(() => arena.text(1), { message: /BUG: text 1 of 1/ });
  t.throws(() => arena.text(-1), { instanceOf: RangeError });
});
