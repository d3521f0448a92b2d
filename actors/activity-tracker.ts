// One partition's activity tracking: slices seen since the last checkpoint are merged into
// the stored windows (index `a` keys) at each checkpoint. Recent windows are cached, so a
// steadily written metric costs no read per checkpoint.
import { mergeActivity, activitySlice, type ActivityWindow } from '../model/activity.js';
import { activityKey, activityPrefix, CF, decodeU64, encodeU64, prefixEnd } from '../storage/keys.js';
import type { Store } from '../storage/rocks.js';

/** Past this many cached metrics the cache starts over (it is only a shortcut). */
const MAX_CACHED = 200_000;

export class ActivityTracker {
  private readonly pending = new Map<string, { id: Buffer; slices: Set<number> }>();
  private cache = new Map<string, ActivityWindow[]>();

  constructor(private readonly store: Store) {}

  note(id: Buffer, idHex: string, ts: number): void {
    let p = this.pending.get(idHex);
    if (p === undefined) this.pending.set(idHex, (p = { id, slices: new Set() }));
    p.slices.add(activitySlice(ts));
  }

  /** Writes what was noted since the last flush. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.store.batch();
    for (const [idHex, { id, slices }] of this.pending) {
      const before = await this.stored(id, idHex);
      const after = mergeActivity(before, slices);
      const kept = new Set(after.map(([a]) => a));
      for (const [a] of before) if (!kept.has(a)) batch.delete(CF.index, activityKey(id, a));
      const old = new Map(before.map(([a, b]) => [a, b]));
      for (const [a, b] of after) if (old.get(a) !== b) batch.put(CF.index, activityKey(id, a), encodeU64(b));
      this.remember(idHex, after);
    }
    this.pending.clear();
    await batch.write();
  }

  /** The metric's windows including what is not yet flushed. */
  async windows(id: Buffer, idHex: string): Promise<ActivityWindow[]> {
    const stored = await this.stored(id, idHex);
    const p = this.pending.get(idHex);
    return p === undefined ? stored : mergeActivity(stored, p.slices);
  }

  /** Forgets a metric (full delete). */
  async drop(id: Buffer, idHex: string): Promise<void> {
    this.pending.delete(idHex);
    this.cache.delete(idHex);
    const prefix = activityPrefix(id);
    await this.store.batch().deleteRange(CF.index, prefix, prefixEnd(prefix)).write();
  }

  private async stored(id: Buffer, idHex: string): Promise<ActivityWindow[]> {
    const cached = this.cache.get(idHex);
    if (cached !== undefined) return cached;
    const prefix = activityPrefix(id);
    const out: ActivityWindow[] = [];
    for await (const { key, value } of this.store.scan(CF.index, { gte: prefix, lt: prefixEnd(prefix) })) {
      out.push([decodeU64(key, prefix.length), decodeU64(value)]);
    }
    this.remember(idHex, out);
    return out;
  }

  private remember(idHex: string, windows: ActivityWindow[]): void {
    if (this.cache.size >= MAX_CACHED) this.cache = new Map();
    this.cache.set(idHex, windows);
  }
}
