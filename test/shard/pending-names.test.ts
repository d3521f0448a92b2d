// actors/shard/pending-names.ts: names of the newest rows by row, as a Map of them would hold them.
import test from 'ava';
import fc from 'fast-check';
import { PendingNames } from '../../actors/shard/pending-names.js';

test('pending names read back as a Map would hold them, through runs that empty and start again', (t) => {
  // Each step takes the next row (or skips some), or lets go of a row taken before.
  const step = fc.oneof(fc.record({ take: fc.nat({ max: 3 }) }), fc.record({ drop: fc.nat({ max: 40 }) }));
  fc.assert(
    fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
      const names = new PendingNames();
      const model = new Map<number, string>();
      let next = 0;
      for (const s of steps) {
        if ('take' in s) {
          next += s.take;
          names.set(next, `m${next}`);
          model.set(next, `m${next}`);
          next++;
        } else {
          const row = Math.max(0, next - 1 - s.drop);
          names.delete(row);
          model.delete(row);
        }
        if (names.size !== model.size) return false;
      }
      for (let row = 0; row <= next; row++) if (names.get(row) !== model.get(row)) return false;
      return true;
    }),
  );
  t.pass();
});

test('a name set below the newest rows while others are pending is refused', (t) => {
  const names = new PendingNames();
  names.set(5, 'a');
  t.throws(() => names.set(4, 'b'), { message: /below the newest rows/ });
  names.delete(5);
  names.set(4, 'b');
  t.is(names.get(4), 'b', 'once none is pending, any row starts a new run');
  names.set(4, 'c');
  t.is(names.size, 1, 'a row named again is one name');
  names.delete(4);
  t.is(names.size, 0);
  t.notThrows(() => names.set(2, 'd'), 'and none is left');
});
