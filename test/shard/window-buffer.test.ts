// actors/shard/window-buffer.ts: an open window keeps samples as appended, in its compact form
// for plain doubles and in arrays once another value or a generation arrives, and trims on delete.
import test from 'ava';
import { MetricBuffers, WindowBuffer } from '../../actors/shard/window-buffer.js';

test('doubles are kept as appended, past the initial room', (t) => {
  const b = new WindowBuffer('numeric', 0, 1, 0);
  for (let i = 0; i < 9; i++) b.append(i * 10, i / 2, 0);
  t.is(b.size, 9);
  t.deepEqual(b.series(), { ts: [0, 10, 20, 30, 40, 50, 60, 70, 80], values: [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4] });
});

test('a null, a 64-bit integer or a generation switches to arrays without losing what came before', (t) => {
  const b = new WindowBuffer('numeric', 0, 1, 0);
  b.append(1, 1.5, 0);
  b.append(2, null, 0);
  b.append(3, 2n ** 63n, 0);
  b.append(4, 7, 0, 3);
  t.deepEqual(b.series(), { ts: [1, 2, 3, 4], values: [1.5, null, 2n ** 63n, 7], gens: [0, 0, 0, 3] });
});

test('a delete drops samples stamped before its time, whatever their order', (t) => {
  const b = new WindowBuffer('numeric', 0, 1, 0);
  for (const ts of [50, 10, 40, 20]) b.append(ts, ts, 0);
  t.true(b.hasBefore(11));
  t.false(b.hasBefore(10));
  b.dropBefore(30);
  t.deepEqual(b.series(), { ts: [50, 40], values: [50, 40] });
  t.false(b.hasBefore(40));
});

test("a metric's buffers: one per kind and window, the first held directly, any removed", (t) => {
  const m = new MetricBuffers();
  const a = m.bufferFor('numeric', 0, 1, 0);
  t.is(m.bufferFor('numeric', 0, 2, 0), a, 'the same window is the same buffer');
  const b = m.bufferFor('numeric', 60_000, 3, 0);
  const c = m.bufferFor('text', 0, 4, 0);
  t.is(m.size, 3);
  t.deepEqual(m.numericWindows().sort((x, y) => x - y), [0, 60_000]);
  t.deepEqual(m.overlapping('numeric', 30_000, 61_000, 60_000), [a, b]);
  m.remove(a);
  t.is(m.size, 2);
  t.is(m.bufferFor('text', 0, 5, 0), c, 'the others are still found after the first is removed');
  t.is(m.bufferFor('numeric', 60_000, 5, 0), b);
});
