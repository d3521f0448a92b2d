// storage/rollups.ts on a real RocksDB, its raw data in real sealed blocks (storage/blocks.ts).
// Ageing (a new data dir): reads compute periods from raw until raw is aged, ageing rolls raw up
// and deletes it atomically, and every read equals the rollup math over the whole series before
// and after. Legacy (a data dir from before ageing, below its legacy cut): windows marked for
// rollup in the seal's batch wait for quiet, equal the rollup math over the whole raw series
// (rates carried across windows), build the coarser level as the sum of the finer, replace a
// period when a late sample is sealed, resume after a restart, and reads serve stored levels or
// recalculate from raw by engine.
import test from 'ava';
import { resolveConfig } from '../../model/config.js';
import { sampleCombiner } from '../../model/conflict.js';
import { accumulate, addInto, emptyAccumulator, momentsOf, type RollupAccumulator } from '../../model/rollup/accumulator.js';
import { concatSeries, normalizeNumeric, sliceSeries, type Series } from '../../model/series.js';
import type { NumericValue } from '../../model/types.js';
import { BlockStore } from '../../storage/blocks.js';
import { CF, rollupAgeingKey, rollupDirtyPrefix } from '../../storage/keys.js';
import { loadMarkers } from '../../storage/markers.js';
import type { Store } from '../../storage/rocks.js';
import { ComputedRollups } from '../../storage/metric-cache.js';
import { PeriodColumns } from '../../model/rollup/period-columns.js';
import { columnId, PARTS } from '../../model/rollup/chunk.js';
import { fieldColumns, fieldInto, type FieldSpec } from '../../model/rollup/fields.js';
import { RollupStore, type RawSource } from '../../storage/rollups.js';
import { denseOf, type DenseSeries } from '../../model/dense-series.js';
import { metricId, storedPeriods, withStore } from './store.js';

const SPAN = 600_000; // 10 min windows
const MIN = 60_000;
const QUIET = 10_000;
const T = 100 * 86_400_000; // a day boundary
const config = resolveConfig({
  dataDir: '/unused',
  blockSpanMs: SPAN,
  rollupQuietMs: QUIET,
  rollups: [
    { period: 60, retention: 0 },
    { period: 300, retention: 0 },
  ],
});
const ref = (n: number) => ({ id: metricId(n), idHex: metricId(n).toString('hex') });
const A = ref(1);
const combine = sampleCombiner('abs_biggest');

/** Raw data as a partition reads it: its sealed blocks (plus windows the test says are open). */
class BlockRaw implements RawSource {
  open: number[] = [];
  constructor(readonly blocks: BlockStore) {}
  async read(metric: { id: Buffer }, start: number, end: number): Promise<DenseSeries> {
    const parts = (await this.blocks.read(metric, 'numeric', start, end, SPAN)) as Series<NumericValue>[];
    return denseOf(sliceSeries(normalizeNumeric(concatSeries(parts), combine), start, end));
  }
  readSealed(metric: { id: Buffer }, start: number, end: number): Promise<DenseSeries> {
    return this.read(metric, start, end);
  }
  before(metric: { id: Buffer }, before: number): Promise<DenseSeries> {
    return this.read(metric, 0, before);
  }
  openWindows(): number[] {
    return this.open;
  }
  sealedWindows(metric: { id: Buffer }, start: number, end: number): Promise<[number, number] | null> {
    return this.blocks.windowRange(metric, 'numeric', start, end, SPAN);
  }
}

interface Rig {
  store: Store;
  blocks: BlockStore;
  rollups: RollupStore;
  raw: BlockRaw;
  computed: ComputedRollups;
}

