// The period of a chart: the finest that keeps a range under MAX_POINTS slots, among a few
// raw periods for short ranges and the node's rollup levels (which /fetch reads directly).
const MAX_POINTS = 720;
const RAW_PERIODS = [1, 5, 10, 30];

export interface Range {
  label: string;
  seconds: number;
}

export const RANGES: Range[] = [
  { label: 'last 15 minutes', seconds: 900 },
  { label: 'last hour', seconds: 3600 },
  { label: 'last 6 hours', seconds: 6 * 3600 },
  { label: 'last 24 hours', seconds: 86400 },
  { label: 'last 7 days', seconds: 7 * 86400 },
  { label: 'last 30 days', seconds: 30 * 86400 },
];

/** `minPeriod`: histograms are stored per base period (60 s), finer slots would be mostly empty. */
export function periodFor(rangeS: number, rollups: number[], minPeriod = 0): { period: number; rollup: boolean } {
  const candidates = [...new Set([...RAW_PERIODS, ...rollups])].filter((p) => p >= minPeriod).sort((a, b) => a - b);
  const period = candidates.find((p) => rangeS / p <= MAX_POINTS) ?? candidates[candidates.length - 1]!;
  return { period, rollup: rollups.includes(period) };
}

/** A grid of `period` slots covering the `rangeS` seconds up to now. */
export function gridFor(rangeS: number, period: number, nowS = Date.now() / 1000): { start: number; count: number } {
  const end = Math.ceil(nowS / period) * period;
  const start = Math.floor((nowS - rangeS) / period) * period;
  return { start, count: Math.max(1, Math.round((end - start) / period)) };
}
