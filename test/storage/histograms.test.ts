// storage/histograms.ts on a real RocksDB: submissions read back the same before and after they
// are sealed, each counted once even when a journal replay brings one back; rollups wait for the
// journal cut and the quiet time, merge a base period into one record and rebuild the coarser
// level; a restart resumes unfinished rollups; deletes cut by period start and level; and a
// coarse period is never rebuilt from a finer level that retention has thinned. Coarse levels
// age: merged from the base level when read until a walk writes them and moves the cut.
import test from 'ava';
import { resolveConfig } from '../../model/config.js';
import { Histogram, serializeHistogram } from '../../model/histogram/index.js';
import type { MetricInfo } from '../../model/metric-info.js';
import { deferredLevels, HistogramStore, MergedHistograms } from '../../storage/histograms.js';
import { CF, histogramKey, histogramKeyParts } from '../../storage/keys.js';
import type { Store } from '../../storage/rocks.js';
import { sweepRetention } from '../../storage/retention.js';
import { metricInfo, withStore } from './store.js';

const MIN = 60_000;
const T = 1_000 * 3_600_000; // an hour boundary, far from 0
const config = (overrides: Record<string, unknown> = {}) =>
  resolveConfig({
    dataDir: '/unused',
    histogramRollups: [
      { period: 60, retention: 0 },
      { period: 300, retention: 0 },
    ],
    histogramRollupQuietMs: 10_000,
    ...overrides,
  });

const of = (...values: number[]): Histogram => {
  const h = Histogram.empty();
  for (const v of values) h.insert(v);
  return h;
};
const b64 = (h: Histogram) => Buffer.from(serializeHistogram(h)).toString('base64');
const submit = (hs: HistogramStore, m: MetricInfo, ts: number, seq: number, ...values: number[]) => hs.apply(m, ts, b64(of(...values)), seq);

/** One submission (seq 1) of value i + 1 at T + minutes[i], sealed and merged by a rollup at `now`. */
async function mergedAt(hs: HistogramStore, m: MetricInfo, minutes: number[], now: number): Promise<void> {
  minutes.forEach((minute, i) => submit(hs, m, T + minute * MIN, 1, i + 1));
  await hs.seal();
  await hs.rollUp(2, now);
}

async function rows(hs: HistogramStore, m: MetricInfo, period: number, start: number, end: number): Promise<[number, Record<string, number>][]> {
  return (await hs.read(m, period, start, end)).map(([s, h]) => [s, h.toLabelCounts()]);
}

/** [level period, start offset from T, seq] of every stored record of `m`. */
async function records(store: Store, m: MetricInfo): Promise<[number, number, number][]> {
  const out: [number, number, number][] = [];
  for await (const { key } of store.scan(CF.histogram, {})) {
    if (!key.subarray(0, 16).equals(m.id)) continue;
    const p = histogramKeyParts(key);
    out.push([p.period, p.start - T, p.seq]);
  }
  return out;
}

test('submissions read back merged per period, the same before and after sealing', async (t) => {
  await withStore(async ({ store }) => {
    const hs = await HistogramStore.open(0, store, config());
    const m = metricInfo(1);
    submit(hs, m, T + 1_000, 5, 1, 2);
    submit(hs, m, T + 59_999, 6, 2); // same base period, another request
    submit(hs, m, T + MIN, 6, 30); // next period
    submit(hs, metricInfo(2), T, 6, 99); // another metric
    const expected = [
      [T, of(1, 2, 2).toLabelCounts()],
      [T + MIN, of(30).toLabelCounts()],
    ];
    t.deepEqual(await rows(hs, m, 60, T, T + MIN), expected, 'from memory');
    t.is(hs.lowWater(), 5);
    await hs.seal();
    t.is(hs.lowWater(), Infinity, 'nothing left only in memory');
    t.deepEqual(await rows(hs, m, 60, T, T + MIN), expected, 'from disk');
    t.deepEqual(await rows(hs, m, 60, T + 1, T + MIN - 1), [[T, of(1, 2, 2).toLabelCounts()]], 'the period holding start, none starting after end');
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1, 2, 2, 30).toLabelCounts()]], 'regrouped into a coarser period before any rollup');
    t.deepEqual(await rows(hs, m, 120, T, T + MIN), [[T, of(1, 2, 2, 30).toLabelCounts()]], 'a multiple of the base period');
  });
});

