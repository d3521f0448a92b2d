// model/buffer-pool.ts: sizes by powers of two, buffers reused only once given back (and only
// those made here), zeroed when asked, a few idle per size, large requests never kept.
import test from 'ava';
import { BufferPool } from '../model/buffer-pool.js';

test('a buffer is reused once given back, zeroed when asked, as left when not', (t) => {
  const pool = new BufferPool(64, 1024, 2);
  const a = pool.take(100, false);
  t.is(a.byteLength, 128);
  t.is(pool.take(10, false).byteLength, 64, 'the smallest size');
  new Uint8Array(a).fill(7);
  pool.give(a);
  pool.give(a); // a second give is ignored: the buffer is handed out once
  const again = pool.take(120, false);
  t.is(again, a);
  t.not(pool.take(120, false), a);
  t.is(new Uint8Array(again)[5], 7);
  pool.give(again);
  const zeroed = pool.take(128, true);
  t.is(zeroed, a);
  t.true(new Uint8Array(zeroed).every((b) => b === 0));
});

test('foreign and large buffers are never kept; at most idlePerSize per size', (t) => {
  const pool = new BufferPool(64, 1024, 2);
  const foreign = new ArrayBuffer(128);
  pool.give(foreign);
  t.not(pool.take(128, false), foreign);
  const large = pool.take(5000, false);
  t.is(large.byteLength, 5000);
  pool.give(large);
  t.not(pool.take(5000, false), large);
  const made = [pool.take(256, false), pool.take(256, false), pool.take(256, false)];
  made.forEach((b) => pool.give(b));
  const back = [pool.take(256, false), pool.take(256, false), pool.take(256, false)];
  t.is(back.filter((b) => made.includes(b)).length, 2);
});
