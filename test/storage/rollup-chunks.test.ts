// storage/rollup-chunks.ts: chunk edits write whole chunks read back by range, and the cache of
// decoded chunks never serves a chunk older than the last rollup write.
import test from 'ava';
import { accumulate } from '../../model/rollup/accumulator.js';
import { ChunkEdit, readChunks } from '../../storage/rollup-chunks.js';
import type { Store } from '../../storage/rocks.js';
import { metricId, withStore } from './store.js';
import type { NumericValue } from '../../model/types.js';

const PERIOD_S = 60;
const DAY = 86_400_000;
const metric = { id: metricId(7), idHex: metricId(7).toString('hex') };

/** The rollup of one sample per period. */
function period(ts: number, value: number) {
  return accumulate({ ts: [ts], values: [value as NumericValue] }, PERIOD_S * 1000, null).periods.get(ts)!;
}

async function setPeriods(store: Store, periods: [number, number][]): Promise<void> {
  const edit = new ChunkEdit(store, metric);
  await edit.load(PERIOD_S, periods.map(([ts]) => [ts, ts + 1] as const));
  for (const [ts, v] of periods) edit.set(PERIOD_S, ts, period(ts, v));
  const batch = store.batch();
  edit.flush(batch);
  await batch.write();
}

async function means(store: Store, from: number, to: number): Promise<[number, number][]> {
  const out: [number, number][] = [];
  for (const { start, chunk } of await readChunks(store, metric, PERIOD_S, from, to)) {
    const n = chunk.column('value', 'n');
    const sum = chunk.column('value', 'sum');
    chunk.slots.forEach((slot, i) => out.push([start + slot * PERIOD_S * 1000, sum[i]! / n[i]!]));
  }
  return out;
}

test('periods set through an edit are read back by range, across chunks', async (t) => {
  await withStore(async ({ store }) => {
    await setPeriods(store, [
      [0, 1],
      [60_000, 2],
      [DAY, 3],
    ]);
    t.deepEqual(await means(store, 0, 2 * DAY), [
      [0, 1],
      [60_000, 2],
      [DAY, 3],
    ]);
    t.deepEqual(await means(store, DAY, 2 * DAY), [[DAY, 3]], 'only the chunks covering the range');
    t.deepEqual(await means(store, 2 * DAY, 3 * DAY), []);
  });
});

test('a read after a rollup write sees it, though the chunk was read (and cached) before', async (t) => {
  await withStore(async ({ store }) => {
    await setPeriods(store, [[0, 1]]);
    t.deepEqual(await means(store, 0, DAY), [[0, 1]]);
    t.deepEqual(await means(store, 0, DAY), [[0, 1]]);
    const before = store.generation('rollup');
    await setPeriods(store, [[120_000, 5]]);
    t.is(store.generation('rollup'), before + 1, 'the write moved the generation');
    t.deepEqual(await means(store, 0, DAY), [
      [0, 1],
      [120_000, 5],
    ]);
  });
});

test('setting a period to null removes it; an emptied chunk is deleted', async (t) => {
  await withStore(async ({ store }) => {
    await setPeriods(store, [[0, 1]]);
    const edit = new ChunkEdit(store, metric);
    await edit.load(PERIOD_S, [[0, 1]]);
    edit.set(PERIOD_S, 0, null);
    const batch = store.batch();
    edit.flush(batch);
    await batch.write();
    t.deepEqual(await readChunks(store, metric, PERIOD_S, 0, DAY), []);
  });
});