test('a submission replayed from the journal after it was sealed counts once', async (t) => {
  await withStore(async ({ store }) => {
    const hs = await HistogramStore.open(0, store, config());
    const m = metricInfo(1);
    submit(hs, m, T, 7, 1);
    await hs.seal();
    submit(hs, m, T, 7, 1); // the same journal entry again
    t.deepEqual(await rows(hs, m, 60, T, T), [[T, of(1).toLabelCounts()]]);
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1).toLabelCounts()]]);
    await hs.seal(); // rewrites the same key
    t.deepEqual(await rows(hs, m, 60, T, T), [[T, of(1).toLabelCounts()]]);
  });
});

test('a base period is rolled up once quiet and below the journal cut: one merged record and the coarser level rebuilt', async (t) => {
  await withStore(async ({ store }) => {
    const hs = await HistogramStore.open(0, store, config());
    const m = metricInfo(1);
    submit(hs, m, T, 3, 1);
    submit(hs, m, T + 10, 4, 2);
    submit(hs, m, T + MIN, 4, 3);
    await hs.seal();
    const quiet = T + 2 * MIN + 10_000; // both periods ended and quiet
    await hs.rollUp(4, quiet);
    t.deepEqual(await records(store, m), [
      [60, 0, 3],
      [60, 0, 4],
      [60, MIN, 4],
    ], 'seq 4 may still be replayed: nothing merged');
    await hs.rollUp(5, T + 2 * MIN + 9_999);
    t.deepEqual(await records(store, m), [
      [60, 0, 0],
      [60, MIN, 4],
    ], 'the second period is not quiet yet: only the first merged');
    await hs.rollUp(5, quiet);
    t.deepEqual(await records(store, m), [
      [60, 0, 0],
      [60, MIN, 0],
    ], 'merged; the coarser level waits until the periods age');
    t.deepEqual(await rows(hs, m, 60, T, T + MIN), [
      [T, of(1, 2).toLabelCounts()],
      [T + MIN, of(3).toLabelCounts()],
    ]);
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1, 2, 3).toLabelCounts()]], 'a coarse period not aged is merged from the base level');
    // A late submission: read at once.
    submit(hs, m, T + 4 * MIN, 9, 4);
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1, 2, 3, 4).toLabelCounts()]], 'a pending submission counts at once');
    await hs.seal();
    await hs.rollUp(10, T + 5 * MIN + 10_000);
    t.deepEqual(await records(store, m), [
      [60, 0, 0],
      [60, MIN, 0],
      [60, 4 * MIN, 0],
    ]);
    // Ageing to the end of the 300 s period writes it.
    t.true(hs.beginAgeing(T + 5 * MIN));
    t.is(await hs.age(m), 1, 'one coarse period written');
    await hs.finishAgeing(T + 5 * MIN);
    t.deepEqual(await records(store, m), [
      [60, 0, 0],
      [60, MIN, 0],
      [60, 4 * MIN, 0],
      [300, 0, 0],
    ]);
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1, 2, 3, 4).toLabelCounts()]], 'read from the aged record');
    // A late submission into an aged period rebuilds its record from the base level.
    submit(hs, m, T + 2 * MIN, 11, 5);
    await hs.seal();
    await hs.rollUp(12, T + 10 * MIN);
    t.deepEqual((await records(store, m)).filter(([level]) => level === 300), [[300, 0, 0]]);
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1, 2, 3, 4, 5).toLabelCounts()]], 'the aged record rebuilt');
    // The cut is kept across a restart: the same walk has nothing left to do.
    const reopened = await HistogramStore.open(0, store, config());
    t.false(reopened.beginAgeing(T + 5 * MIN));
    t.deepEqual(await rows(reopened, m, 300, T, T), [[T, of(1, 2, 3, 4, 5).toLabelCounts()]]);
  });
});

