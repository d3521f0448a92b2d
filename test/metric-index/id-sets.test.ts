// Set operations on sorted id arrays, checked against plain Set arithmetic on random input.
import test from 'ava';
import fc from 'fast-check';
import { difference, IdList, intersect, markMembers, select, union } from '../../storage/metric-index/id-sets.js';

const sortedSet = (max: number) => fc.uniqueArray(fc.integer({ min: 0, max }), { maxLength: 3000 }).map((a) => Uint32Array.from(a.sort((x, y) => x - y)));
const ids = (a: Uint32Array) => [...a];

test('intersect, difference and union equal Set arithmetic (merge, galloping and bitset paths)', (t) => {
  fc.assert(
    fc.property(sortedSet(20_000), sortedSet(20_000), sortedSet(200), (a, b, small) => {
      for (const [x, y] of [
        [a, b],
        [small, a],
        [a, small],
      ] as const) {
        const ys = new Set(y);
        t.deepEqual(ids(intersect(x, y)), ids(x).filter((v) => ys.has(v)));
        t.deepEqual(ids(difference(x, y)), ids(x).filter((v) => !ys.has(v)));
        t.deepEqual(ids(union([x, y], 20_001)), [...new Set([...x, ...y])].sort((p, q) => p - q));
      }
    }),
    { numRuns: 60 },
  );
});

test('markMembers flags exactly the candidates in the list', (t) => {
  fc.assert(
    fc.property(sortedSet(5000), sortedSet(5000), (cands, list) => {
      const flags = new Uint8Array(cands.length);
      markMembers(cands, list, flags);
      const inList = new Set(list);
      t.deepEqual(ids(select(cands, flags, 1)), ids(cands).filter((v) => inList.has(v)));
    }),
    { numRuns: 60 },
  );
});

test('IdList keeps ids sorted and unique whatever order they arrive in, and compacts into a fresh array', (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 400 }), (arrivals) => {
      const list = new IdList();
      for (const id of arrivals) list.add(id);
      const expected = [...new Set(arrivals)].sort((a, b) => a - b);
      t.deepEqual(ids(list.view()), expected);
      const before = list.view();
      list.compact((id) => id % 2 === 0);
      t.deepEqual(ids(list.view()), expected.filter((id) => id % 2 === 0));
      t.deepEqual(ids(before), expected, 'a view handed out earlier is left intact');
    }),
  );
});