/** A partition's rollups; `legacy`: as in a data dir from before ageing (every window below its cut); `cacheBytes`: config.rollupCacheBytes. */
async function rig(store: Store, { partition = 0, legacy = true, cacheBytes = config.rollupCacheBytes } = {}): Promise<Rig> {
  if (legacy) await store.batch().put(CF.state, rollupAgeingKey(partition), Buffer.from(JSON.stringify({ legacyCut: 2 ** 50 }))).write();
  const blocks = await BlockStore.open(store, partition);
  const computed = new ComputedRollups(cacheBytes);
  return { store, blocks, rollups: await RollupStore.open(partition, store, { ...config, rollupCacheBytes: cacheBytes }, computed), raw: new BlockRaw(blocks), computed };
}

/** Seals samples of one window as a partition does: the block and its rollup marker in one batch. */
async function seal(r: Rig, m: { id: Buffer; idHex: string }, window: number, samples: [number, number][]): Promise<void> {
  const batch = r.blocks.batch();
  const [seq] = r.blocks.nextSeqs(1) as [number];
  r.blocks.stageBlock(batch, m, 'numeric', window, seq, { ts: samples.map(([ts]) => ts), values: samples.map(([, v]) => v) });
  r.rollups.markSealed(batch, m, window);
  await batch.write();
  r.blocks.committed(seq);
  r.rollups.note(m, window);
}

/** Samples every 15 s from `from` for `minutes`, values rising by `step`. */
function samples(from: number, minutes: number, base: number, step = 1): [number, number][] {
  return Array.from({ length: minutes * 4 }, (_, i) => [from + i * 15_000, base + i * step] as [number, number]);
}

/** The rollup math over a whole series at once: 60 s periods, and 300 s as their sums. */
function expected(all: [number, number][]): { p60: [number, RollupAccumulator][]; p300: [number, RollupAccumulator][] } {
  const p60 = [...accumulate({ ts: all.map(([ts]) => ts), values: all.map(([, v]) => v) }, MIN, null).periods].sort((a, b) => a[0] - b[0]);
  const p300 = new Map<number, RollupAccumulator>();
  for (const [s, acc] of p60) {
    const p = s - (s % 300_000);
    addInto(p300.get(p) ?? p300.set(p, emptyAccumulator()).get(p)!, acc);
  }
  return { p60, p300: [...p300] };
}

const markers = async (store: Store) => (await loadMarkers(store, rollupDirtyPrefix(0))).map((m) => m.start - T);

/** Rolls up until no window is left (a pass stops at its time budget, which a loaded machine can reach after one metric). */
async function rollAll(r: Rig, now: number, raw: RawSource = r.raw): Promise<void> {
  for (let pass = 0; pass < 50 && (await markers(r.store)).length > 0; pass++) await r.rollups.rollUp(raw, now);
}

test('a sealed window is rolled up once quiet, into both levels, and its marker goes', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store);
    const data = samples(T, 10, 100);
    await seal(r, A, T, data);
    t.deepEqual(await markers(store), [0]);
    await r.rollups.rollUp(r.raw, T + SPAN + QUIET - 1);
    t.deepEqual(await storedPeriods(store, A, 60, T, T + SPAN), [], 'not quiet yet');
    await r.rollups.rollUp(r.raw, T + SPAN + QUIET);
    const want = expected(data);
    t.deepEqual(await storedPeriods(store, A, 60, T, T + SPAN), want.p60);
    t.deepEqual(await storedPeriods(store, A, 300, T, T + SPAN), want.p300);
    t.is(want.p300.length, 2);
    t.deepEqual(await markers(store), [], 'the marker is deleted with the rollup');
  });
});

test('windows rolled up in separate passes equal the rollup of the whole series (rates carried across)', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store);
    const first = samples(T, 10, 0, 2);
    const second = samples(T + SPAN, 10, 500, -3); // a counter reset at the boundary
    await seal(r, A, T, first);
    await r.rollups.rollUp(r.raw, T + SPAN + QUIET);
    await seal(r, A, T + SPAN, second);
    await r.rollups.rollUp(r.raw, T + 2 * SPAN + QUIET);
    const want = expected([...first, ...second]);
    const got = await storedPeriods(store, A, 60, T, T + 2 * SPAN);
    t.deepEqual(got, want.p60);
    t.is(got.find(([s]) => s === T + SPAN)![1].derivative.n, 4, "the second window's first period has the rate from the first window's last sample");
    t.deepEqual(await storedPeriods(store, A, 300, T, T + 2 * SPAN), want.p300);
  });
});

