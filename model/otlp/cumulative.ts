// Cumulative exponential histograms → the per-period histograms ferrite stores. A cumulative
// point holds everything since its start time; what is stored is its change since the
// series' previous point, remembered here (in memory, per node). Rules, as the OpenTelemetry
// Collector's cumulativetodelta processor does with `initial_value: auto`:
//   - previous point with the same start time: store the difference (at the coarser scale of
//     the two); if any count went down, the series restarted: store the point whole;
//   - previous point with another start time (the producer restarted): store the point whole;
//   - no previous point: store it whole if it started after this node did (nothing of it can
//     have been stored before), else only remember it (the next point stores the change).
// A point is remembered only once its request is stored (`commit`), so a failed request
// sent again is not counted twice, and a repeated point stores nothing.
import { subtractExponential, type ExponentialCounts } from './exponential.js';
import type { ExponentialPoint } from './types.js';

interface Seen {
  startMs: number;
  counts: ExponentialCounts;
}

/** Series remembered at most; the least recently updated are forgotten first (their next point is then a first point). */
const MAX_SERIES = 100_000;

export class CumulativeExponentials {
  private readonly last = new Map<string, Seen>();

  /** @param sinceMs when this node started taking points (epoch ms). */
  constructor(private readonly sinceMs: number) {}

  /** The counts to store for `p`, or null; and `remember`, to call once they are stored. */
  delta(key: string, p: ExponentialPoint): { counts: ExponentialCounts | null; remember: () => void } {
    const remember = () => this.remember(key, { startMs: p.startMs, counts: { scale: p.scale, zeroCount: p.zeroCount, positive: p.positive, negative: p.negative } });
    const seen = this.last.get(key);
    if (seen === undefined) return { counts: p.startMs >= this.sinceMs ? p : null, remember };
    if (seen.startMs !== p.startMs) return { counts: p, remember };
    return { counts: subtractExponential(p, seen.counts) ?? p, remember };
  }

  get size(): number {
    return this.last.size;
  }

  private remember(key: string, seen: Seen): void {
    this.last.delete(key);
    this.last.set(key, seen);
    if (this.last.size > MAX_SERIES) this.last.delete(this.last.keys().next().value!);
  }
}
