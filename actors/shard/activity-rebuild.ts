// POST /surrogate/activity_rebuild (irondb-reference §8.6, §10): a metric's activity windows
// recomputed from the data this node stores, replacing what activity tracking recorded.
// Sources: raw numeric and text samples (sealed and buffered), the finest numeric rollup
// level (which outlives raw retention) and the base histogram level. Each contributes the
// 5-minute slices its timestamps fall in.
import { activitySlice, mergeActivity, type ActivityWindow } from '../../model/activity.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { Series } from '../../model/series.js';
import type { BufferValue } from '../../model/types.js';

/** What a rebuild reads: the shard's samples (sealed and buffered) and the periods it stores. */
export interface RebuildSource {
  read(metric: MetricInfo, kind: 'numeric' | 'text', start: number, end: number): Promise<Series<BufferValue>>;
  /** Starts of the metric's stored periods (the finest numeric rollup level, the base histogram level). */
  storedPeriodStarts(metric: MetricInfo): AsyncIterable<number>;
}

/** "Up to the end of time" for raw reads (JSON-safe, unlike Infinity). */
const FOREVER = Number.MAX_SAFE_INTEGER;

/** The metric's activity windows as its stored data says (the caller stores them). */
export async function rebuildActivity(source: RebuildSource, metric: MetricInfo): Promise<ActivityWindow[]> {
  const slices = new Set<number>();
  for (const kind of ['numeric', 'text'] as const) {
    for (const ts of (await source.read(metric, kind, 0, FOREVER)).ts) slices.add(activitySlice(ts));
  }
  for await (const ts of source.storedPeriodStarts(metric)) slices.add(activitySlice(ts));
  return mergeActivity([], slices);
}
