// model/typed-arrays.ts: columns grow by doubling, keep what they held, and fill their new part.
import test from 'ava';
import { grown, withRoom } from '../model/typed-arrays.js';

test('grown copies into a longer array of the same kind, the new part zero or the fill', (t) => {
  const a = Int32Array.of(1, 2, 3);
  const b = grown(a, 6, -1);
  t.true(b instanceof Int32Array);
  t.deepEqual([...b], [1, 2, 3, -1, -1, -1]);
  t.deepEqual([...grown(Float64Array.of(0.5), 3)], [0.5, 0, 0]);
});

test('withRoom keeps an array with room, and doubles one without (to the need when doubling is short)', (t) => {
  const a = Uint32Array.of(7, 8, 9, 10);
  t.is(withRoom(a, 4), a, 'room enough: the same array, not a copy');
  const doubled = withRoom(a, 5, 99);
  t.is(doubled.length, 8);
  t.deepEqual([...doubled], [7, 8, 9, 10, 99, 99, 99, 99]);
  const needed = withRoom(a, 20);
  t.is(needed.length, 20);
  t.deepEqual([...needed.subarray(0, 4)], [7, 8, 9, 10]);
});