test('coarse levels age: a stored coarse record is read only once its period is aged, a walk cut short moves no cut, and a walk in progress makes rollups write what it writes', async (t) => {
  await withStore(async ({ store }) => {
    const hs = await HistogramStore.open(0, store, config());
    const m = metricInfo(1);
    await mergedAt(hs, m, [0, 5], T + 20 * MIN);
    // A coarse record written before ageing (a data dir of an older release, or a walk that did not finish).
    await store.batch().put(CF.histogram, histogramKey(m.id, 300, T, 0), serializeHistogram(of(1, 1, 1))).write();
    t.deepEqual(await rows(hs, m, 300, T, T + 5 * MIN), [
      [T, of(1).toLabelCounts()],
      [T + 5 * MIN, of(2).toLabelCounts()],
    ], 'periods not aged are merged from the base level; the stored record is not read');
    // A walk that writes but is abandoned: the cut stays, reads still merge from the base level.
    t.true(hs.beginAgeing(T + 10 * MIN));
    await hs.age(m);
    hs.abandonAgeing();
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1).toLabelCounts()]]);
    const again = await HistogramStore.open(0, store, config());
    t.true(again.beginAgeing(T + 10 * MIN), 'after a restart the walk is still to do');
    // A submission into the walk's range sealed and rolled up while the walk runs: its period is written by the rollup.
    const late = metricInfo(2);
    submit(again, late, T + 6 * MIN, 3, 7);
    await again.seal();
    await again.rollUp(4, T + 20 * MIN);
    t.deepEqual((await records(store, late)).filter(([level]) => level === 300), [[300, 5 * MIN, 0]], 'written by the rollup during the walk');
    t.is(await again.age(m), 2, 'the walk writes both of m\'s periods');
    await again.finishAgeing(T + 10 * MIN);
    t.deepEqual(await rows(again, m, 300, T, T + 5 * MIN), [
      [T, of(1).toLabelCounts()],
      [T + 5 * MIN, of(2).toLabelCounts()],
    ], 'aged: read from the records the walk wrote over the old one');
    t.deepEqual(await rows(again, late, 300, T, T + 5 * MIN), [[T + 5 * MIN, of(7).toLabelCounts()]]);
  });
});

test('coarse periods merged from the base level are cached until a submission to the metric is sealed or its data deleted', async (t) => {
  await withStore(async ({ store }) => {
    const cache = new MergedHistograms(1 << 20);
    const hs = await HistogramStore.open(0, store, config(), cache);
    const m = metricInfo(1);
    await mergedAt(hs, m, [0, 6], T + 20 * MIN);
    const want = [
      [T, of(1).toLabelCounts()],
      [T + 5 * MIN, of(2).toLabelCounts()],
    ];
    t.deepEqual(await rows(hs, m, 300, T, T + 10 * MIN), want);
    t.is(cache.size, 2, 'the two periods between the first and last base record cached');
    const hits = cache.hits;
    t.deepEqual(await rows(hs, m, 300, T, T + 10 * MIN), want, 'the same from the cache');
    t.is(cache.hits, hits + 2);
    // A range decades wide looks up only the periods its data spans.
    t.deepEqual(await rows(hs, m, 300, 0, 2 ** 41), want);
    t.is(cache.size, 2);
    t.deepEqual(await rows(hs, m, 600, T, T), [[T, of(1, 2).toLabelCounts()]], 'a cached period is merged into a coarser read without changing it');
    t.deepEqual(await rows(hs, m, 300, T, T + 10 * MIN), want);
    // A late submission: pending, then sealed and merged.
    submit(hs, m, T + 7 * MIN, 3, 3);
    t.deepEqual(await rows(hs, m, 300, T + 5 * MIN, T + 5 * MIN), [[T + 5 * MIN, of(2, 3).toLabelCounts()]], 'a pending submission is read past the cache');
    await hs.seal();
    await hs.rollUp(4, T + 20 * MIN);
    t.deepEqual(await rows(hs, m, 300, T + 5 * MIN, T + 5 * MIN), [[T + 5 * MIN, of(2, 3).toLabelCounts()]], 'sealed and merged: the cache was dropped');
    const batch = store.batch();
    hs.deleteBefore(batch, m, T + 10 * MIN, null);
    await batch.write();
    t.deepEqual(await rows(hs, m, 300, T, T + 10 * MIN), [], 'deleted: nothing cached is read');
  });
});

