// actors/shard/lanes.ts: partitions' checkpoints and stop seals run a few at a time, not all at
// once (each holds its batch's blocks until written), and every one still runs, its result in place.
import test from 'ava';
import { inLanes } from '../../actors/shard/lanes.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

test('at most `lanes` run at once, every item runs once, results in the items\' order', async (t) => {
  let running = 0;
  let most = 0;
  const seen: number[] = [];
  const results = await inLanes(
    Array.from({ length: 16 }, (_, i) => i),
    async (i) => {
      running++;
      most = Math.max(most, running);
      seen.push(i);
      // Uneven work, so lanes finish out of order.
      for (let k = 0; k < (i % 3) + 1; k++) await tick();
      running--;
      return i * 10;
    },
    2,
  );
  t.is(most, 2);
  t.deepEqual([...seen].sort((a, b) => a - b), Array.from({ length: 16 }, (_, i) => i));
  t.deepEqual(results, Array.from({ length: 16 }, (_, i) => i * 10));
});

test('a failure rejects the whole; fewer items than lanes and no items are fine', async (t) => {
  await t.throwsAsync(
    inLanes([1, 2, 3], async (i) => {
      await tick();
      if (i === 2) throw new Error('partition 2 failed');
      return i;
    }),
    { message: 'partition 2 failed' },
  );
  t.deepEqual(await inLanes([7], async (i) => i + 1, 4), [8]);
  t.deepEqual(await inLanes([], async (i: number) => i), []);
});
