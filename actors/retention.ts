// Retention: drops records older than their level's retention with one range delete per
// metric and level (never key by key). Metrics are enumerated by skipping from one metric
// id to the next in the column family, so a sweep costs one seek per metric, not a scan.
import type { RollupLevel } from '../model/config.js';
import { CF, histogramKey, METRIC_ID_BYTES } from '../storage/keys.js';
import type { Store } from '../storage/rocks.js';

/** Every distinct metric id (16-byte key prefix) in a column family keyed by metric id first. */
export async function* metricIdsIn(store: Store, cf: typeof CF.histogram): AsyncGenerator<Buffer> {
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

/** Deletes histogram records whose period ended before `now - retention`, per level. Returns metrics swept. */
export async function sweepHistogramRetention(store: Store, levels: readonly RollupLevel[], now: number): Promise<number> {
  const expiring = levels.filter((l) => l.retention > 0);
  if (expiring.length === 0) return 0;
  let metrics = 0;
  for await (const id of metricIdsIn(store, CF.histogram)) {
    const batch = store.batch();
    for (const level of expiring) {
      const horizon = now - level.retention * 1000 - level.period * 1000;
      if (horizon > 0) batch.deleteRange(CF.histogram, histogramKey(id, level.period, 0, 0), histogramKey(id, level.period, horizon + 1, 0));
    }
    await batch.write();
    metrics++;
  }
  return metrics;
}