test('with a base level kept too briefly for ageing, every level is written with its base period', async (t) => {
  await withStore(async ({ store }) => {
    const cfg = config({ histogramRollups: [{ period: 60, retention: 3600 }, { period: 300, retention: 0 }], rawRetention: 86_400 });
    t.false(deferredLevels(cfg));
    t.true(deferredLevels(config({ histogramRollups: [{ period: 60, retention: 2 * 86_400 }, { period: 300, retention: 0 }], rawRetention: 86_400 })));
    t.true(deferredLevels(config()), 'the default base level is kept forever');
    const hs = await HistogramStore.open(0, store, cfg);
    const m = metricInfo(1);
    submit(hs, m, T, 1, 1);
    await hs.seal();
    await hs.rollUp(2, T + 10 * MIN);
    t.deepEqual(await records(store, m), [
      [60, 0, 0],
      [300, 0, 0],
    ]);
    t.false(hs.beginAgeing(T + 10 * MIN), 'nothing to age');
  });
});

test('a restart resumes rolling up what was sealed but not merged', async (t) => {
  await withStore(async (open) => {
    const m = metricInfo(1);
    let hs = await HistogramStore.open(3, open.store, config());
    submit(hs, m, T, 3, 5);
    await hs.seal();
    hs = await HistogramStore.open(3, await open.reopen(), config());
    await hs.rollUp(100, T + 10 * MIN);
    t.deepEqual(await records(open.store, m), [[60, 0, 0]]);
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(5).toLabelCounts()]]);
    // Another partition's store on the same RocksDB has nothing to resume.
    const other = await HistogramStore.open(4, open.store, config());
    submit(other, metricInfo(2), T, 3, 1);
    await other.seal();
    await (await HistogramStore.open(3, open.store, config())).rollUp(100, T + 10 * MIN);
    t.deepEqual(await records(open.store, metricInfo(2)), [[60, 0, 3]], "partition 3 does not touch partition 4's markers");
  });
});

test('deletes drop periods starting before the cut, per level, with what is pending', async (t) => {
  await withStore(async ({ store }) => {
    const hs = await HistogramStore.open(0, store, config());
    const m = metricInfo(1);
    await mergedAt(hs, m, [0, 5], T + 10 * MIN + 10_000);
    t.true(hs.beginAgeing(T + 10 * MIN));
    await hs.age(m);
    await hs.finishAgeing(T + 10 * MIN);
    submit(hs, m, T + MIN, 3, 3); // pending only
    t.true(await hs.hasDataBefore(m, T + MIN + 1, null));
    t.false(await hs.hasDataBefore(m, T, null), 'nothing starts before T');
    t.false(await hs.hasDataBefore(metricInfo(2), T + 10 * MIN, null));

    let batch = store.batch();
    hs.deleteBefore(batch, m, T + 5 * MIN, [300]);
    await batch.write();
    t.deepEqual(await records(store, m), [
      [60, 0, 0],
      [60, 5 * MIN, 0],
      [300, 5 * MIN, 0],
    ], 'only the 300 s level before the cut');
    t.deepEqual(await rows(hs, m, 60, T, T + 5 * MIN), [
      [T, of(1).toLabelCounts()],
      [T + MIN, of(3).toLabelCounts()],
      [T + 5 * MIN, of(2).toLabelCounts()],
    ], 'the base level and what is pending untouched');

    batch = store.batch();
    hs.deleteBefore(batch, m, T + 5 * MIN, null);
    await batch.write();
    t.deepEqual(await rows(hs, m, 60, T, T + 10 * MIN), [[T + 5 * MIN, of(2).toLabelCounts()]], 'stored and pending before the cut gone');
    t.false(await hs.hasDataBefore(m, T + 5 * MIN, null));
    t.is(hs.lowWater(), Infinity);
  });
});