test('a late sample sealed into a rolled-up window replaces its periods, not adds to them', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store);
    const data = samples(T, 10, 10);
    await seal(r, A, T, data);
    await r.rollups.rollUp(r.raw, T + SPAN + QUIET);
    const late: [number, number] = [T + 7_500, 1_000]; // between two samples of the first minute
    await seal(r, A, T, [late]);
    await r.rollups.rollUp(r.raw, T + SPAN + QUIET + 1);
    const all = [...data, late].sort((a, b) => a[0] - b[0]);
    t.deepEqual(await storedPeriods(store, A, 60, T, T + SPAN), expected(all).p60);
    t.is((await storedPeriods(store, A, 60, T, T + MIN))[0]![1].value.n, 5);
    t.deepEqual(await storedPeriods(store, A, 300, T, T + SPAN), expected(all).p300);
  });
});

test('a restart resumes the rollups its markers name', async (t) => {
  await withStore(async (open) => {
    let r = await rig(open.store);
    const data = samples(T, 3, 1);
    await seal(r, A, T, data);
    r = await rig(await open.reopen());
    await r.rollups.rollUp(r.raw, T + SPAN + QUIET);
    t.deepEqual(await storedPeriods(r.store, A, 60, T, T + SPAN), expected(data).p60);
    t.deepEqual(await markers(r.store), []);
  });
});

test('reads: stored levels for nnt, raw for windows not yet rolled up (dispatch) and for spans no level serves', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store);
    const data = samples(T, 10, 5, 0.5);
    await seal(r, A, T, data);
    const want = expected(data);
    const rows = async (span: number, engine: 'nnt' | 'dispatch' | 'recalc', first = T, end = T + SPAN) => {
      const slots = await r.rollups.read(r.raw, A, span, first, end, engine);
      return Array.from({ length: slots.count }, (_, i): [number, RollupAccumulator | null] => [slots.startOf(i), slots.row(i)]);
    };
    t.deepEqual(await rows(300_000, 'nnt'), [
      [T, null],
      [T + 300_000, null],
    ], 'nnt before the rollup: nothing stored');
    t.deepEqual(await rows(300_000, 'dispatch'), want.p300, 'dispatch: recalculated from the dirty window');
    await r.rollups.rollUp(r.raw, T + SPAN + QUIET);
    t.deepEqual(await rows(300_000, 'nnt'), want.p300);
    t.deepEqual(await rows(60_000, 'nnt', T, T + 3 * MIN), want.p60.slice(0, 3));
    const p120 = await rows(120_000, 'nnt', T, T + 4 * MIN);
    t.deepEqual(p120.map(([, acc]) => acc!.value.n), [8, 8], '120 s slots sum two stored 60 s periods');
    await t.throwsAsync(r.rollups.read(r.raw, A, 90_000, T, T + SPAN, 'nnt'), { message: /no rollup serves 90000 ms/ });
    const origin = T + 30_000; // a first period no level is aligned to
    // The rates of the first slot start from the samples before it (the carry): accumulate from T, keep slots from origin.
    const recalc = [...accumulate(await r.raw.read(A, T, T + SPAN), 90_000, null, origin).periods].filter(([s]) => s >= origin);
    t.deepEqual((await rows(90_000, 'dispatch', origin, T + SPAN)).filter(([, acc]) => acc !== null), recalc, 'recalculated from raw');
    // An open (unsealed) window is raw not rolled up: dispatch recalculates slots touching it.
    r.raw.open = [T];
    await r.rollups.write(A, [[T, { ...emptyAccumulator(), value: momentsOf(1, 1e9, 0) }]]);
    t.deepEqual((await rows(60_000, 'nnt', T, T + MIN))[0]![1]!.value, momentsOf(1, 1e9, 0), 'nnt: the written record replaced the stored period');
    t.deepEqual(await rows(60_000, 'dispatch', T, T + MIN), want.p60.slice(0, 1), 'dispatch: from raw');
    t.deepEqual(await rows(60_000, 'recalc', T, T + MIN), want.p60.slice(0, 1), 'recalc: always from raw');
  });
});

