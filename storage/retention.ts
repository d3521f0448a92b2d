// Retention: drops records older than their level's retention with one range delete per
// metric and level (never key by key). Metrics are enumerated by skipping from one metric
// id to the next in the column family, so a sweep costs one seek per metric, not a scan.
import type { FerriteConfig, RollupLevel } from '../model/config.js';
import { CF, histogramKey, METRIC_ID_BYTES, rollupKey, type ColumnFamilyName } from './keys.js';
import type { Store } from './rocks.js';
import { chunkStartOf } from '../model/rollup/chunk.js';

/** Every distinct metric id (16-byte key prefix) in a column family keyed by metric id first. */
export async function* metricIdsIn(store: Store, cf: ColumnFamilyName): AsyncGenerator<Buffer> {
  let from: Buffer | null = Buffer.alloc(METRIC_ID_BYTES);
  while (from !== null) {
    let found: Buffer | null = null;
    for await (const { key } of store.scan(cf, { gte: from, limit: 1 })) found = key;
    if (found === null) return;
    const id = Buffer.from(found.subarray(0, METRIC_ID_BYTES));
    yield id;
    from = nextId(id);
  }
}

/** The smallest id after `id`, or null after the last possible one. */
function nextId(id: Buffer): Buffer | null {
  const next = Buffer.from(id);
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 0xff) {
      next[i]!++;
      return next;
    }
    next[i] = 0;
  }
  return null;
}

/** Range-deletes, per metric of `cf`, what `ranges` says has expired. Returns metrics swept. */
async function sweep(store: Store, cf: ColumnFamilyName, ranges: (id: Buffer) => [Buffer, Buffer][]): Promise<number> {
  let metrics = 0;
  for await (const id of metricIdsIn(store, cf)) {
    const batch = store.batch();
    for (const [from, to] of ranges(id)) batch.deleteRange(cf, from, to);
    await batch.write();
    metrics++;
  }
  return metrics;
}

/** Per level with a retention: records of periods that ended before `now - retention`. */
function expiredLevels(levels: readonly RollupLevel[], now: number, key: (id: Buffer, period: number, start: number) => Buffer): (id: Buffer) => [Buffer, Buffer][] {
  const expiring = levels.filter((l) => l.retention > 0 && now - l.retention * 1000 - l.period * 1000 > 0);
  return (id) => expiring.map((l) => [key(id, l.period, 0), key(id, l.period, now - l.retention * 1000 - l.period * 1000 + 1)]);
}

/** Drops expired histogram and numeric rollup records (raw numeric data is aged into rollups instead: actors/shard/shard.ts `ageRaw`). */
export async function sweepRetention(store: Store, config: FerriteConfig, now: number): Promise<void> {
  if (config.histogramRollups.some((l) => l.retention > 0)) {
    await sweep(store, CF.histogram, expiredLevels(config.histogramRollups, now, (id, p, s) => histogramKey(id, p, s, 0)));
  }
  // A rollup chunk goes once all of its span has expired: the key of the chunk holding the cut bounds the delete.
  if (config.rollups.some((l) => l.retention > 0)) await sweep(store, CF.rollup, expiredLevels(config.rollups, now, (id, p, s) => rollupKey(id, p, chunkStartOf(s, p))));
}
