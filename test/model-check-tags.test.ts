// The check tag CRDT (model/check-tags.ts) on its own: adds, removes and clears by stamp, and
// tag texts that are Object.prototype's property names.
import test from 'ava';
import { applyCheckTagUpdate, emptyCheckTags, presentCheckTags, updatesOf } from '../model/check-tags.js';

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

test('updatesOf rebuilds a state from empty, and merges into another like the state itself', (t) => {
  let s = applyCheckTagUpdate(emptyCheckTags(), update(1, ['env:prod', 'team:a', 'toString:x']));
  s = applyCheckTagUpdate(s, update(2, [], ['team:a']));
  s = applyCheckTagUpdate(s, update(3, ['late:1'], [], true));
  s = applyCheckTagUpdate(s, update(4, ['env:prod']));
  const rebuilt = updatesOf(s).reduce(applyCheckTagUpdate, emptyCheckTags());
  t.deepEqual(rebuilt, s);
  t.deepEqual(updatesOf(emptyCheckTags()), []);
  const other = applyCheckTagUpdate(emptyCheckTags(), update(5, [], ['late:1']));
  t.deepEqual(presentCheckTags(updatesOf(s).reduce(applyCheckTagUpdate, other)), ['env:prod']);
});
