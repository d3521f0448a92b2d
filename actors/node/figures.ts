// Read-only figures for the operations console (issue 23), read from what RocksDB already
// holds, so the engine needs no counters of its own: disk per column family, the ingest
// journal not yet sealed, and the rollup work partitions still owe (their `state` markers).
import { ALL_COLUMN_FAMILIES, CF, histogramDirtyPrefix, journalSeqOf, prefixEnd, rollupDirtyPrefix } from '../../storage/keys.js';
import type { Store } from '../../storage/rocks.js';

/** Markers counted per kind before giving up: the console shows "at least" past this. */
const MARKER_COUNT_CAP = 100_000;

export interface FamilyUse {
  sst_bytes: number;
  memtable_bytes: number;
}

export interface DiskUse {
  families: Record<string, FamilyUse>;
  total_bytes: number;
}

export async function diskUse(store: Store): Promise<DiskUse> {
  const families: Record<string, FamilyUse> = {};
  let total = 0;
  for (const cf of ALL_COLUMN_FAMILIES) {
    const { sstBytes, memtableBytes } = await store.familySize(cf);
    families[cf] = { sst_bytes: sstBytes, memtable_bytes: memtableBytes };
    total += sstBytes + memtableBytes;
  }
  return { families, total_bytes: total };
}

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

/** Rollup work not yet done: sealed raw windows to roll up, histogram base periods to merge. */
export interface RollupBacklog {
  numeric_windows: number;
  histogram_periods: number;
  /** True when a count stopped at the cap (the real backlog is larger). */
  capped: boolean;
}

export async function rollupBacklog(store: Store, partitions: number): Promise<RollupBacklog> {
  const numeric = await countMarkers(store, partitions, rollupDirtyPrefix);
  const histogram = await countMarkers(store, partitions, histogramDirtyPrefix);
  return { numeric_windows: numeric.count, histogram_periods: histogram.count, capped: numeric.capped || histogram.capped };
}

async function countMarkers(store: Store, partitions: number, prefixOf: (p: number) => string): Promise<{ count: number; capped: boolean }> {
  let count = 0;
  for (let p = 0; p < partitions; p++) {
    const prefix = Buffer.from(prefixOf(p));
    for await (const _ of store.scan(CF.state, { gte: prefix, lt: prefixEnd(prefix), limit: MARKER_COUNT_CAP - count, capacity: 1024 })) count++;
    if (count >= MARKER_COUNT_CAP) return { count, capped: true };
  }
  return { count, capped: false };
}

async function firstKey(entries: AsyncGenerator<{ key: Buffer }>): Promise<Buffer | null> {
  for await (const { key } of entries) return key;
  return null;
}
