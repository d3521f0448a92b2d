// storage/blocks.ts against a real RocksDB: blocks come back in window then seal order, reads
// keep to their range, deletes cut at window boundaries, and the seal sequence survives a restart.
import test from 'ava';
import { BlockStore } from '../../storage/blocks.js';
import { BlockMerges } from '../../actors/shard/block-merges.js';
import type { BufferValue } from '../../model/types.js';
import type { Series } from '../../model/series.js';
import { CF, sealHorizonKey } from '../../storage/keys.js';
import { metricId, withStore } from './store.js';

const SPAN = 60_000;
const series = (ts: number[], values: BufferValue[]): Series<BufferValue> => ({ ts, values });

async function seal(blocks: BlockStore, id: Buffer, kind: 'numeric' | 'text', windows: [number, Series<BufferValue>][]): Promise<void> {
  const batch = blocks.batch();
  const seqs = blocks.nextSeqs(windows.length);
  windows.forEach(([w, s], i) => blocks.stageBlock(batch, { id }, kind, w, seqs[i]!, s));
  blocks.stageSealSeq(batch, seqs[seqs.length - 1]!); // as the partition does, once per batch
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

test("a window's blocks merge into one under the newest part's key, read the same, and later seals still win", async (t) => {
  await withStore(async ({ store }) => {
    const blocks = await BlockStore.open(store, 0);
    const id = metricId(1);
    // Last one wins on a shared timestamp, as the partition's normalize does with its resolver.
    const lastWins = (s: Series<BufferValue>): Series<BufferValue> => {
      const byTs = new Map<number, BufferValue>();
      s.ts.forEach((ts, i) => byTs.set(ts, s.values[i]!));
      const ts = [...byTs.keys()].sort((a, b) => a - b);
      return { ts, values: ts.map((x) => byTs.get(x)!) };
    };
    await seal(blocks, id, 'numeric', [[0, series([1_000, 2_000], [1, 2])]]);
    await seal(blocks, id, 'numeric', [[0, series([1_500, 2_000], [1.5, 20])]]);
    await seal(blocks, id, 'numeric', [[SPAN, series([SPAN], [3])]]);
    t.true(await blocks.windowHasBlock({ id }, 'numeric', 0, SPAN));
    t.false(await blocks.windowHasBlock({ id }, 'numeric', 2 * SPAN, SPAN));
    const before = lastWins((await blocks.read({ id }, 'numeric', 0, SPAN, SPAN)).reduce((a, b) => ({ ts: [...a.ts, ...b.ts], values: [...a.values, ...b.values] })));
    t.false(await blocks.mergeWindow({ id }, 'numeric', 0, SPAN, lastWins, 3), 'more samples than a merged block may hold: left alone');
    t.true(await blocks.mergeWindow({ id }, 'numeric', 0, SPAN, lastWins, 8192));
    const after = await blocks.read({ id }, 'numeric', 0, SPAN, SPAN);
    t.is(after.length, 1, 'one block left in the window');
    t.deepEqual(after[0], before);
    t.deepEqual(after[0]!.values, [1, 1.5, 20]);
    t.false(await blocks.mergeWindow({ id }, 'numeric', 0, SPAN, lastWins, 8192), 'one block: nothing to merge');
    t.false(await blocks.mergeWindow({ id }, 'numeric', SPAN, SPAN, lastWins, 8192), 'the next window is its own');
    await seal(blocks, id, 'numeric', [[0, series([2_000], [200])]]);
    const parts = await blocks.read({ id }, 'numeric', 0, SPAN, SPAN);
    t.deepEqual(parts.map((p) => p.values), [[1, 1.5, 20], [200]], 'a block sealed after the merge sorts after it');
  });
});

test('the partition notes a window sealed into again and merges it in its next step; a first seal is not noted', async (t) => {
  await withStore(async ({ store }) => {
    const blocks = await BlockStore.open(store, 0);
    const merges = new BlockMerges();
    const owner = { id: metricId(1), idHex: metricId(1).toString('hex'), newestSealedS: 0 };
    const same = (s: Series<BufferValue>) => s;
    await merges.noteSeal(blocks, owner, 0, SPAN);
    await seal(blocks, owner.id, 'numeric', [[0, series([1_000], [1])]]);
    t.is(merges.size, 0, 'the first block of a window is no merge candidate');
    await merges.noteSeal(blocks, owner, 0, SPAN);
    await seal(blocks, owner.id, 'numeric', [[0, series([2_000], [2])]]);
    await merges.noteSeal(blocks, { ...owner, unsealed: true }, SPAN, SPAN);
    t.is(merges.size, 1);
    t.is(await merges.step(blocks, SPAN, same), 1);
    t.is(merges.size, 0);
    t.deepEqual(await blocks.read(owner, 'numeric', 0, SPAN, SPAN), [series([1_000, 2_000], [1, 2])]);
  });
});

test('the partition records the newest window it sealed, and a data dir from before it takes the horizon it is given', async (t) => {
  await withStore(async (open) => {
    let blocks = await BlockStore.open(open.store, 0);
    t.is(blocks.horizonAtOpen, -1, 'a partition that never sealed has no horizon');
    const id = metricId(1);
    await seal(blocks, id, 'numeric', [[3 * SPAN, series([3 * SPAN], [1])], [SPAN, series([SPAN], [2])]]);
    blocks = await BlockStore.open(await open.reopen(), 0);
    t.is(blocks.horizonAtOpen, 3 * SPAN, 'the newest window sealed, whatever the order');
    await open.store.batch().delete(CF.state, sealHorizonKey(0)).write(); // as a release before the horizon left it
    t.is((await BlockStore.open(open.store, 0, 7 * SPAN)).horizonAtOpen, 7 * SPAN);
    t.is((await BlockStore.open(open.store, 0)).horizonAtOpen, Number.MAX_SAFE_INTEGER, 'by default every window may hold blocks');
  });
});

test("a window newer than the partition's horizon and the metric's newest seal is its first block; a late one is looked up", async (t) => {
  await withStore(async (open) => {
    const id = metricId(1);
    const owner = { id, idHex: id.toString('hex'), newestSealedS: 0 };
    let blocks = await BlockStore.open(open.store, 0);
    await seal(blocks, id, 'numeric', [[4 * SPAN, series([4 * SPAN], [1])]]);
    // A data dir from before the horizon, opened with one that is wrong: the block at 4 spans is
    // not looked for — what shows that a first seal costs no look.
    await open.store.batch().delete(CF.state, sealHorizonKey(0)).write();
    blocks = await BlockStore.open(open.store, 0, 2 * SPAN);
    const merges = new BlockMerges();
    await merges.noteSeal(blocks, owner, 4 * SPAN, SPAN);
    t.is(merges.size, 0, 'taken for a first block, unlooked');
    t.is(owner.newestSealedS, (4 * SPAN) / 1000, "the metric's newest seal moves");
    await merges.noteSeal(blocks, owner, 4 * SPAN, SPAN);
    t.is(merges.size, 1, 'sealed into again in this process: looked up and noted');
    await seal(blocks, id, 'numeric', [[SPAN, series([SPAN], [2])]]);
    await merges.noteSeal(blocks, { ...owner, newestSealedS: 0 }, SPAN, SPAN);
    t.is(merges.size, 2, 'a window at or below the horizon: looked up, whatever the metric sealed since the start');
    const fresh = { id: metricId(2), idHex: metricId(2).toString('hex'), newestSealedS: 0 };
    await merges.noteSeal(blocks, fresh, 5 * SPAN, SPAN);
    await merges.noteSeal(blocks, fresh, 6 * SPAN, SPAN);
    t.is(merges.size, 2, 'windows of a metric sealed in order: none looked up, none noted');
    t.is(fresh.newestSealedS, (6 * SPAN) / 1000);
  });
});
