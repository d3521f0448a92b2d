// Where the PromQL engine gets data (actors/coordinators/sources/prometheus.ts on a node, a table in tests).
import type { LabelMatcher, SeriesData } from '../prometheus/types.js';

export interface PromSource {
  /** Series matching every matcher, with their samples stamped in [startMs, endMs]. */
  select(matchers: readonly LabelMatcher[], startMs: number, endMs: number): Promise<SeriesData[]>;
}
