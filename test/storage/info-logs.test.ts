// storage/rocks.ts: RocksDB's old info logs (one per open) do not pile up in a data directory.
import test from 'ava';
import { readdirSync } from 'node:fs';
import { withStore } from './store.js';

test('a store reopened many times keeps its current info log and the previous run\'s only', async (t) => {
  await withStore(async (s) => {
    const dir = s.store.path;
    for (let i = 0; i < 5; i++) await s.reopen();
    const logs = readdirSync(dir).filter((f) => f.startsWith('LOG')).sort();
    t.is(logs.length, 2, logs.join(' '));
    t.true(logs.includes('LOG'));
    t.regex(logs.find((f) => f !== 'LOG')!, /^LOG\.old\.\d+$/);
  });
});
