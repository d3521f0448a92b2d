// POST /surrogate/activity_rebuild (irondb-reference §8.6, §10): a metric's activity windows
// recomputed from the data this node stores, replacing what activity tracking recorded.
// Sources: raw numeric and text samples (sealed and buffered), the finest numeric rollup
// level (which outlives raw retention) and the base histogram level. Each contributes the
// 5-minute slices its timestamps fall in.
import { activitySlice, mergeActivity, type ActivityWindow } from '../../model/activity.js';
import { CF, METRIC_ID_BYTES, prefixEnd, type ColumnFamilyName } from '../../storage/keys.js';
import type { FerriteConfig } from '../../model/config.js';
import type { Series } from '../../model/series.js';
import type { Store } from '../../storage/rocks.js';
import type { MetricInfo } from '../metric-info.js';
import { storedPeriodStarts } from './rollup-chunks.js';
import type { BufferValue } from './window-buffer.js';

/** What a rebuild reads: the shard's samples (sealed and buffered) and its store. */
export interface RebuildSource {
  config: FerriteConfig;
  store: Store;
  read(metric: MetricInfo, kind: 'numeric' | 'text', start: number, end: number): Promise<Series<BufferValue>>;
}

/** "Up to the end of time" for raw reads (JSON-safe, unlike Infinity). */
const FOREVER = Number.MAX_SAFE_INTEGER;

/** The metric's activity windows as its stored data says (the caller stores them). */
export async function rebuildActivity(source: RebuildSource, metric: MetricInfo): Promise<ActivityWindow[]> {
  const slices = new Set<number>();
  for (const kind of ['numeric', 'text'] as const) {
    for (const ts of (await source.read(metric, kind, 0, FOREVER)).ts) slices.add(activitySlice(ts));
  }
  const finestRollup = source.config.rollups[0]?.period;
  if (finestRollup !== undefined) for await (const ts of storedPeriodStarts(source.store, metric, finestRollup)) slices.add(activitySlice(ts));
  const baseHistogram = source.config.histogramRollups[0]?.period;
  if (baseHistogram !== undefined) await addLevelSlices(source.store, CF.histogram, metric, baseHistogram, slices);
  return mergeActivity([], slices);
}

/** Period starts of one histogram level (`metric id | period s (u32) | period start ms (u64)`), read from the keys alone. */
async function addLevelSlices(store: Store, cf: ColumnFamilyName, metric: MetricInfo, period: number, slices: Set<number>): Promise<void> {
  const prefix = Buffer.allocUnsafe(METRIC_ID_BYTES + 4);
  metric.id.copy(prefix, 0, 0, METRIC_ID_BYTES);
  prefix.writeUInt32BE(period, METRIC_ID_BYTES);
  for await (const { key } of store.scan(cf, { gte: prefix, lt: prefixEnd(prefix), capacity: 4096 })) {
    slices.add(activitySlice(Number(key.readBigUInt64BE(METRIC_ID_BYTES + 4))));
  }
}