test('a field read into cells (a fetch) equals the field of the slots read, served by a level or computed from raw', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store);
    const data = samples(T, 10, 5, 0.5).map(([ts, v], i): [number, number] => [ts, i % 7 === 3 ? -v : v * 1.1]);
    await seal(r, A, T, data);
    await r.rollups.write(A, [[T + 4 * MIN, { ...emptyAccumulator(), value: momentsOf(3, 2.5, 0.25) }]]);
    const specs: FieldSpec[] = (['count', 'sum', 'mean', 'stddev'] as const).map((stat) => ({ q: 'value', stat }));
    // 10 s and 90 s from T + 30 s are served by no level (computed straight from raw); 60 and 300 s are.
    const geometries: [number, number, number][] = [[10_000, T, 70], [90_000, T + 30_000, 7], [60_000, T, 11], [300_000, T, 3], [10_000, T - 20_000, 4]];
    for (const [span, first, count] of geometries) {
      for (const engine of ['dispatch', 'recalc'] as const) {
        for (const spec of specs) {
          const end = first + count * span;
          const general = fieldInto(new Float64Array(count), await r.rollups.read(r.raw, A, span, first, end, engine, fieldColumns(spec, true)), spec, true);
          const cells = new Float64Array(count).fill(-1);
          await r.rollups.readFieldInto(r.raw, A, span, first, end, engine, spec, cells);
          t.deepEqual(new Uint8Array(cells.buffer), new Uint8Array(general.buffer), `${spec.stat} at ${span} ms from T${first - T >= 0 ? '+' : ''}${first - T}, ${engine}`);
          t.true(cells.some((v) => !Number.isNaN(v)) || first < T, 'the read found data');
        }
      }
    }
  });
});

test('records written by /write/nnt are merged per period and build the coarser level', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store);
    const acc = (n: number, mean: number): RollupAccumulator => ({ ...emptyAccumulator(), value: momentsOf(n, mean, 0) });
    await r.rollups.write(A, [
      [T + 10_000, acc(2, 10)], // floored to the period at T
      [T + 50_000, acc(2, 20)],
      [T + 4 * MIN, acc(1, 3)],
    ]);
    const p60 = await storedPeriods(store, A, 60, T, T + SPAN);
    t.deepEqual(p60.map(([s, a]) => [s - T, a.value.n, a.value.sum]), [
      [0, 4, 60],
      [4 * MIN, 1, 3],
    ]);
    const p300 = await storedPeriods(store, A, 300, T, T + SPAN);
    t.deepEqual(p300.map(([s, a]) => [s - T, a.value.n, a.value.sum]), [[0, 5, 63]]);
  });
});

test("a full delete drops every level and the metric's markers; other metrics keep theirs", async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store);
    const B = ref(2);
    await seal(r, A, T, samples(T, 2, 1));
    await seal(r, B, T, samples(T, 2, 1));
    await rollAll(r, T + SPAN + QUIET);
    await seal(r, A, T + SPAN, samples(T + SPAN, 2, 1)); // dirty, not rolled up
    const batch = store.batch();
    r.rollups.deleteAll(batch, A);
    await batch.write();
    t.deepEqual(await storedPeriods(store, A, 60, T, T + 2 * SPAN), []);
    t.deepEqual(await storedPeriods(store, A, 300, T, T + 2 * SPAN), []);
    t.deepEqual(await markers(store), []);
    await r.rollups.rollUp(r.raw, T + 3 * SPAN);
    t.deepEqual(await storedPeriods(store, A, 60, T, T + 2 * SPAN), [], 'the forgotten window is not rolled up');
    t.is((await storedPeriods(store, B, 60, T, T + SPAN)).length, 2);
  });
});

