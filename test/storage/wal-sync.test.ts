// storage/rocks.ts with syncWrites: every written batch waits for an fdatasync of the WAL that
// started after it was written, and batches waiting together share one (group commit).
import test from 'ava';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CF } from '../../storage/keys.js';
import { Store, WalSync } from '../../storage/rocks.js';
import { tempDir } from '../helpers/node.js';
import { metricId } from './store.js';

test('callers arriving while an fsync runs share the next one', async (t) => {
  const dir = tempDir('ferrite-walsync-');
  try {
    writeFileSync(path.join(dir, '000001.log'), 'wal');
    const sync = new WalSync(dir, async () => ({ path: '/000001.log' }));
    await Promise.all(Array.from({ length: 10 }, () => sync.sync()));
    t.is(sync.batches, 10);
    t.is(sync.fsyncs, 2, 'the first caller starts one; the nine that came while it ran share a second');
    await sync.sync();
    t.is(sync.fsyncs, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a WAL file that no longer exists (retired into SST files) is not an error; other failures are', async (t) => {
  const dir = tempDir('ferrite-walsync-');
  try {
    let file = '/000002.log';
    writeFileSync(path.join(dir, '000002.log'), 'wal');
    const sync = new WalSync(dir, async () => ({ path: file }));
    await sync.sync();
    rmSync(path.join(dir, '000002.log'));
    writeFileSync(path.join(dir, '000003.log'), 'wal');
    file = '/000003.log';
    await t.notThrowsAsync(sync.sync(), 'the previous file is gone, the current one is synced');
    file = '/missing-dir/000004.log';
    await t.notThrowsAsync(sync.sync());
    const broken = new WalSync(path.join(dir, '000003.log'), async () => ({ path: '/x.log' }));
    await t.throwsAsync(broken.sync(), { code: 'ENOTDIR' });
    await t.notThrowsAsync(sync.sync(), 'a failed fsync does not stop later ones');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a store opened with syncWrites syncs its real WAL after every written batch', async (t) => {
  const dir = tempDir('ferrite-walsync-');
  const store = await Store.open(dir, { syncWrites: true });
  try {
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.batch().put(CF.numeric, metricId(i), Buffer.from('v')).write()));
    const figures = store.syncFigures!;
    t.is(figures.batches, 20);
    t.true(figures.fsyncs >= 1 && figures.fsyncs <= 20, `${figures.fsyncs} fsyncs`);
    t.is((await store.get(CF.numeric, metricId(19)))?.toString(), 'v');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const plain = await Store.open(dir);
  t.is(plain.syncFigures, null, 'off by default');
  await plain.close();
  rmSync(dir, { recursive: true, force: true });
});
