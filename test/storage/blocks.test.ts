// storage/blocks.ts against a real RocksDB: blocks come back in window then seal order, reads
// keep to their range, deletes cut at window boundaries, and the seal sequence survives a restart.
import test from 'ava';
import { BlockStore } from '../../storage/blocks.js';
import type { BufferValue } from '../../model/types.js';
import type { Series } from '../../model/series.js';
import { metricId, withStore } from './store.js';

const SPAN = 60_000;
const series = (ts: number[], values: BufferValue[]): Series<BufferValue> => ({ ts, values });

async function seal(blocks: BlockStore, id: Buffer, kind: 'numeric' | 'text', windows: [number, Series<BufferValue>][]): Promise<void> {
  const batch = blocks.batch();
  const seqs = blocks.nextSeqs(windows.length);
  windows.forEach(([w, s], i) => blocks.stageBlock(batch, { id }, kind, w, seqs[i]!, s));
  await batch.write();
  blocks.committed(seqs[seqs.length - 1]!);
}

test('reads return the blocks with a sample in range, in window order', async (t) => {
  await withStore(async ({ store }) => {
    const blocks = await BlockStore.open(store, 0);
    const id = metricId(1);
    await seal(blocks, id, 'numeric', [
      [0, series([1_000, 2_000], [1, 2])],
      [SPAN, series([SPAN + 5_000], [3])],
      [2 * SPAN, series([2 * SPAN + 1], [4])],
    ]);
    t.deepEqual((await blocks.read({ id }, 'numeric', 0, 3 * SPAN, SPAN)).map((s) => s.values), [[1, 2], [3], [4]]);
    t.deepEqual((await blocks.read({ id }, 'numeric', 1_500, SPAN + 5_001, SPAN)).map((s) => s.values), [[1, 2], [3]], 'blocks overlapping the range, whole');
    t.deepEqual(await blocks.read({ id }, 'numeric', 2_001, SPAN, SPAN), [], 'a gap between blocks reads nothing');
    t.deepEqual(await blocks.read({ id: metricId(2) }, 'numeric', 0, 3 * SPAN, SPAN), [], 'another metric has none');
    t.deepEqual(await blocks.read({ id, unsealed: true }, 'numeric', 0, 3 * SPAN, SPAN), [], 'a metric known to have no blocks is not looked up');
  });
});

test('windows before a limit come newest first, each with its blocks in seal order', async (t) => {
  await withStore(async ({ store }) => {
    const blocks = await BlockStore.open(store, 0);
    const id = metricId(1);
    await seal(blocks, id, 'text', [[0, series([1], ['a'])]]);
    await seal(blocks, id, 'text', [[0, series([1], ['b'])]]);
    await seal(blocks, id, 'text', [[SPAN, series([SPAN], ['c'])]]);
    const seen: [number, BufferValue[][]][] = [];
    for await (const w of blocks.windowsBefore({ id }, 'text', 2 * SPAN)) seen.push([w.window, w.blocks.map((b) => b.values)]);
    t.deepEqual(seen, [
      [SPAN, [['c']]],
      [0, [['a'], ['b']]],
    ]);
  });
});

test('a delete before a cut removes whole windows and hands back the window the cut falls in', async (t) => {
  await withStore(async ({ store }) => {
    const blocks = await BlockStore.open(store, 0);
    const id = metricId(1);
    await seal(blocks, id, 'numeric', [
      [0, series([1_000], [1])],
      [SPAN, series([SPAN + 1_000, SPAN + 9_000], [2, 3])],
      [2 * SPAN, series([2 * SPAN], [4])],
    ]);
    t.true(await blocks.anyBefore({ id }, 'numeric', SPAN + 1_001, SPAN));
    const batch = blocks.batch();
    const cutWindow = await blocks.stageDeleteBefore(batch, { id }, 'numeric', SPAN + 5_000, SPAN);
    await batch.write();
    t.deepEqual(cutWindow.map((s) => s.values), [[2, 3]], 'the window of the cut, for the caller to seal back in part');
    t.deepEqual((await blocks.read({ id }, 'numeric', 0, 3 * SPAN, SPAN)).map((s) => s.values), [[4]]);
    t.false(await blocks.anyBefore({ id }, 'numeric', 2 * SPAN, SPAN));
  });
});

test('the seal sequence survives a restart, so a new block never overwrites an older one', async (t) => {
  await withStore(async (open) => {
    const id = metricId(1);
    let blocks = await BlockStore.open(open.store, 3);
    await seal(blocks, id, 'numeric', [[0, series([1], [1])]]);
    t.deepEqual(blocks.nextSeqs(2), [2, 3]);
    blocks = await BlockStore.open(await open.reopen(), 3);
    t.deepEqual(blocks.nextSeqs(1), [2]);
    await seal(blocks, id, 'numeric', [[0, series([2], [2])]]);
    t.deepEqual((await blocks.read({ id }, 'numeric', 0, SPAN, SPAN)).map((s) => s.values), [[1], [2]]);
    t.deepEqual((await BlockStore.open(open.store, 4)).nextSeqs(1), [1], 'each partition numbers its own seals');
  });
});
