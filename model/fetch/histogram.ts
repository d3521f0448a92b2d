// Histogram fetch transforms (interface §4.3): a slot's merged histogram to a number, or
// passed through by `none`. Parameters arrive as strings and are checked up front.
import type { Histogram } from '../histogram/index.js';
import { lookupTable } from '../lookup-table.js';

/** What a transform's single parameter must be. */
export type ParamRule = 'none' | 'number' | 'percent' | 'ratio';

export interface HistogramTransform {
  param: ParamRule;
  apply(h: Histogram, param: number, periodS: number): number;
}

const count = (h: Histogram) => Number(h.sampleCount());
const fn = (param: ParamRule, apply: HistogramTransform['apply']): HistogramTransform => ({ param, apply });

export const HISTOGRAM_TRANSFORMS: Record<string, HistogramTransform | null> = lookupTable({
  none: null,
  count: fn('none', count),
  rate: fn('none', (h, _p, periodS) => count(h) / periodS),
  count_above: fn('number', (h, t) => Number(h.countAbove(t))),
  count_below: fn('number', (h, t) => Number(h.countBelow(t))),
  rate_above: fn('number', (h, t, periodS) => Number(h.countAbove(t)) / periodS),
  rate_below: fn('number', (h, t, periodS) => Number(h.countBelow(t)) / periodS),
  inverse_percentile: fn('number', (h, t) => h.inverseQuantiles([t])[0]! * 100),
  inverse_quantile: fn('number', (h, t) => h.inverseQuantiles([t])[0]!),
  percentile: fn('percent', (h, p) => h.quantiles([p / 100])[0]!),
  quantile: fn('ratio', (h, q) => h.quantiles([q])[0]!),
  sum: fn('none', (h) => h.approxSum()),
  mean: fn('none', (h) => h.approxMean()),
  average: fn('none', (h) => h.approxMean()),
  stddev: fn('none', (h) => h.approxStddev()),
});

/** A numeric cell: null for a slot without data and for NaN (e.g. a quantile of nothing). */
export function histogramCell(t: HistogramTransform, h: Histogram | null, param: number, periodS: number): number | null {
  if (h === null) return null;
  const v = t.apply(h, param, periodS);
  return Number.isFinite(v) ? v : null;
}
