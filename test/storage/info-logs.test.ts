// storage/rocks.ts: RocksDB's old info logs (one per open) do not pile up in a data directory.
import test from 'ava';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { zstdDecompressSync } from 'node:zlib';
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
