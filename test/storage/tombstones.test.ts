// storage/tombstones.ts: a delete's tombstone drops exactly the replayed records it covers,
// merges with an earlier one, survives a restart, and is pruned once the journal is cut past it.
import test from 'ava';
import { Tombstones } from '../../storage/tombstones.js';
import { metricId, withStore } from './store.js';

const A = metricId(1).toString('hex');
const B = metricId(2).toString('hex');

test('a tombstone drops records journaled before it and stamped before its time, nothing else', async (t) => {
  await withStore(async ({ store }) => {
    const stones = await Tombstones.load(store);
    t.false(stones.mayDrop(0), 'no tombstones: nothing is dropped');
    const batch = store.batch();
    stones.add(batch, A, 'numeric', { before: 1_000, seq: 50 });
    await batch.write();
    t.true(stones.drops(A, 'numeric', 999, 49));
    t.false(stones.drops(A, 'numeric', 1_000, 49), 'at the delete time: kept');
    t.false(stones.drops(A, 'numeric', 999, 50), 'journaled after the delete: kept');
    t.false(stones.drops(A, 'text', 999, 49), 'another kind');
    t.false(stones.drops(B, 'numeric', 999, 49), 'another metric');
    t.true(stones.mayDrop(49), 'a record journaled before the tombstone may be dropped');
    t.false(stones.mayDrop(50), 'one journaled from its seq on is never: the apply path skips the lookup');
  });
});

test('a second delete widens the tombstone; it is reloaded after a restart and pruned past the journal cut', async (t) => {
  await withStore(async (open) => {
    let stones = await Tombstones.load(open.store);
    let batch = open.store.batch();
    stones.add(batch, A, 'numeric', { before: 1_000, seq: 50 });
    stones.add(batch, A, 'numeric', { before: 500, seq: 80 });
    stones.add(batch, B, 'text', { before: 10, seq: 20 });
    await batch.write();
    stones = await Tombstones.load(await open.reopen());
    t.is(stones.size, 2);
    t.true(stones.drops(A, 'numeric', 999, 79), 'the later time and the later sequence both hold');
    batch = open.store.batch();
    stones.prune(batch, 50);
    await batch.write();
    t.true(stones.drops(A, 'numeric', 999, 79), 'seq 80 is past the cut: kept');
    t.false(stones.drops(B, 'text', 5, 10), 'seq 20 is below the cut: pruned');
    stones = await Tombstones.load(await open.reopen());
    t.is(stones.size, 1, 'the prune was written');
  });
});
