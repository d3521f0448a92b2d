// The check tag CRDT (model/check-tags.ts) on its own: adds, removes and clears by stamp, and
// tag texts that are Object.prototype's property names.
import test from 'ava';
import { applyCheckTagUpdate, emptyCheckTags, presentCheckTags } from '../model/check-tags.js';

const update = (stamp: number, add: string[], remove: string[] = [], clear = false) => ({ stamp, add, remove, clear });

test('a later remove wins over an earlier add; a clear removes what was added before it', (t) => {
  let s = applyCheckTagUpdate(emptyCheckTags(), update(1, ['env:prod', 'team:a']));
  s = applyCheckTagUpdate(s, update(2, [], ['team:a']));
  t.deepEqual(presentCheckTags(s), ['env:prod']);
  s = applyCheckTagUpdate(s, update(3, ['x:y'], [], true));
  t.deepEqual(presentCheckTags(s), []);
});

test('tags named toString, constructor or __proto__ are tags like any other', (t) => {
  let s = applyCheckTagUpdate(emptyCheckTags(), update(1, ['toString', '__proto__', 'constructor:x']));
  t.deepEqual(presentCheckTags(s), ['__proto__', 'constructor:x', 'toString']);
  t.is(Object.getPrototypeOf(s.tags), Object.prototype);
  s = applyCheckTagUpdate(s, update(2, [], ['toString', '__proto__']));
  t.deepEqual(presentCheckTags(s), ['constructor:x']);
  t.deepEqual(presentCheckTags(JSON.parse(JSON.stringify(s))), ['constructor:x'], 'through JSON as stored');
});
