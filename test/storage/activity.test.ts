// storage/activity.ts: slices noted between checkpoints are merged into each metric's stored
// windows, visible before they are flushed, bounded per flush, and replaced or dropped on demand.
import test from 'ava';
import { ACTIVITY_SLICE_S } from '../../model/activity.js';
import { ActivityTracker } from '../../storage/activity.js';
import { metricId, withStore } from './store.js';

const S = ACTIVITY_SLICE_S;
const m = (n: number) => ({ id: metricId(n), idHex: metricId(n).toString('hex') });
const at = (slice: number) => slice * S * 1000 + 1234;

test('noted slices are seen before and after a flush, coalesced into windows that survive a restart', async (t) => {
  await withStore(async (open) => {
    let tracker = new ActivityTracker(open.store);
    const a = m(1);
    // Slices closer than the coalescing gap (8 h) join one window; 200 is far enough to stay apart.
    for (const slice of [10, 11, 11, 14, 200]) tracker.note(a.id, a.idHex, at(slice));
    const expected = [
      [10 * S, 15 * S],
      [200 * S, 201 * S],
    ];
    t.deepEqual(await tracker.windows([a]), [expected], 'pending slices are visible at once');
    await tracker.flushAll();
    tracker = new ActivityTracker(await open.reopen());
    t.deepEqual(await tracker.windows([a, m(2)]), [expected, []]);
    tracker.note(a.id, a.idHex, at(400));
    await tracker.flushAll();
    t.deepEqual(await new ActivityTracker(open.store).windows([a]), [[...expected, [400 * S, 401 * S]]]);
  });
});

test('a flush writes at most its limit of metrics; the rest waits for the next', async (t) => {
  await withStore(async ({ store }) => {
    const tracker = new ActivityTracker(store);
    for (let n = 1; n <= 5; n++) tracker.note(m(n).id, m(n).idHex, at(1));
    await tracker.flush(2);
    const stored = await new ActivityTracker(store).windows([1, 2, 3, 4, 5].map(m));
    t.is(stored.filter((w) => w.length > 0).length, 2);
    await tracker.flushAll();
    t.true((await new ActivityTracker(store).windows([1, 2, 3, 4, 5].map(m))).every((w) => w.length === 1));
  });
});

test('replace and drop change what is stored, and drop forgets what was pending', async (t) => {
  await withStore(async ({ store }) => {
    const tracker = new ActivityTracker(store);
    const [a, b] = [m(1), m(2)];
    await tracker.replace(a.id, a.idHex, [[0, S]]);
    tracker.note(b.id, b.idHex, at(3));
    await tracker.drop(b.id, b.idHex);
    await tracker.flushAll();
    t.deepEqual(await new ActivityTracker(store).windows([a, b]), [[[0, S]], []]);
  });
});

test("with the index's windows at hand, a flush writes them for each noted metric and reads nothing", async (t) => {
  await withStore(async (open) => {
    const a = m(1);
    const b = m(2);
    // What the shard's index holds for metric 1 (it notes every sample before the partition does); metric 2 it does not know.
    const indexed = [[10 * S, 12 * S]] as [number, number][];
    let reads = 0;
    const store = new Proxy(open.store, { get: (target, key) => (key === 'getMany' ? (...args: unknown[]) => (reads++, (target.getMany as (...a: unknown[]) => unknown)(...args)) : Reflect.get(target, key, target)) });
    const tracker = new ActivityTracker(store, (id) => (id.equals(a.id) ? indexed : undefined));
    tracker.note(a.id, a.idHex, at(11));
    t.deepEqual(await tracker.windows([a]), [indexed], "reads see the index's windows");
    t.is(reads, 0);
    await tracker.flushAll();
    t.is(reads, 0, 'no read for a metric the index knows');
    tracker.note(b.id, b.idHex, at(3));
    await tracker.flushAll();
    t.is(reads, 1, 'one for a metric it does not');
    t.deepEqual(await new ActivityTracker(await open.reopen()).windows([a, b]), [indexed, [[3 * S, 4 * S]]], 'what is stored');
  });
});