test("a metric whose raw data cannot be read fails the pass with its name; other metrics' rollups are kept", async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store);
    const B = ref(2);
    await seal(r, A, T, samples(T, 2, 1));
    await seal(r, B, T, samples(T, 2, 1));
    const failing: RawSource = {
      read: (m, start, end) => (m.idHex === B.idHex ? Promise.reject(new Error('disk on fire')) : r.raw.read(m, start, end)),
      readSealed: (m, start, end) => r.raw.read(m, start, end),
      before: (m, before) => r.raw.before(m, before),
      openWindows: () => [],
      sealedWindows: (m, start, end) => r.raw.sealedWindows(m, start, end),
    };
    await t.throwsAsync(rollAll(r, T + SPAN + QUIET, failing), { message: new RegExp(`rolling up metric ${B.idHex} window .*: disk on fire`) });
    t.is((await storedPeriods(store, A, 60, T, T + SPAN)).length, 2, 'the metric before it was committed');
    t.deepEqual(await markers(store), [0], "the failed metric's marker stays");
    await rollAll(r, T + SPAN + QUIET);
    t.is((await storedPeriods(store, B, 60, T, T + SPAN)).length, 2, 'retried next time');
  });
});

// ---- ageing (a data dir that never rolled raw up while keeping it) ----

/** Ages the metric's raw before `to` as a partition does: rollups and the raw delete in one batch. */
async function age(r: Rig, m: { id: Buffer; idHex: string }, to: number): Promise<number> {
  const batch = r.blocks.batch();
  const n = await r.rollups.stageAgeing(batch, r.raw, m, to);
  await r.blocks.stageDeleteBefore(batch, m, 'numeric', to, SPAN);
  await batch.write();
  return n;
}

async function rows(r: Rig, span: number, engine: 'nnt' | 'dispatch' | 'recalc', first: number, end: number, m = A): Promise<[number, RollupAccumulator | null][]> {
  const slots = await r.rollups.read(r.raw, m, span, first, end, engine);
  return Array.from({ length: slots.count }, (_, i): [number, RollupAccumulator | null] => [slots.startOf(i), slots.row(i)]);
}

