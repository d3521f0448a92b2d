// Activity windows (irondb-reference §8.6): when a metric received data, at 5-minute
// granularity; windows closer than 8 hours coalesce. Windows are [start, end] epoch seconds.

export const ACTIVITY_SLICE_S = 300;
export const ACTIVITY_COALESCE_S = 8 * 3600;

export type ActivityWindow = readonly [number, number];

/** The start of the 5-minute slice holding `ms`. */
export function activitySlice(ms: number): number {
  const s = Math.floor(ms / 1000);
  return s - (s % ACTIVITY_SLICE_S);
}

/** `windows` (sorted, disjoint) with each slice added, coalesced; returns a new array. */
export function mergeActivity(windows: readonly ActivityWindow[], slices: Iterable<number>): ActivityWindow[] {
  const added: ActivityWindow[] = [];
  for (const s of slices) added.push([s, s + ACTIVITY_SLICE_S]);
  return unionActivity(windows, added);
}

/** The windows of both lists, coalesced; returns a new array. */
export function unionActivity(a: readonly ActivityWindow[], b: readonly ActivityWindow[]): ActivityWindow[] {
  const all: [number, number][] = [...a, ...b].map(([start, end]) => [start, end]);
  all.sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of all) {
    const last = out[out.length - 1];
    if (last !== undefined && a <= last[1] + ACTIVITY_COALESCE_S) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** True when both lists hold the same windows. */
export function sameActivity(a: readonly ActivityWindow[], b: readonly ActivityWindow[]): boolean {
  return a.length === b.length && a.every(([s, e], i) => s === b[i]![0] && e === b[i]![1]);
}

/** True when some window overlaps [start, end] (either bound may be absent). */
export function activeBetween(windows: readonly ActivityWindow[], start: number | null, end: number | null): boolean {
  return windows.some(([a, b]) => (start === null || b >= start) && (end === null || a <= end));
}

/**
 * Per 5-minute slice k (from `first` + k·300 s, `count` of them, `first` on a slice boundary):
 * how many of the metrics whose windows are added were active in it. A metric's windows are
 * disjoint, so it counts at most once per slice. Differences are kept and summed once at the end,
 * so a month-long window costs two additions, not 8,640.
 */
export class SliceCounts {
  private readonly diff: Int32Array;

  constructor(
    readonly first: number,
    readonly count: number,
  ) {
    this.diff = new Int32Array(count + 1);
  }

  add(windows: readonly ActivityWindow[]): void {
    for (const [a, b] of windows) {
      const from = Math.max(0, Math.floor((a - this.first) / ACTIVITY_SLICE_S));
      const to = Math.min(this.count, Math.ceil((b - this.first) / ACTIVITY_SLICE_S));
      if (from >= to) continue;
      this.diff[from] = this.diff[from]! + 1;
      this.diff[to] = this.diff[to]! - 1;
    }
  }

  counts(): number[] {
    const out = new Array<number>(this.count);
    let running = 0;
    for (let k = 0; k < this.count; k++) out[k] = running += this.diff[k]!;
    return out;
  }
}
