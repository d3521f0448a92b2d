// storage/check-tags.ts: check tag state round-trips per (scope, check); concurrent updates of
// one check are applied one after another so neither is lost; a failed update leaves the
// state as it was and does not block the next; a scope's present tags are re-read after every
// write; an account sees its own tags merged with the unscoped ones.
import test from 'ava';
import type { CheckTagUpdate } from '../../model/check-tags.js';
import { CheckTagStore } from '../../storage/check-tags.js';
import { CF } from '../../storage/keys.js';
import { withStore } from './store.js';

const U1 = '0a2a3f6c-0000-4000-8000-000000000001';
const U2 = '0a2a3f6c-0000-4000-8000-000000000002';
const add = (stamp: number, ...tags: string[]): CheckTagUpdate => ({ stamp, add: tags, remove: [], clear: false });
const remove = (stamp: number, ...tags: string[]): CheckTagUpdate => ({ stamp, add: [], remove: tags, clear: false });

test('state round-trips per scope and check, and survives a restart', async (t) => {
  await withStore(async (open) => {
    let tags = new CheckTagStore(open.store);
    t.deepEqual(await tags.get(5, U1), { tags: {}, cleared: 0 }, 'nothing stored: empty');
    await tags.update(5, U1, () => add(10, 'env:prod'));
    await tags.update(null, U1, () => add(11, 'team:a'));
    tags = new CheckTagStore(await open.reopen());
    t.deepEqual(await tags.get(5, U1), { tags: { 'env:prod': [10, 0] }, cleared: 0 });
    t.deepEqual(await tags.get(null, U1), { tags: { 'team:a': [11, 0] }, cleared: 0 }, 'the unscoped state is its own');
    t.deepEqual(await tags.get(6, U1), { tags: {}, cleared: 0 }, 'another account sees nothing of account 5');
  });
});

test('concurrent updates of one check are applied in turn, each on the state the last one left', async (t) => {
  await withStore(async ({ store }) => {
    const tags = new CheckTagStore(store);
    const seen: string[][] = [];
    const updates = ['a:1', 'b:2', 'c:3', 'd:4'].map((tag, i) =>
      tags.update(1, U1, (current) => {
        seen.push(Object.keys(current.tags).sort());
        return add(100 + i, tag);
      }),
    );
    const states = await Promise.all(updates);
    t.deepEqual(seen, [[], ['a:1'], ['a:1', 'b:2'], ['a:1', 'b:2', 'c:3']], 'each update saw the one before');
    t.deepEqual(Object.keys(states[3]!.tags).sort(), ['a:1', 'b:2', 'c:3', 'd:4']);
    t.deepEqual(Object.keys((await tags.get(1, U1)).tags).sort(), ['a:1', 'b:2', 'c:3', 'd:4'], 'none lost on disk');
  });
});

test('an update that fails writes nothing and does not hold up the next', async (t) => {
  await withStore(async ({ store }) => {
    const tags = new CheckTagStore(store);
    await tags.update(1, U1, () => add(1, 'a:1'));
    const failed = tags.update(1, U1, () => {
      throw new Error('bad update');
    });
    const next = tags.update(1, U1, () => add(2, 'b:2'));
    await t.throwsAsync(failed, { message: 'bad update' });
    t.deepEqual(Object.keys((await next).tags).sort(), ['a:1', 'b:2']);
  });
});

test('what `extend` stages is written in the same batch as the state', async (t) => {
  await withStore(async ({ store }) => {
    const tags = new CheckTagStore(store);
    const marker = Buffer.from('outbox-entry');
    await tags.update(1, U1, () => add(1, 'a:1'), (batch, update) => batch.put(CF.state, marker, Buffer.from(JSON.stringify(update))));
    t.deepEqual(JSON.parse((await store.get(CF.state, marker))!.toString()), add(1, 'a:1'));
    // A write that fails after extend staged its part leaves neither part behind.
    const other = Buffer.from('outbox-entry-2');
    const failing = tags.update(1, U1, () => add(2, 'b:2'), (batch) => {
      batch.put(CF.state, other, Buffer.from('x'));
      throw new Error('extend failed');
    });
    await t.throwsAsync(failing, { message: 'extend failed' });
    t.is(await store.get(CF.state, other), null);
    t.deepEqual(Object.keys((await tags.get(1, U1)).tags), ['a:1']);
  });
});

test("a scope's present tags are re-read after a write; removed and cleared tags are not present", async (t) => {
  await withStore(async ({ store }) => {
    const tags = new CheckTagStore(store);
    t.is((await tags.presentIn(1)).size, 0);
    await tags.update(1, U1, () => add(1, 'a:1', 'b:2'));
    t.deepEqual([...(await tags.presentIn(1))], [[U1, ['a:1', 'b:2']]]);
    await tags.update(1, U1, () => remove(2, 'a:1'));
    t.deepEqual([...(await tags.presentIn(1))], [[U1, ['b:2']]], 'the cached scope was dropped by the write');
    await tags.update(1, U2, () => add(3, 'c:3'));
    await tags.update(1, U1, () => ({ stamp: 4, add: [], remove: [], clear: true }));
    t.deepEqual([...(await tags.presentIn(1))], [[U2, ['c:3']]], 'a check with no present tag is left out');
    t.is((await tags.presentIn(2)).size, 0, 'other scopes are separate');
  });
});

test("an account's tags: its own merged with the unscoped ones, without duplicates", async (t) => {
  await withStore(async ({ store }) => {
    const tags = new CheckTagStore(store);
    await tags.update(null, U1, () => add(1, 'env:prod', 'shared:x'));
    t.deepEqual([...(await tags.forAccount(7))], [[U1, ['env:prod', 'shared:x']]], 'unscoped only');
    await tags.update(7, U1, () => add(2, 'shared:x', 'team:a'));
    await tags.update(7, U2, () => add(3, 'own:y'));
    const merged = new Map(await tags.forAccount(7));
    t.deepEqual(merged.get(U1), ['env:prod', 'shared:x', 'team:a']);
    t.deepEqual(merged.get(U2), ['own:y']);
    t.deepEqual([...(await tags.forAccount(8))], [[U1, ['env:prod', 'shared:x']]], 'another account sees only the unscoped');
  });
});
