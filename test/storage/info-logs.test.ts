// storage/rocks.ts: RocksDB's old info logs (one per open) and options files do not pile up in a
// data directory, and a stopped store keeps them compressed.
import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { zstdDecompressSync } from 'node:zlib';
import { Store } from '../../storage/rocks.js';
import { withStore } from './store.js';

test('a store reopened many times keeps its current info log and the previous run\'s only, compressed', async (t) => {
  await withStore(async (s) => {
    const dir = s.store.path;
    for (let i = 0; i < 5; i++) await s.reopen();
    const logs = readdirSync(dir).filter((f) => f.startsWith('LOG')).sort();
    t.is(logs.length, 2, logs.join(' '));
    t.true(logs.includes('LOG'));
    const previous = logs.find((f) => f !== 'LOG')!;
    t.regex(previous, /^LOG\.old\.\d+\.zst$/);
    const text = zstdDecompressSync(readFileSync(path.join(dir, previous))).toString('utf8');
    t.regex(text, /RocksDB version/, 'the previous run\'s log reads back whole');
    t.true(statSync(path.join(dir, previous)).size * 4 < Buffer.byteLength(text), 'and is stored in a fraction of its size');
  });
});

test('a compression a crash interrupted leaves nothing behind at the next open, which keeps the run before it', async (t) => {
  await withStore(async (s) => {
    const dir = s.store.path;
    await s.reopen();
    await s.reopen();
    const previous = readdirSync(dir).find((f) => f.endsWith('.zst'))!;
    // As if the last open had died while compressing: its source still there, the copy half written.
    const source = path.join(dir, previous.slice(0, -'.zst'.length));
    writeFileSync(source, zstdDecompressSync(readFileSync(path.join(dir, previous))));
    rmSync(path.join(dir, previous));
    writeFileSync(`${source}.zst.tmp`, 'half');
    await s.reopen();
    const logs = readdirSync(dir).filter((f) => f.startsWith('LOG')).sort();
    t.is(logs.length, 2, logs.join(' '));
    t.false(logs.some((f) => f.endsWith('.tmp')));
    t.regex(zstdDecompressSync(readFileSync(path.join(dir, logs.find((f) => f !== 'LOG')!))).toString('utf8'), /RocksDB version/);
  });
});

test('a clean close keeps the run\'s info log and options compressed; the next open reads and prunes them', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferrite-logs-'));
  try {
    let store = await Store.open(dir);
    await store.batch().put('state', Buffer.from('k'), Buffer.from('v')).write();
    await store.close();
    for (let run = 0; run < 3; run++) {
      const stopped = readdirSync(dir);
      t.false(stopped.includes('LOG'), 'no plain info log at rest');
      t.deepEqual(stopped.filter((f) => /^OPTIONS-\d+/.test(f)).map((f) => /\.zst$/.test(f)), [true], 'one options file, compressed');
      const options = stopped.find((f) => f.startsWith('OPTIONS-'))!;
      t.regex(zstdDecompressSync(readFileSync(path.join(dir, options))).toString('utf8'), /\[Version\]/);
      const logs = stopped.filter((f) => /^LOG\.old\.\d+\.zst$/.test(f));
      t.true(logs.length >= 1 && logs.length <= 2, logs.join(' '));
      const newest = logs.sort((a, b) => Number(b.split('.')[2]) - Number(a.split('.')[2]))[0]!;
      t.regex(zstdDecompressSync(readFileSync(path.join(dir, newest))).toString('utf8'), /RocksDB version/, 'the closed run\'s log reads back');
      store = await Store.open(dir);
      const running = readdirSync(dir);
      t.true(running.includes('LOG'));
      t.is(running.filter((f) => /^LOG\.old\./.test(f)).length, 1, 'the last run\'s log only, besides this run\'s');
      t.false(running.some((f) => /^OPTIONS-\d+\.zst$/.test(f)), 'the last run\'s options give way to this run\'s');
      t.is((await store.get('state', Buffer.from('k')))?.toString(), 'v');
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a close cut short while compressing leaves a store that opens, and nothing half written', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferrite-logs-'));
  try {
    await (await Store.open(dir)).close();
    // As if the close had died compressing the options file: its source back, the copy half written.
    const options = readdirSync(dir).find((f) => /^OPTIONS-\d+\.zst$/.test(f))!;
    const source = path.join(dir, options.slice(0, -'.zst'.length));
    writeFileSync(source, zstdDecompressSync(readFileSync(path.join(dir, options))));
    rmSync(path.join(dir, options));
    writeFileSync(`${source}.zst.tmp`, 'half');
    const store = await Store.open(dir);
    t.false(readdirSync(dir).some((f) => f.endsWith('.tmp')));
    await store.close();
    t.is(readdirSync(dir).filter((f) => /^OPTIONS-/.test(f)).length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
