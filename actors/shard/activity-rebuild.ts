// POST /surrogate/activity_rebuild (irondb-reference §8.6, §10): a metric's activity windows
// recomputed from the data this node stores, replacing what activity tracking recorded.
// Sources: raw numeric and text samples (sealed and buffered), the finest numeric rollup
// level (which outlives raw retention) and the base histogram level. Each contributes the
// 5-minute slices its timestamps fall in.
import { activitySlice, mergeActivity, type ActivityWindow } from '../../model/activity.js';
import { CF, METRIC_ID_BYTES, prefixEnd, type ColumnFamilyName } from '../../storage/keys.js';
import type { MetricInfo } from '../metric-info.js';
import type { FerriteNode } from '../node/node.js';
import { storedPeriodStarts } from './rollup-chunks.js';

/** "Up to the end of time" for raw reads (JSON-safe, unlike Infinity). */
const FOREVER = Number.MAX_SAFE_INTEGER;

export async function rebuildActivity(node: FerriteNode, metric: MetricInfo): Promise<ActivityWindow[]> {
  const slices = new Set<number>();
  for (const kind of ['numeric', 'text'] as const) {
    for (const ts of (await node.partitions.read(metric, kind, 0, FOREVER)).ts) slices.add(activitySlice(ts));
  }
  const finestRollup = node.config.rollups[0]?.period;
  if (finestRollup !== undefined) for await (const ts of storedPeriodStarts(node.store, metric, finestRollup)) slices.add(activitySlice(ts));
  const baseHistogram = node.config.histogramRollups[0]?.period;
  if (baseHistogram !== undefined) await addLevelSlices(node, CF.histogram, metric, baseHistogram, slices);
  const windows = mergeActivity([], slices);
  await node.setActivity(metric, windows);
  return windows;
}

/** Period starts of one histogram level (`metric id | period s (u32) | period start ms (u64)`), read from the keys alone. */
async function addLevelSlices(node: FerriteNode, cf: ColumnFamilyName, metric: MetricInfo, period: number, slices: Set<number>): Promise<void> {
  const prefix = Buffer.allocUnsafe(METRIC_ID_BYTES + 4);
  metric.id.copy(prefix, 0, 0, METRIC_ID_BYTES);
  prefix.writeUInt32BE(period, METRIC_ID_BYTES);
  for await (const { key } of node.store.scan(cf, { gte: prefix, lt: prefixEnd(prefix), capacity: 4096 })) {
    slices.add(activitySlice(Number(key.readBigUInt64BE(METRIC_ID_BYTES + 4))));
  }
}
