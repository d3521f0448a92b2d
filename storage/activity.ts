// One partition's activity tracking for metrics the shard's index does not know (tests of this
// file alone): slices seen since the last checkpoint are merged into the stored windows (one
// index `a` key per metric) at each checkpoint, stored windows read, a few cached. The metrics
// the index knows it tracks itself: it keeps every metric's windows in memory by the same rules,
// notes a write's samples before the partition does, and the shard writes the windows that
// changed in activity blocks at each checkpoint (storage/metric-index/activity-blocks.ts).
import { mergeActivity, activitySlice, sameActivity, type ActivityWindow } from '../model/activity.js';
import type { MetricRef } from '../model/metric-info.js';
import { activityKey, CF } from './keys.js';
import type { Store } from './rocks.js';

/** Most metrics one flush writes. */
const FLUSH_CHUNK = 20_000;
/**
 * Past this many cached metrics the cache starts over (it is only a shortcut). Small: a partition
 * of a million-series node would otherwise keep a few hundred bytes per series (issue 30), and a
 * flush reads what is not cached in one multi-get anyway.
 */
const MAX_CACHED = 4096;

/**
 * The shard's index, which notes every sample of the metrics it knows (before the partition
 * sees them), keeps their windows and writes them: for those the tracker keeps nothing.
 */
export interface IndexedActivity {
  /** Whether the index knows the metric. */
  knows(id: Buffer): boolean;
  /** `knows` of a metric that may carry its dense id (`indexId`), which saves hashing its storage id. */
  knowsMetric(metric: MetricRef): boolean;
  /** Its windows with every noted slice; undefined when the index does not know it. */
  windows(id: Buffer): readonly ActivityWindow[] | undefined;
}

const NO_INDEX: IndexedActivity = { knows: () => false, knowsMetric: () => false, windows: () => undefined };

export class ActivityTracker {
  /** Slices seen since the last flush, per metric (usually one: a small array beats a Set). */
  private readonly pending = new Map<string, { id: Buffer; last: number; slices: number[] }>();
  private cache = new Map<string, ActivityWindow[]>();

  constructor(
    private readonly store: Store,
    private readonly indexed: IndexedActivity = NO_INDEX,
  ) {}

  /** Notes a sample of `metric` at `ts` (for metrics the index does not know: it tracks its own). */
  note(metric: MetricRef, ts: number): void {
    if (this.indexed.knowsMetric(metric)) return;
    const id = metric.id;
    // Hex only for metrics the index does not know yet (a shard's metric makes it when asked).
    const idHex = metric.idHex;
    const slice = activitySlice(ts);
    const p = this.pending.get(idHex);
    if (p === undefined) this.pending.set(idHex, { id, last: slice, slices: [slice] });
    else if (p.last !== slice) {
      p.last = slice;
      if (!p.slices.includes(slice)) p.slices.push(slice);
    }
  }

  /**
   * Writes what was noted since the last flush, at most FLUSH_CHUNK metrics a call (a burst
   * of a million new series must not hold the partition for one long checkpoint); the rest
   * waits for the next checkpoint, and reads see it meanwhile. How many it wrote.
   */
  async flush(limit = FLUSH_CHUNK): Promise<number> {
    if (this.pending.size === 0) return 0;
    const batch = this.store.batch();
    const pending: [string, { id: Buffer; slices: number[] }][] = [];
    for (const entry of this.pending) {
      if (pending.length >= limit) break;
      pending.push(entry);
    }
    for (const [idHex] of pending) this.pending.delete(idHex);
    const stored = await this.storedMany(pending.map(([idHex, { id }]) => [id, idHex]));
    pending.forEach(([idHex, { id, slices }], i) => {
      const before = stored[i]!;
      const after = mergeActivity(before, slices);
      if (!sameActivity(before, after)) batch.put(CF.index, activityKey(id), encodeActivityWindows(after));
      this.remember(idHex, after);
    });
    await batch.write();
    return pending.length;
  }