const present = (xs: [number, RollupAccumulator | null][]) => xs.filter(([, acc]) => acc !== null);
/** Sums over 300 s computed from raw in one pass and as five 60 s sums differ in the last bits. */
const rounded = (xs: [number, RollupAccumulator | null][]) => JSON.parse(JSON.stringify(xs, (_, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));

test('ageing: reads compute periods from raw until it is aged, then read them stored; the same either way, rates carried across the cut', async (t) => {
  await withStore(async (open) => {
    let r = await rig(open.store, { legacy: false });
    const first = samples(T, 10, 0, 2);
    const second = samples(T + SPAN, 10, 500, -3); // a counter reset at the boundary
    const third = samples(T + 2 * SPAN, 10, 100, 1);
    await seal(r, A, T, first);
    await seal(r, A, T + SPAN, second);
    await seal(r, A, T + 2 * SPAN, third);
    t.deepEqual(await markers(open.store), [], 'no rollup work is marked');
    const want = expected([...first, ...second, ...third]);
    const end = T + 3 * SPAN;
    t.deepEqual(present(await rows(r, 60_000, 'dispatch', T, end)), want.p60, 'computed from raw');
    t.deepEqual(rounded(present(await rows(r, 300_000, 'dispatch', T, end))), rounded(want.p300));
    t.deepEqual(present(await rows(r, 60_000, 'nnt', T, end)), [], 'nothing stored yet');
    t.is(await age(r, A, T + SPAN), first.length);
    t.deepEqual((await r.raw.read(A, T, end)).ts.length, second.length + third.length, 'the aged window is gone from raw');
    t.deepEqual(present(await rows(r, 60_000, 'nnt', T, end)), want.p60.slice(0, 10), 'the aged window is stored');
    t.deepEqual(present(await rows(r, 60_000, 'dispatch', T, end)), want.p60, 'stored and computed together');
    t.is((await rows(r, 60_000, 'dispatch', T + SPAN, T + SPAN + MIN))[0]![1]!.derivative.n, 4, 'the first period after the cut has the rate from the last aged sample');
    t.is(await age(r, A, end), second.length + third.length);
    r = await rig(await open.reopen(), { legacy: false });
    t.deepEqual(present(await rows(r, 60_000, 'dispatch', T, end)), want.p60, 'after a restart');
    t.deepEqual(present(await rows(r, 60_000, 'nnt', T, end)), want.p60);
    t.deepEqual(present(await rows(r, 300_000, 'nnt', T, end)), want.p300);
    t.is(await age(r, A, end), 0, 'nothing is aged twice');
    t.deepEqual(present(await rows(r, 60_000, 'dispatch', T, end)), want.p60);
  });
});

test('ageing: /write/nnt records inside the raw retention add to the periods computed from raw, and stay when raw is aged', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store, { legacy: false });
    const data = samples(T, 10, 10);
    await seal(r, A, T, data);
    await r.rollups.write(A, [[T, { ...emptyAccumulator(), value: momentsOf(1, 1000, 0) }]]);
    const want = expected(data).p60[0]![1];
    const first = async (engine: 'nnt' | 'dispatch') => (await rows(r, 60_000, engine, T, T + MIN))[0]![1]!.value;
    t.deepEqual(await first('nnt'), momentsOf(1, 1000, 0));
    t.deepEqual(await first('dispatch'), { n: want.value.n + 1, sum: want.value.sum + 1000, sumsq: want.value.sumsq + 1e6 });
    await age(r, A, T + SPAN);
    t.deepEqual(await first('nnt'), { n: want.value.n + 1, sum: want.value.sum + 1000, sumsq: want.value.sumsq + 1e6 });
    t.deepEqual(await first('dispatch'), await first('nnt'));
  });
});

test('ageing: a late sample sealed into an aged window is read at once and added by the next pass', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store, { legacy: false });
    await seal(r, A, T, samples(T, 10, 10));
    await age(r, A, T + SPAN);
    await seal(r, A, T, [[T + 7_500, 1_000]]);
    const firstMinute = async (engine: 'nnt' | 'dispatch') => (await rows(r, 60_000, engine, T, T + MIN))[0]![1]!.value;
    t.is((await firstMinute('dispatch')).n, 5, 'raw not aged yet is read with the stored periods');
    t.is((await firstMinute('nnt')).n, 4);
    await age(r, A, T + SPAN);
    t.is((await firstMinute('nnt')).n, 5);
    t.is((await firstMinute('dispatch')).n, 5, 'counted once');
    t.is((await r.raw.read(A, T, T + SPAN)).ts.length, 0);
  });
});

