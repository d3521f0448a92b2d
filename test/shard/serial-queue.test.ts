// actors/shard/serial-queue.ts: a partition's writes run one at a time in the order queued, reads
// side by side (a few at once) between them, and a failing task fails alone.
import test from 'ava';
import { MAX_READS_AT_ONCE, SerialQueue } from '../../actors/shard/serial-queue.js';

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

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('reads queued together run side by side; a write waits for every read queued before it, and reads after it wait for it', async (t) => {
  const q = new SerialQueue();
  const log: string[] = [];
  let reading = 0;
  let most = 0;
  const read = (name: string, ms: number) => async () => {
    reading++;
    most = Math.max(most, reading);
    log.push(`start ${name}`);
    await pause(ms);
    log.push(`end ${name}`);
    reading--;
  };
  const write = (name: string) => async () => {
    t.is(reading, 0, `${name} runs with no read running`);
    log.push(`write ${name}`);
    await pause(5);
    log.push(`wrote ${name}`);
  };
  await Promise.all([q.run(write('w1')), q.read(read('r1', 30)), q.read(read('r2', 10)), q.run(write('w2')), q.read(read('r3', 1)), q.run(write('w3'))]);
  t.is(most, 2, 'r1 and r2 overlapped');
  t.deepEqual(log, ['write w1', 'wrote w1', 'start r1', 'start r2', 'end r2', 'end r1', 'write w2', 'wrote w2', 'start r3', 'end r3', 'write w3', 'wrote w3']);
  t.is(q.depth, 0);
});

test('a write after hundreds of reads still waits for every one of them; a failing read fails alone', async (t) => {
  const q = new SerialQueue();
  let done = 0;
  const reads = Array.from({ length: 300 }, (_, i) =>
    q.read(async () => {
      await pause(i < 64 ? 25 + (i % 7) : i % 7); // the first reads end last
      if (i === 150) throw new Error('read failed');
      done++;
    }),
  );
  const seen = await q.run(() => done);
  t.is(seen, 299);
  await t.throwsAsync(reads[150]!, { message: 'read failed' });
  t.is(q.depth, 0);
});

test('no more than MAX_READS_AT_ONCE reads run at once, and each of many runs', async (t) => {
  const q = new SerialQueue();
  let reading = 0;
  let most = 0;
  const reads = Array.from({ length: 40 }, (_, i) =>
    q.read(async () => {
      reading++;
      most = Math.max(most, reading);
      await pause(i % 3 === 0 ? 8 : 2);
      reading--;
      return i;
    }),
  );
  t.deepEqual(await Promise.all(reads), Array.from({ length: 40 }, (_, i) => i));
  t.is(most, MAX_READS_AT_ONCE, 'the bound is reached and never passed');
  t.is(q.depth, 0);
});
