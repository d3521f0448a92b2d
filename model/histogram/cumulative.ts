// Cumulative histograms (TSV `H2` records, MetricList `Histogram.cumulative`: reconnoiter's
// type `H`): each submission holds a series' running totals, not one interval's samples.
// ferrite stores per-period histograms, so a cumulative submission becomes its change since
// the series' previous one.
import { binKey } from './bin.js';
import type { Histogram } from './histogram.js';

/**
 * What `cur` adds to `prev`: bin by bin `cur − prev`. When a bin of `prev` is missing from
 * `cur` or holds more than it there, the producer's totals restarted, and `cur` is all new.
 */
export function cumulativeDelta(cur: Histogram, prev: Histogram): Histogram {
  const now = new Map(cur.entries().map((e) => [binKey(e.bin), e.count]));
  for (const { bin, count } of prev.entries()) {
    if (count === 0n) continue;
    const c = now.get(binKey(bin));
    if (c === undefined || c < count) return cur.clone();
  }
  return cur.clone().subtract(prev);
}