test('ageing: an /nnt delete hides raw data before it from rollup reads and from ageing, and a restart keeps that', async (t) => {
  await withStore(async (open) => {
    let r = await rig(open.store, { legacy: false });
    const data = samples(T, 10, 10);
    await seal(r, A, T, data);
    t.true(await r.rollups.hasBefore(r.raw, A, T + 5 * MIN, null), 'raw not aged counts as rollup data');
    await r.rollups.deleteBefore(A, T + 5 * MIN, null);
    t.false(await r.rollups.hasBefore(r.raw, A, T + 5 * MIN, null));
    const want = expected(data).p60.filter(([s]) => s >= T + 5 * MIN);
    t.deepEqual(present(await rows(r, 60_000, 'dispatch', T, T + SPAN)).map(([s]) => s), want.map(([s]) => s));
    t.is((await r.raw.read(A, T, T + SPAN)).ts.length, data.length, 'raw data stays');
    r = await rig(await open.reopen(), { legacy: false });
    await age(r, A, T + SPAN);
    t.deepEqual(present(await rows(r, 60_000, 'nnt', T, T + SPAN)).map(([s]) => s), want.map(([s]) => s));
  });
});

test('a read centuries wide asks only for the chunks and spans its data lies in', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store, { legacy: false });
    await seal(r, A, T, samples(T, 10, 10));
    await age(r, A, T + SPAN); // stored rollups
    await seal(r, A, T + SPAN, samples(T + SPAN, 10, 10)); // and raw after them
    let keys = 0;
    const getMany = store.getMany.bind(store);
    store.getMany = (cf, asked) => {
      keys += asked.length;
      return getMany(cf, asked);
    };
    const span = 60_000 * 6_532_277; // about 12.4 years, a whole number of minutes
    const slots = await rows(r, span, 'dispatch', 0, 38 * span);
    t.is(slots.length, 38);
    t.is(present(slots).length, 1);
    t.is(present(slots)[0]![1]!.value.n, 80, 'every sample, stored and raw, in its slot');
    t.true(keys < 500, `${keys} chunk keys asked for (a chunk a day over 470 years is 171 000)`);
    t.true(r.computed.size <= 2, `${r.computed.size} spans computed`);
  });
});

test('ageing: periods computed from sealed raw are cached per chunk span, and a late seal, a raw delete or ageing drops them', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store, { legacy: false });
    const data = samples(T, 10, 10);
    await seal(r, A, T, data);
    const firstMinute = async () => (await rows(r, 60_000, 'dispatch', T, T + SPAN))[0]![1]!.value.n;
    t.is(await firstMinute(), 4);
    t.is(r.computed.size, 1, 'the chunk span is cached');
    const hits = r.computed.hits;
    t.is(await firstMinute(), 4);
    t.is(r.computed.hits, hits + 1, 'read again from the cache');
    await seal(r, A, T, [[T + 7_500, 1_000]]);
    t.is(await firstMinute(), 5, 'a late sample sealed into the span is seen');
    r.raw.open = [T + SPAN];
    t.is(await firstMinute(), 5, 'an open window after the span keeps it cached');
    r.raw.open = [T];
    const size = r.computed.size;
    r.computed.dropMetric(A.idHex);
    t.is(await firstMinute(), 5);
    t.is(r.computed.size, size - 1, 'a span with an open buffer in it is not cached');
    r.raw.open = [];
    await firstMinute();
    const batch = r.blocks.batch();
    await r.blocks.stageDeleteBefore(batch, A, 'numeric', T + MIN, SPAN);
    await batch.write();
    r.rollups.rawChanged(A.idHex);
    t.is((await rows(r, 60_000, 'dispatch', T, T + SPAN))[0]![1], null, 'a raw delete is seen');
    await seal(r, A, T, samples(T + MIN, 1, 10));
    t.is((await rows(r, 60_000, 'dispatch', T, T + 2 * MIN))[1]![1]!.value.n, 4);
    await age(r, A, T + SPAN);
    t.is(r.computed.size, 0, 'ageing drops what was computed from the raw it deletes');
    t.is((await rows(r, 60_000, 'dispatch', T, T + 2 * MIN))[1]![1]!.value.n, 4, 'counted once after ageing');
  });
});

