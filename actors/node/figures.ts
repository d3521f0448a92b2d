// Read-only figures of the node's own store for the operations console (issue 23): the ingest
// journal not yet sealed. (What shards hold: actors/shard/figures.ts.)
import { CF, journalSeqOf } from '../../storage/keys.js';
import type { Store } from '../../storage/rocks.js';

/** Journal entries still on disk: written, but some of their records not yet sealed into blocks. */
export interface JournalBacklog {
  entries: number;
  first_seq: number | null;
  last_seq: number | null;
}

export async function journalBacklog(store: Store): Promise<JournalBacklog> {
  const first = await firstKey(store.scan(CF.journal, { limit: 1, capacity: 1 }));
  const last = await firstKey(store.scan(CF.journal, { limit: 1, capacity: 1, reverse: true }));
  if (first === null || last === null) return { entries: 0, first_seq: null, last_seq: null };
  // Sequences are consecutive and truncated from the front, so the span is the count.
  const [a, b] = [journalSeqOf(first), journalSeqOf(last)];
  return { entries: b - a + 1, first_seq: a, last_seq: b };
}

async function firstKey(entries: AsyncGenerator<{ key: Buffer }>): Promise<Buffer | null> {
  for await (const { key } of entries) return key;
  return null;
}
