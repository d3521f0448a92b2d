// storage/activity.ts: slices noted between checkpoints are merged into each metric's stored
// windows, visible before they are flushed, bounded per flush, and replaced or dropped on demand.
import test from 'ava';
import { ACTIVITY_SLICE_S } from '../../model/activity.js';
import { canonicalizeMetricName, splitCanonical } from '../../model/metric-name.js';
import { ActivityTracker } from '../../storage/activity.js';
import { activityKey, CF } from '../../storage/keys.js';
import { MetricIndex } from '../../storage/metric-index/metric-index.js';
import type { Store } from '../../storage/rocks.js';
import { indexedActivity } from '../../storage/shard-storage.js';
import { IngestBatch, type Placed } from '../../model/ingest-batch.js';
import type { AccountId, MetricKey } from '../../model/types.js';
import { metricId, withStore } from './store.js';

const S = ACTIVITY_SLICE_S;
const m = (n: number) => ({ id: metricId(n), idHex: metricId(n).toString('hex') });
const at = (slice: number) => slice * S * 1000 + 1234;

test('noted slices are seen before and after a flush, coalesced into windows that survive a restart', async (t) => {
  await withStore(async (open) => {
    let tracker = new ActivityTracker(open.store);
    const a = m(1);
    // Slices closer than the coalescing gap (8 h) join one window; 200 is far enough to stay apart.
    for (const slice of [10, 11, 11, 14, 200]) tracker.note(a, at(slice));
    const expected = [
      [10 * S, 15 * S],
      [200 * S, 201 * S],
    ];
    t.deepEqual(await tracker.windows([a]), [expected], 'pending slices are visible at once');
    await tracker.flushAll();
    tracker = new ActivityTracker(await open.reopen());
    t.deepEqual(await tracker.windows([a, m(2)]), [expected, []]);
    tracker.note(a, at(400));
    await tracker.flushAll();
    t.deepEqual(await new ActivityTracker(open.store).windows([a]), [[...expected, [400 * S, 401 * S]]]);
  });
});

test('a flush writes at most its limit of metrics; the rest waits for the next', async (t) => {
  await withStore(async ({ store }) => {
    const tracker = new ActivityTracker(store);
    for (let n = 1; n <= 5; n++) tracker.note(m(n), at(1));
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
    tracker.note(b, at(3));
    await tracker.drop(b.id, b.idHex);
    await tracker.flushAll();
    t.deepEqual(await new ActivityTracker(store).windows([a, b]), [[[0, S]], []]);
  });
});

const PARTITION = 3;

async function indexed(store: Store, ...ms: { id: Buffer }[]): Promise<MetricIndex> {
  const { index } = await MetricIndex.load(store);
  const batch = store.batch();
  const staged = index.stage(
    batch,
    ms.map(({ id }, i) => {
      const name = canonicalizeMetricName(`m${i}`);
      if (!name.ok) throw new Error(name.reason);
      return { metric: { id, accountId: 1, uuid: '0a2a3f6c-0000-4000-8000-000000000001', checkName: 'c_1_1::t', name: name.value }, kind: 'numeric' as const };
    }),
  );
  await batch.write();
  index.apply(staged);
  return index;
}

test("with the index's windows at hand, a flush reads nothing and writes a metric's windows only when they changed; a failed write is written next time", async (t) => {
  await withStore(async (open) => {
    const a = m(1);
    const b = m(2);
    const index = await indexed(open.store, a);
    let reads = 0;
    let failWrites = 0;
    const store = new Proxy(open.store, {
      get: (target, key) => {
        if (key === 'getMany') return (...args: unknown[]) => (reads++, (target.getMany as (...a: unknown[]) => unknown)(...args));
        if (key === 'batch')
          return () => {
            const batch = target.batch();
            if (failWrites-- > 0)
              batch.write = () => {
                batch.discard();
                return Promise.reject(new Error('disk full'));
              };
            return batch;
          };
        return Reflect.get(target, key, target);
      },
    });
    const tracker = new ActivityTracker(store, indexedActivity(index, PARTITION));
    // The shard notes a sample in its index before the partition does.
    const sample = (slice: number) => {
      const batch = new IngestBatch<Placed & { id: Buffer; indexId: number }>();
      batch.addNumeric({ id: a.id, indexId: -1, partition: PARTITION, key: 'k' as MetricKey, accountId: 1 as AccountId, uuid: 'u', checkName: 'c', name: splitCanonical('m0') }, at(slice), 1);
      index.noteActivity(batch);
      tracker.note(a, at(slice));
    };
    const stored = async () => (await open.store.get(CF.index, activityKey(a.id)))?.toString('hex') ?? null;
    sample(10);
    t.deepEqual(await tracker.windows([a]), [[[10 * S, 11 * S]]], "reads see the index's windows");
    await tracker.flushAll();
    t.is(reads, 0, 'no read for a metric the index knows');
    t.not(await stored(), null);

    // Another sample in the same slice changes nothing: the flush does not write (the key deleted here stays deleted).
    await open.store.batch().delete(CF.index, activityKey(a.id)).write();
    sample(10);
    await tracker.flushAll();
    t.is(await stored(), null, 'unchanged windows are not rewritten');

    // A new slice extends the window; the write fails, so the next flush writes it.
    sample(11);
    failWrites = 1;
    await t.throwsAsync(tracker.flushAll(), { message: 'disk full' });
    t.is(await stored(), null);
    sample(11);
    await tracker.flushAll();
    t.deepEqual(await new ActivityTracker(open.store).windows([a]), [[[10 * S, 12 * S]]], 'what is stored');

    tracker.note(b, at(3));
    await tracker.flushAll();
    t.is(reads, 1, 'one read for a metric the index does not know');
    t.deepEqual(await new ActivityTracker(await open.reopen()).windows([a, b]), [[[10 * S, 12 * S]], [[3 * S, 4 * S]]]);
  });
});

test("a flush writes at most its limit of the index's changed metrics; the rest wait for the next", async (t) => {
  await withStore(async (open) => {
    const ms = [m(1), m(2), m(3)];
    const index = await indexed(open.store, ...ms);
    const tracker = new ActivityTracker(open.store, indexedActivity(index, PARTITION));
    const batch = new IngestBatch<Placed & { id: Buffer; indexId: number }>();
    for (const x of ms) batch.addNumeric({ id: x.id, indexId: -1, partition: PARTITION, key: 'k' as MetricKey, accountId: 1 as AccountId, uuid: 'u', checkName: 'c', name: splitCanonical('m') }, at(20), 1);
    index.noteActivity(batch);
    const stored = async () => (await Promise.all(ms.map((x) => open.store.get(CF.index, activityKey(x.id))))).filter((v) => v !== null).length;
    t.is(await new ActivityTracker(open.store, indexedActivity(index, PARTITION + 1)).flush(), 0, "another partition's tracker takes none of them");
    t.is(await tracker.flush(2), 2);
    t.is(await stored(), 2);
    t.is(await tracker.flush(2), 1);
    t.is(await stored(), 3);
    t.is(await tracker.flush(2), 0, 'nothing changed since');
  });
});
