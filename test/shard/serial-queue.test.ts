// actors/shard/serial-queue.ts: a partition's tasks run one at a time in the order queued, and a
// failing task fails alone.
import test from 'ava';
import { SerialQueue } from '../../actors/shard/serial-queue.js';

test('tasks run one at a time, in order, even when earlier ones wait', async (t) => {
  const q = new SerialQueue();
  const log: string[] = [];
  let running = 0;
  const task = (name: string, ms: number) => async () => {
    running++;
    t.is(running, 1, 'never two at once');
    log.push(`start ${name}`);
    await new Promise((r) => setTimeout(r, ms));
    log.push(`end ${name}`);
    running--;
    return name;
  };
  const results = await Promise.all([q.run(task('a', 20)), q.run(task('b', 1)), q.run(() => 'c')]);
  t.deepEqual(results, ['a', 'b', 'c']);
  t.deepEqual(log, ['start a', 'end a', 'start b', 'end b']);
  t.is(q.depth, 0);
});

test('a failing task rejects its own promise; the queue goes on', async (t) => {
  const q = new SerialQueue();
  const failed = q.run(() => {
    throw new Error('boom');
  });
  const next = q.run(() => 2);
  await t.throwsAsync(failed, { message: 'boom' });
  t.is(await next, 2);
});