  /** Writes everything pending (shutdown, explicit flush). */
  async flushAll(): Promise<void> {
    while ((await this.flush(Infinity)) > 0);
  }

  /** Each metric's windows including what is not yet flushed. */
  async windows(metrics: readonly { id: Buffer; idHex: string }[]): Promise<ActivityWindow[][]> {
    const ids = metrics.map((m) => m.id);
    const indexed = ids.map((id) => this.indexed.windows(id));
    const unknown = metrics.flatMap((_, i) => (indexed[i] === undefined ? [i] : []));
    const stored = await this.storedMany(unknown.map((i) => [ids[i]!, metrics[i]!.idHex]));
    unknown.forEach((i, k) => {
      const p = this.pending.get(metrics[i]!.idHex);
      indexed[i] = p === undefined ? stored[k]! : mergeActivity(stored[k]!, p.slices);
    });
    return indexed.map((w) => w!.map(([a, b]): ActivityWindow => [a, b]));
  }

  /**
   * Replaces a metric's windows, dropping what is pending (an activity rebuild). A metric the
   * index knows loses any `a` key of its own (the index writes its windows, and a load would
   * merge the key's wider ones back in).
   */
  async replace(id: Buffer, idHex: string, windows: ActivityWindow[]): Promise<void> {
    this.pending.delete(idHex);
    this.remember(idHex, windows);
    const batch = this.store.batch();
    if (windows.length === 0 || this.indexed.knows(id)) batch.delete(CF.index, activityKey(id));
    else batch.put(CF.index, activityKey(id), encodeActivityWindows(windows));
    await batch.write();
  }

  /** Forgets a metric (full delete). */
  async drop(id: Buffer, idHex: string): Promise<void> {
    this.pending.delete(idHex);
    this.cache.delete(idHex);
    await this.store.batch().delete(CF.index, activityKey(id)).write();
  }

  /** Stored windows of each metric: from the cache, the rest in one read. */
  private async storedMany(metrics: [Buffer, string][]): Promise<ActivityWindow[][]> {
    const out = metrics.map(([, idHex]) => this.cache.get(idHex));
    const missing = out.flatMap((w, i) => (w === undefined ? [i] : []));
    if (missing.length === 0) return out as ActivityWindow[][];
    const raw = await this.store.getMany(CF.index, missing.map((i) => activityKey(metrics[i]![0])));
    missing.forEach((i, k) => {
      const windows = raw[k] === null ? [] : decodeActivityWindows(raw[k]!);
      this.remember(metrics[i]![1], windows);
      out[i] = windows;
    });
    return out as ActivityWindow[][];
  }

  private remember(idHex: string, windows: ActivityWindow[]): void {
    if (this.cache.size >= MAX_CACHED) this.cache = new Map();
    this.cache.set(idHex, windows);
  }
}

/** An `a` key's value: u64 BE epoch seconds, written as two u32 (a BigInt per value cost more than the rest of a flush). */
export function encodeActivityWindows(windows: readonly ActivityWindow[]): Buffer {
  const out = Buffer.allocUnsafe(windows.length * 16);
  windows.forEach(([start, end], i) => {
    writeU64(out, start, i * 16);
    writeU64(out, end, i * 16 + 8);
  });
  return out;
}

function writeU64(out: Buffer, value: number, at: number): void {
  out.writeUInt32BE(Math.floor(value / 2 ** 32), at);
  out.writeUInt32BE(value >>> 0, at + 4);
}

export function decodeActivityWindows(raw: Buffer): ActivityWindow[] {
  const out: ActivityWindow[] = [];
  for (let at = 0; at + 16 <= raw.length; at += 16) out.push([readU64(raw, at), readU64(raw, at + 8)]);
  return out;
}

function readU64(raw: Buffer, at: number): number {
  return raw.readUInt32BE(at) * 2 ** 32 + raw.readUInt32BE(at + 4);
}
