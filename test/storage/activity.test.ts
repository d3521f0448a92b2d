// storage/activity.ts: slices noted between checkpoints are merged into each metric's stored
// windows, visible before they are flushed, bounded per flush, and replaced or dropped on demand.
import test from 'ava';
import { ACTIVITY_SLICE_S } from '../../model/activity.js';
import { canonicalizeMetricName, splitCanonical } from '../../model/metric-name.js';
import { ActivityTracker, encodeActivityWindows } from '../../storage/activity.js';
import { ACTIVITY_BLOCK_KEYS, ACTIVITY_KEYS, activityBlockKey, activityKey, CF } from '../../storage/keys.js';
import { ACTIVITY_BLOCK_IDS } from '../../storage/metric-index/activity-blocks.js';
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

/** The shard's checkpoint step: the index writes the activity blocks of the ranges that changed. */
async function packActivity(index: MetricIndex, store: Store): Promise<number[]> {
  const batch = store.batch();
  const ranges = index.stagePackActivity(batch);
  try {
    await batch.write();
  } catch (error) {
    index.activityUnpacked(ranges);
    throw error;
  } finally {
    batch.discard();
  }
  return ranges;
}

/** The shard's step before a partition sees samples: the index notes them (by dense id, as the shard marks a metric once staged). */
const noted = (index: MetricIndex, ids: readonly Buffer[], slice: number) => {
  const batch = new IngestBatch<Placed & { id: Buffer; indexId: number }>();
  for (const id of ids) batch.addNumeric({ id, indexId: index.stagedId(id), partition: PARTITION, key: 'k' as MetricKey, accountId: 1 as AccountId, uuid: 'u', checkName: 'c', name: splitCanonical('m0') }, at(slice), 1);
  index.noteActivity(batch);
};

test("a metric the index knows: the tracker reads and writes nothing for it; the index writes the blocks whose windows changed, again after a failed write", async (t) => {
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
    const tracker = new ActivityTracker(store, indexedActivity(index));
    // The shard notes a sample in its index before the partition does.
    const sample = (slice: number) => {
      noted(index, [a.id], slice);
      tracker.note(a, at(slice));
    };
    const blocks = async () => {
      let n = 0;
      for await (const _ of open.store.scan(CF.index, ACTIVITY_BLOCK_KEYS)) n++;
      return n;
    };
    sample(10);
    t.deepEqual(await tracker.windows([a]), [[[10 * S, 11 * S]]], "reads see the index's windows");
    await tracker.flushAll();
    t.is(reads, 0, 'no read for a metric the index knows');
    t.is(await open.store.get(CF.index, activityKey(a.id)), null, 'and no key of its own');
    t.deepEqual(await packActivity(index, store), [0]);
    t.is(await blocks(), 1);

    // Another sample in the same slice changes nothing: no block is written (the one deleted here stays deleted).
    await open.store.batch().delete(CF.index, activityBlockKey(0)).write();
    sample(10);
    t.deepEqual(await packActivity(index, store), [], 'unchanged windows are not rewritten');
    t.is(await blocks(), 0);

    // A new slice extends the window; the write fails, so the next checkpoint writes it.
    sample(11);
    failWrites = 1;
    await t.throwsAsync(packActivity(index, store), { message: 'disk full' });
    t.is(await blocks(), 0);
    t.deepEqual(await packActivity(index, store), [0]);
    t.deepEqual((await MetricIndex.load(open.store)).index.activityOf(a.id), [[10 * S, 12 * S]], 'what is stored');

    tracker.note(b, at(3));
    await tracker.flushAll();
    t.is(reads, 1, 'one read for a metric the index does not know');
    t.deepEqual(await new ActivityTracker(await open.reopen()).windows([b]), [[[3 * S, 4 * S]]], 'whose windows are its own key');
  });
});

test('a block holds a range of dense ids; only the ranges with a change are written, and a reload reads every metric back', async (t) => {
  await withStore(async (open) => {
    const ms = Array.from({ length: ACTIVITY_BLOCK_IDS + 5 }, (_, n) => m(n + 1));
    const index = await indexed(open.store, ...ms);
    noted(index, ms.map((x) => x.id), 20);
    t.deepEqual((await packActivity(index, open.store)).sort(), [0, 1]);
    noted(index, [ms[ACTIVITY_BLOCK_IDS + 2]!.id], 21);
    t.deepEqual(await packActivity(index, open.store), [1], 'only the range of the metric whose window grew');
    const back = (await MetricIndex.load(open.store)).index;
    t.deepEqual(back.activityOf(ms[0]!.id), [[20 * S, 21 * S]]);
    t.deepEqual(back.activityOf(ms[ACTIVITY_BLOCK_IDS + 2]!.id), [[20 * S, 22 * S]]);
    t.is(ms.filter((x) => back.activityOf(x.id)?.length === 1).length, ms.length);
  });
});

test('`a` keys (a data dir from before activity blocks, a shard split) are merged into the blocks and deleted', async (t) => {
  await withStore(async (open) => {
    const [a, b, c] = [m(1), m(2), m(3)];
    const index = await indexed(open.store, a, b);
    noted(index, [a.id], 200);
    await packActivity(index, open.store);
    // a: a window of its own besides the block's; b: only its key; c: not a metric of this index.
    await open.store
      .batch()
      .put(CF.index, activityKey(a.id), encodeActivityWindows([[10 * S, 11 * S]]))
      .put(CF.index, activityKey(b.id), encodeActivityWindows([[30 * S, 32 * S]]))
      .put(CF.index, activityKey(c.id), encodeActivityWindows([[1 * S, 2 * S]]))
      .write();
    const loaded = (await MetricIndex.load(open.store)).index;
    t.is(await loaded.packLegacyActivity(), 3);
    for await (const _ of open.store.scan(CF.index, ACTIVITY_KEYS)) t.fail('an `a` key is left');
    const back = (await MetricIndex.load(open.store)).index;
    t.deepEqual(back.activityOf(a.id), [
      [10 * S, 11 * S],
      [200 * S, 201 * S],
    ]);
    t.deepEqual(back.activityOf(b.id), [[30 * S, 32 * S]]);
    t.is(await back.packLegacyActivity(), 0, 'nothing left to pack');
  });
});

test("a range holding a metric whose name is not yet written is written again once it is", async (t) => {
  await withStore(async (open) => {
    const [a, b] = [m(1), m(2)];
    const index = await indexed(open.store, a);
    const naming = open.store.batch();
    const name = canonicalizeMetricName('m-late');
    if (!name.ok) throw new Error(name.reason);
    const staged = index.stage(naming, [{ metric: { id: b.id, accountId: 1, uuid: '0a2a3f6c-0000-4000-8000-000000000001', checkName: 'c_1_1::t', name: name.value }, kind: 'numeric' as const }]);
    noted(index, [a.id, b.id], 30);
    t.deepEqual(await packActivity(index, open.store), [0]);
    t.deepEqual(await packActivity(index, open.store), [0], 'still to write: b is not named yet');
    await naming.write();
    index.apply(staged);
    t.deepEqual(await packActivity(index, open.store), [0]);
    t.deepEqual(await packActivity(index, open.store), [], 'written');
    t.deepEqual((await MetricIndex.load(open.store)).index.activityOf(b.id), [[30 * S, 31 * S]]);
  });
});
