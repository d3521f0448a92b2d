// Activity windows of every metric, in memory, by dense id: the one window most metrics
// have in two columns, the rest in a map. Kept by the same rules as model/activity (5-minute
// slices, windows less than 8 hours apart coalesce), so a search filters and reports
// activity without asking the partitions that persist it.
import { ACTIVITY_COALESCE_S, ACTIVITY_SLICE_S, activitySlice, mergeActivity, sameActivity, type ActivityWindow } from '../../model/activity.js';
import { grown, roomFor } from '../../model/typed-arrays.js';

const NONE: readonly ActivityWindow[] = [];

export class ActivityColumns {
  /** start and end (epoch s) of a metric's only window; end 0 = no window or see `more`. */
  private start = new Uint32Array(1024);
  private end = new Uint32Array(1024);
  private readonly more = new Map<number, ActivityWindow[]>();

  /**
   * Notes a sample at `ms` for metric `id`; true when its windows changed (a metric scraped
   * every 10 s changes them once a 5-minute slice, and only then is its block rewritten).
   */
  note(id: number, ms: number): boolean {
    if (id >= this.end.length) this.grow(id);
    const s = activitySlice(ms);
    const a = this.start[id]!;
    const b = this.end[id]!;
    if (b !== 0 && s >= a && s + ACTIVITY_SLICE_S <= b) return false;
    if (b !== 0) {
      // One window and a slice it coalesces with (model/activity's rule, both ways round).
      if (s >= a ? s <= b + ACTIVITY_COALESCE_S : a <= s + ACTIVITY_SLICE_S + ACTIVITY_COALESCE_S) {
        this.start[id] = Math.min(a, s);
        this.end[id] = Math.max(b, s + ACTIVITY_SLICE_S);
      } else this.set(id, mergeActivity([[a, b]], [s]));
      return true;
    }
    const list = this.more.get(id);
    const merged = mergeActivity(list ?? [], [s]);
    if (list !== undefined && sameActivity(list, merged)) return false;
    this.set(id, merged);
    return true;
  }

  windows(id: number): readonly ActivityWindow[] {
    if (id >= this.end.length) return NONE;
    const b = this.end[id]!;
    if (b !== 0) return [[this.start[id]!, b]];
    return this.more.get(id) ?? NONE;
  }

  /** Replaces a metric's windows (loaded from disk, or an activity rebuild). */
  set(id: number, windows: readonly ActivityWindow[]): void {
    if (id >= this.end.length) this.grow(id);
    this.more.delete(id);
    this.start[id] = 0;
    this.end[id] = 0;
    if (windows.length === 1) {
      this.start[id] = windows[0]![0];
      this.end[id] = windows[0]![1];
    } else if (windows.length > 1) this.more.set(id, windows.map(([a, b]) => [a, b] as const));
  }

  /** True when a window of `id` overlaps [from, to] (either may be null: unbounded). */
  activeBetween(id: number, from: number | null, to: number | null): boolean {
    for (const [a, b] of this.windows(id)) if ((from === null || b >= from) && (to === null || a <= to)) return true;
    return false;
  }

  /** The columns up to `size` ids (views: valid until the next change) and the metrics with several windows (for an index snapshot). */
  image(size: number): { start: Uint32Array; end: Uint32Array; more: [number, ActivityWindow[]][] } {
    if (size > this.end.length) this.grow(size - 1);
    return { start: this.start.subarray(0, size), end: this.end.subarray(0, size), more: [...this.more].map(([id, w]) => [id, w.map(([a, b]) => [a, b] as ActivityWindow)]) };
  }

  /** Columns from an image. */
  static of(image: { start: Uint32Array; end: Uint32Array; more: [number, ActivityWindow[]][] }): ActivityColumns {
    const c = new ActivityColumns();
    c.grow(Math.max(image.end.length, 1) - 1);
    c.start.set(image.start);
    c.end.set(image.end);
    for (const [id, windows] of image.more) c.more.set(id, windows);
    return c;
  }

  get bytes(): number {
    return this.start.byteLength + this.end.byteLength;
  }

  private grow(id: number): void {
    const size = roomFor(this.end.length, id + 1);
    this.start = grown(this.start, size);
    this.end = grown(this.end, size);
  }
}