test('a coarse period is read whole before its rollup, also when its data lies after the requested end', async (t) => {
  await withStore(async ({ store }) => {
    const hs = await HistogramStore.open(0, store, config());
    const m = metricInfo(1);
    submit(hs, m, T + 4 * MIN, 1, 7); // the last minute of the 300 s period starting at T
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(7).toLabelCounts()]], 'pending');
    await hs.seal();
    t.deepEqual(await rows(hs, m, 300, T, T + MIN), [[T, of(7).toLabelCounts()]], 'sealed, not rolled up');
    await hs.rollUp(2, T + 10 * MIN);
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(7).toLabelCounts()]], 'rolled up');
    submit(hs, m, T + 9 * MIN, 3, 8);
    await hs.seal();
    await hs.rollUp(4, T + 20 * MIN);
    t.deepEqual(await rows(hs, m, 600, T, T), [[T, of(7, 8).toLabelCounts()]], 'a 600 s period built from both its 300 s records');
  });
});

test('a read period no level divides is refused', async (t) => {
  await withStore(async ({ store }) => {
    const hs = await HistogramStore.open(0, store, config());
    await t.throwsAsync(hs.read(metricInfo(1), 90, T, T + MIN), { message: /90 s is not served by any histogram rollup \(60, 300\)/ });
  });
});

test('a coarse period is not rebuilt from a finer level retention has already thinned', async (t) => {
  await withStore(async ({ store }) => {
    const cfg = config({
      histogramRollups: [
        { period: 60, retention: 600 },
        { period: 300, retention: 0 },
      ],
    });
    const hs = await HistogramStore.open(0, store, cfg);
    const m = metricInfo(1);
    submit(hs, m, T, 1, 1);
    await hs.seal();
    await hs.rollUp(2, T + 2 * MIN);
    const later = T + 3_600_000;
    await sweepRetention(store, cfg, later);
    t.deepEqual(await records(store, m), [[300, 0, 0]], 'the base level expired; the coarse level is kept');
    // A late submission to the same 300 s period, rolled up long after.
    submit(hs, m, T + MIN, 5, 2);
    await hs.seal();
    await hs.rollUp(6, later);
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1).toLabelCounts()]], 'the coarse record still holds what the expired base level had');
  });
});

test('a period set replaces what earlier seqs put there, before and after sealing and rolling up; later adds count on top; a replay of the set changes nothing', async (t) => {
  await withStore(async ({ store }) => {
    const hs = await HistogramStore.open(0, store, config());
    const m = metricInfo(1);
    submit(hs, m, T + 1_000, 5, 1); // sealed and rolled up before the set
    await hs.seal();
    await hs.rollUp(100, T + 10 * MIN);
    submit(hs, m, T + 2_000, 7, 2); // sealed, not rolled up
    await hs.seal();
    submit(hs, m, T + 3_000, 8, 3); // pending when the set comes
    hs.setPeriod(m, T + 4_000, b64(of(1, 2, 3, 9)), 9);
    submit(hs, m, T + 5_000, 10, 4); // after the set: added
    submit(hs, m, T + MIN, 9, 30); // another period: untouched
    const expected = [
      [T, of(1, 2, 3, 9, 4).toLabelCounts()],
      [T + MIN, of(30).toLabelCounts()],
    ];
    t.deepEqual(await rows(hs, m, 60, T, T + MIN), expected, 'pending');
    await hs.seal();
    t.deepEqual(await rows(hs, m, 60, T, T + MIN), expected, 'sealed');
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1, 2, 3, 9, 4, 30).toLabelCounts()]], 'the coarser level');
    // A journal replay from seq 8 on: the add of 8 and the set again, then the add of 10 (already sealed).
    submit(hs, m, T + 3_000, 8, 3);
    hs.setPeriod(m, T + 4_000, b64(of(1, 2, 3, 9)), 9);
    submit(hs, m, T + 5_000, 10, 4);
    t.deepEqual(await rows(hs, m, 60, T, T + MIN), expected, 'replayed, pending');
    await hs.seal();
    t.deepEqual(await rows(hs, m, 60, T, T + MIN), expected, 'replayed, sealed');
    await hs.rollUp(100, T + 10 * MIN);
    t.deepEqual(await rows(hs, m, 60, T, T + MIN), expected, 'rolled up');
    t.deepEqual(await rows(hs, m, 300, T, T), [[T, of(1, 2, 3, 9, 4, 30).toLabelCounts()]], 'the coarser level, rolled up');
  });
});
