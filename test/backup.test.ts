// Backups: POST /admin/backup of a running node under ingest, restored into a new data
// directory, reads back every sample acknowledged before the backup began; the CLI backs up a
// stopped node's data directory and restores it; bad destinations are refused.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { restoreBackup } from '../storage/backup.js';
import { BIN, getJson, mLine, put, startNode, tempDir, UUID, type TestNode } from './helpers/node.js';

const NOW = Math.floor(Date.now() / 1000) - 3600;

/** Writes batch `b`: 50 metrics, one sample each at NOW + b. */
const batch = (b: number) => Array.from({ length: 50 }, (_, m) => mLine(`${NOW + b}.000`, `bk.m${m}`, 'n', String(b * 1000 + m))).join('\n');

async function readAll(n: TestNode, batches: number): Promise<number> {
  let found = 0;
  for (let m = 0; m < 50; m++) {
    const rows = (await getJson(`${n.url}/raw/${UUID}/bk.m${m}?start_ts=${NOW}&end_ts=${NOW + batches}`)).json as [number, number][];
    for (const [ts, v] of rows) if (v === (ts / 1000 - NOW) * 1000 + m) found++;
  }
  return found;
}

test.serial('a backup taken under ingest restores every sample acknowledged before it began', async (t) => {
  const source = await startNode({ checkpointIntervalMs: 50, sealQuietMs: 0, blockSpanMs: 60_000 });
  const dest = path.join(tempDir('ferrite-backup-'), 'copy');
  const restored = tempDir('ferrite-restored-');
  rmSync(restored, { recursive: true, force: true });
  let n: TestNode | null = null;
  try {
    for (let b = 0; b < 40; b++) t.is((await put(source.url, batch(b))).status, 200);
    // Ingest goes on while the backup runs; none of it may wait on the backup.
    let writing = true;
    let during = 0;
    // Some of it names metrics the backup has not seen: their journal entries may be in the copy
    // while the shards' copies predate them, and the restored node must replay them whole.
    const writer = (async () => {
      for (let b = 40; writing && b < 400; b++) {
        t.is((await put(source.url, `${batch(b)}\n${mLine(`${NOW + b}.000`, `bk.new${b}`, 'n', String(b))}`)).status, 200);
        during++;
      }
    })();
    const res = await fetch(`${source.url}/admin/backup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dest }) });
    writing = false;
    await writer;
    const manifest = (await res.json()) as { shards: number; bytes: number };
    t.is(res.status, 200);
    t.true(manifest.shards >= 1 && manifest.bytes > 0);
    t.log(`${during} batches acknowledged while the backup ran`);
    await source.stop();
    restoreBackup(dest, restored);
    n = await startNode({}, restored);
    t.is(await readAll(n, 40), 40 * 50, 'every sample acknowledged before the backup, value for value');
    // What was written while the backup ran is in it or not, but never altered.
    let newer = 0;
    for (let b = 40; b < 40 + during; b++) {
      const read = await getJson(`${n.url}/raw/${UUID}/bk.new${b}?start_ts=${NOW}&end_ts=${NOW + 400}`);
      t.true(read.status === 200 || read.status === 404, read.text);
      if (read.status === 404) continue;
      t.deepEqual(read.json, [[(NOW + b) * 1000, b]]);
      newer++;
    }
    t.log(`${newer} of the ${during} metrics first written during the backup are in it`);
  } finally {
    await n?.stop();
    rmSync(path.dirname(dest), { recursive: true, force: true });
  }
});

test.serial('the CLI backs up a stopped node and restores it', async (t) => {
  const source = await startNode();
  const work = tempDir('ferrite-backup-cli-');
  try {
    for (let b = 0; b < 5; b++) t.is((await put(source.url, batch(b))).status, 200);
    await source.stop(false);
    const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
    const backup = run('backup', source.dataDir, path.join(work, 'copy'));
    t.is(backup.status, 0, backup.stderr);
    t.regex(backup.stdout, /backup of .* written to/);
    const again = run('backup', source.dataDir, path.join(work, 'copy'));
    t.is(again.status, 2, 'an existing, non-empty destination is refused');
    t.regex(again.stderr, /exists and is not empty/);
    const restore = run('restore', path.join(work, 'copy'), path.join(work, 'data'));
    t.is(restore.status, 0, restore.stderr);
    t.is(run('restore', source.dataDir, path.join(work, 'other')).status, 2, 'a directory that is not a backup is refused');
    const n = await startNode({}, path.join(work, 'data'));
    try {
      t.is(await readAll(n, 5), 5 * 50);
    } finally {
      await n.stop();
    }
  } finally {
    rmSync(source.dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
});

test.serial('POST /admin/backup refuses a relative, missing or non-empty destination', async (t) => {
  const n = await startNode();
  const busy = tempDir('ferrite-backup-busy-');
  try {
    mkdirSync(busy, { recursive: true });
    writeFileSync(path.join(busy, 'x'), 'x');
    for (const body of [{ dest: 'relative/dir' }, {}, { dest: busy }]) {
      const res = await fetch(`${n.url}/admin/backup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      t.is(res.status, 400, JSON.stringify(body));
      t.regex(JSON.stringify(await res.json()), /dest/);
    }
  } finally {
    await n.stop();
    rmSync(busy, { recursive: true, force: true });
  }
});
