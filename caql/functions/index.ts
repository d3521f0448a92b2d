// The CAQL function table: every name a query may call (IRONdb's CAQL reference, whole).
import { ANOMALY } from './anomaly.js';
import { FILTERS } from './filter.js';
import { FORECASTING } from './forecasting.js';
import { GRAPHITE } from './graphite.js';
import { HISTOGRAMS } from './histogram.js';
import { MATH } from './math.js';
import { OP } from './op.js';
import { OUTLIER } from './outlier.js';
import { SELECT } from './select.js';
import { SERIES } from './series.js';
import { STATS } from './stats.js';
import { STREAMS } from './streams.js';
import { TIME } from './time.js';
import type { CaqlFunction } from './types.js';
import { VECTORS } from './vector.js';
import { WINDOWS } from './window.js';
import { lookupTable } from '../../model/lookup-table.js';

export const FUNCTIONS: Readonly<Record<string, CaqlFunction>> = lookupTable({
  ...SELECT,
  ...SERIES,
  ...OP,
  ...STATS,
  ...MATH,
  ...TIME,
  ...STREAMS,
  ...FILTERS,
  ...VECTORS,
  ...HISTOGRAMS,
  ...WINDOWS,
  ...FORECASTING,
  ...ANOMALY,
  ...OUTLIER,
  ...GRAPHITE,
});

/** Names differing only in case (the reference writes `graphite:aliasSub` and `graphite:aliassub`). */
const BY_LOWER_CASE: Readonly<Record<string, CaqlFunction>> = lookupTable(Object.fromEntries(Object.entries(FUNCTIONS).map(([name, fn]) => [name.toLowerCase(), fn])));

export function lookupFunction(name: string): CaqlFunction | undefined {
  return FUNCTIONS[name] ?? BY_LOWER_CASE[name.toLowerCase()];
}
