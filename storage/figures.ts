// Read-only figures of a shard's store for the operations console (issue 23), read from what
// RocksDB already holds: disk per column family, and the rollup work its partitions still owe
// (their `state` markers).
import { ALL_COLUMN_FAMILIES, CF, histogramDirtyPrefix, prefixEnd, rollupDirtyPrefix, type ColumnFamilyName } from './keys.js';
import type { Store } from './rocks.js';

/** Markers counted per kind before giving up: the console shows "at least" past this. */
const MARKER_COUNT_CAP = 100_000;

export interface FamilyUse {
  sst_bytes: number;
  memtable_bytes: number;
}

export interface DiskUse {
  families: Record<string, FamilyUse>;
  /** SST files and memtables, bytes, by what they hold (the column families grouped). */
  by_kind: Record<DataKindOnDisk, number>;
  total_bytes: number;
}

export type DataKindOnDisk = 'raw' | 'rollups' | 'histograms' | 'index' | 'journal' | 'outbox' | 'state';

/** Which kind each column family's bytes count as. */
const KIND_OF_FAMILY: Record<ColumnFamilyName, DataKindOnDisk> = {
  [CF.journal]: 'journal',
  [CF.numeric]: 'raw',
  [CF.text]: 'raw',
  [CF.histogramRaw]: 'raw',
  [CF.rollup]: 'rollups',
  [CF.histogram]: 'histograms',
  [CF.index]: 'index',
  [CF.metrics]: 'index',
  [CF.state]: 'state',
  [CF.outbox]: 'outbox',
};

function byKind(families: Record<string, FamilyUse>): Record<DataKindOnDisk, number> {
  const out: Record<DataKindOnDisk, number> = { raw: 0, rollups: 0, histograms: 0, index: 0, journal: 0, outbox: 0, state: 0 };
  for (const [cf, f] of Object.entries(families)) out[KIND_OF_FAMILY[cf as ColumnFamilyName]] += f.sst_bytes + f.memtable_bytes;
  return out;
}

/** Rollup work not yet done: sealed raw windows to roll up, histogram base periods to merge. */
export interface RollupBacklog {
  numeric_windows: number;
  histogram_periods: number;
  /** True when a count stopped at the cap (the real backlog is larger). */
  capped: boolean;
}

export interface ShardFigures {
  disk: DiskUse;
  backlog: RollupBacklog;
  index: Record<string, number>;
  /** Metrics the shard has taken samples of since it started. */
  series: number;
  /** Windows whose raw blocks were merged into one since the shard started. */
  blocksMerged: number;
  /** The shard worker's V8 heap in use, bytes. */
  heapUsed: number;
  /** V8 heap the worker holds from the OS (part of RSS). */
  heapCommitted: number;
  /** Bytes of the shard worker's ArrayBuffers (outside the V8 heap). */
  arrayBuffers: number;
  /** Open (unsealed) buffers, and bytes of the pooled memory holding their samples (made, in use). */
  openBuffers: { buffers: number; bytes: { allocated: number; used: number } };
  /** Coarse histogram periods ending by this (epoch ms) are stored, in every partition (null: none aged yet, or levels not deferred). */
  histogramsAgedTo: number | null;
}

export async function diskUse(store: Store): Promise<DiskUse> {
  const families: Record<string, FamilyUse> = {};
  let total = 0;
  for (const cf of ALL_COLUMN_FAMILIES) {
    const { sstBytes, memtableBytes } = await store.familySize(cf);
    families[cf] = { sst_bytes: sstBytes, memtable_bytes: memtableBytes };
    total += sstBytes + memtableBytes;
  }
  return { families, by_kind: byKind(families), total_bytes: total };
}

/** Disk use of several stores as one. */
export function addDiskUse(uses: readonly DiskUse[]): DiskUse {
  const families: Record<string, FamilyUse> = {};
  for (const use of uses) {
    for (const [cf, f] of Object.entries(use.families)) {
      const sum = (families[cf] ??= { sst_bytes: 0, memtable_bytes: 0 });
      sum.sst_bytes += f.sst_bytes;
      sum.memtable_bytes += f.memtable_bytes;
    }
  }
  return { families, by_kind: byKind(families), total_bytes: uses.reduce((n, u) => n + u.total_bytes, 0) };
}

export async function rollupBacklog(store: Store, partitions: readonly number[]): Promise<RollupBacklog> {
  const numeric = await countMarkers(store, partitions, rollupDirtyPrefix);
  const histogram = await countMarkers(store, partitions, histogramDirtyPrefix);
  return { numeric_windows: numeric.count, histogram_periods: histogram.count, capped: numeric.capped || histogram.capped };
}

async function countMarkers(store: Store, partitions: readonly number[], prefixOf: (p: number) => string): Promise<{ count: number; capped: boolean }> {
  let count = 0;
  for (const p of partitions) {
    const prefix = Buffer.from(prefixOf(p));
    for await (const _ of store.scan(CF.state, { gte: prefix, lt: prefixEnd(prefix), limit: MARKER_COUNT_CAP - count, capacity: 1024 })) count++;
    if (count >= MARKER_COUNT_CAP) return { count, capped: true };
  }
  return { count, capped: false };
}
