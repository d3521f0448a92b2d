// storage/outbox.ts: the cluster outbox's messages, sequences, confirmations and applied marks,
// across restarts.
import test from 'ava';
import { Outbox } from '../../storage/outbox.js';
import { withStore } from './store.js';

test('the outbox keeps messages per peer in sequence order until confirmed, and never reuses a sequence', async (t) => {
  await withStore(async (open) => {
    let outbox = new Outbox(open.store);
    const incarnation = await outbox.incarnation();
    const batch = open.store.batch();
    for (const seq of [1, 2, 3, 4]) outbox.stage(batch, 'peer-a', seq, Buffer.from(`m${seq}`));
    outbox.stage(batch, 'peer-b', 1, Buffer.from('b1'));
    await batch.write();
    outbox = new Outbox(await open.reopen());
    t.is(await outbox.incarnation(), incarnation, 'the incarnation is kept');
    const a = await outbox.load('peer-a');
    t.deepEqual(a.messages.map((m) => [m.seq, m.value.toString()]), [[1, 'm1'], [2, 'm2'], [3, 'm3'], [4, 'm4']]);
    t.is(a.lastSeq, 4);
    await outbox.confirm('peer-a', 2, [4]);
    t.deepEqual((await outbox.load('peer-a')).messages.map((m) => m.seq), [3]);
    t.deepEqual((await outbox.read('peer-a', [2, 3])).map((v) => v?.toString() ?? null), [null, 'm3']);
    await outbox.confirm('peer-a', 3, []);
    const empty = await outbox.load('peer-a');
    t.deepEqual(empty.messages, []);
    t.is(empty.lastSeq, 4, 'the last sequence outlives the messages');
    t.deepEqual((await outbox.load('peer-b')).messages.map((m) => m.value.toString()), ['b1'], 'other peers untouched');
  });
});

test('applied marks per sender incarnation round-trip', async (t) => {
  await withStore(async (open) => {
    const outbox = new Outbox(open.store);
    const batch = open.store.batch();
    outbox.stageApplied(batch, 'inc-1', { through: 10, above: [12, 15] });
    outbox.stageApplied(batch, 'inc-2', { through: 3, above: [] });
    await batch.write();
    const applied = await new Outbox(await open.reopen()).applied();
    t.deepEqual([...applied], [
      ['inc-1', { through: 10, above: [12, 15] }],
      ['inc-2', { through: 3, above: [] }],
    ]);
  });
});