test('ageing: a read of values only (an average) computes no rates, and its cached span does not serve a read of rates', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store, { legacy: false });
    // Samples before the span give its first period a carry: the rates of minute 0 need them.
    await seal(r, A, T - SPAN, samples(T - 2 * MIN, 2, 0, 3));
    await seal(r, A, T, samples(T, 10, 6, 3));
    const valueColumns = [columnId('value', 'n'), columnId('value', 'sum'), columnId('value', 'sumsq')];
    const values = await r.rollups.read(r.raw, A, MIN, T, T + SPAN, 'dispatch', valueColumns);
    const full = await rows(r, MIN, 'dispatch', T, T + SPAN);
    for (const part of PARTS) t.deepEqual([...values.column('value', part)], full.map(([, acc]) => acc?.value[part] ?? 0), `value.${part} as a full read gives it`);
    t.throws(() => values.column('derivative', 'n'), { message: /values only/ }, 'rates were not computed');
    t.is(full[0]![1]!.derivative.n, 4, 'the full read computed the rates, its first one from the carry');
    // The full read replaced the values-only span in the cache; a values-only read may use it.
    const hits = r.computed.hits;
    await r.rollups.read(r.raw, A, MIN, T, T + SPAN, 'dispatch', valueColumns);
    t.is(r.computed.hits, hits + 1);
    // A values-only span in the cache is computed again, whole, for a read of rates.
    r.computed.dropMetric(A.idHex);
    await r.rollups.read(r.raw, A, MIN, T, T + SPAN, 'dispatch', valueColumns);
    t.deepEqual(await rows(r, MIN, 'dispatch', T, T + SPAN), full);
  });
});

test('the cache of computed periods is bounded: the least recently used span goes first', (t) => {
  const span = (n: number) => {
    const columns = new PeriodColumns(0, MIN, 1440);
    for (let i = 0; i < n; i++) columns.present[i] = 1;
    return columns.compact();
  };
  const cache = new ComputedRollups(span(60).bytes + span(30).bytes + span(10).bytes);
  cache.put('a', 0, span(60));
  cache.put('b', 0, span(30));
  t.truthy(cache.get('a', 0), 'a is now the most recently used');
  cache.put('c', 0, span(30));
  t.is(cache.get('b', 0), undefined, 'b went to make room');
  t.truthy(cache.get('a', 0));
  t.truthy(cache.get('c', 0));
  cache.dropFrom('a', 1);
  t.truthy(cache.get('a', 0), 'dropFrom keeps earlier spans');
  cache.dropMetric('a');
  t.is(cache.get('a', 0), undefined);
});

test('ageing: with rollupCacheBytes 0 every read computes from raw and reads stored chunks anew, with the same answers', async (t) => {
  await withStore(async ({ store }) => {
    const r = await rig(store, { legacy: false, cacheBytes: 0 });
    const data = [...samples(T, 10, 10), ...samples(T + SPAN, 10, 50, -1)];
    await seal(r, A, T, data.slice(0, 40));
    await seal(r, A, T + SPAN, data.slice(40));
    const want = expected(data);
    const got = (await rows(r, 60_000, 'dispatch', T, T + 2 * SPAN)).filter(([, acc]) => acc !== null);
    t.deepEqual(got, want.p60, 'every minute from raw, rates carried across the window');
    t.deepEqual((await rows(r, 60_000, 'dispatch', T, T + 2 * SPAN)).filter(([, acc]) => acc !== null), got, 'computed again, the same');
    t.is(r.computed.size, 0, 'nothing cached');
    t.is(await age(r, A, T + SPAN), 40);
    t.deepEqual((await rows(r, 60_000, 'dispatch', T, T + 2 * SPAN)).filter(([, acc]) => acc !== null), want.p60, 'the same once the first window is aged (stored chunks read uncached)');
    t.deepEqual((await rows(r, 300_000, 'dispatch', T, T + 2 * SPAN)).filter(([, acc]) => acc !== null), want.p300, 'and at 300 s');
  });
});
