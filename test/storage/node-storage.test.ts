// storage/node-storage.ts: the node's identity, and the ingest journal with its cut and backlog,
// across restarts.
import test from 'ava';
import { rmSync } from 'node:fs';
import { NodeStorage } from '../../storage/node-storage.js';
import { tempDir } from '../helpers/node.js';

async function withNodeStorage(run: (open: () => Promise<NodeStorage>) => Promise<void>): Promise<void> {
  const dir = tempDir('ferrite-node-storage-');
  const held: { current: NodeStorage | null } = { current: null };
  const open = async () => {
    await held.current?.close();
    return (held.current = await NodeStorage.open(dir));
  };
  try {
    await run(open);
  } finally {
    await held.current?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function journal(s: NodeStorage): Promise<[number, string][]> {
  const out: [number, string][] = [];
  for await (const { seq, entry } of s.journal()) out.push([seq, entry.toString()]);
  return out;
}

test('a data directory keeps the identity it was given; a configured one replaces it', async (t) => {
  await withNodeStorage(async (open) => {
    const first = await (await open()).identity(null);
    t.regex(first, /^[0-9a-f-]{36}$/);
    t.is(await (await open()).identity(null), first, 'kept across restarts');
    t.is(await (await open()).identity('node-7'), 'node-7');
    t.is(await (await open()).identity(null), 'node-7', 'the configured id is now the stored one');
  });
});

test('journal entries come back in sequence order until truncated; the cut and the backlog follow', async (t) => {
  await withNodeStorage(async (open) => {
    let s = await open();
    t.deepEqual(await s.journalBacklog(), { entries: 0, first_seq: null, last_seq: null });
    const batch = s.batch();
    for (const seq of [3, 1, 2, 4]) s.stageJournalEntry(batch, seq, Buffer.from(`e${seq}`));
    await batch.write();
    s = await open();
    t.deepEqual(await journal(s), [[1, 'e1'], [2, 'e2'], [3, 'e3'], [4, 'e4']]);
    t.deepEqual(await s.journalBacklog(), { entries: 4, first_seq: 1, last_seq: 4 });
    await s.truncateJournal(3);
    s = await open();
    t.is(await s.journalCut(), 3);
    t.deepEqual(await journal(s), [[3, 'e3'], [4, 'e4']]);
    t.deepEqual(await s.journalBacklog(), { entries: 2, first_seq: 3, last_seq: 4 });
    await s.compactJournal();
    t.deepEqual(await journal(s), [[3, 'e3'], [4, 'e4']], 'compaction frees bytes, not entries');
  });
});
