// Read caches of a shard: values computed for one metric's slot (a chunk span of numeric rollup
// periods computed from raw, a coarse histogram period merged from the base level), kept so a
// dashboard reading the same metrics again does not compute them again, in a least recently
// used cache bounded by an estimate of their heap bytes. One per shard, shared by its
// partitions: each metric belongs to one partition, and the partition drops what a seal, a
// delete or ageing changes (`dropFrom`, `dropMetric`).
import type { CompactPeriods } from '../model/rollup/period-columns.js';

interface Entry<V> {
  idHex: string;
  slot: number;
  value: V;
  bytes: number;
  /** The clock at its last move to the most recent end. */
  at: number;
}

export class MetricCache<V> {
  /** Metric → slot → entry: a lookup builds no key (a month's read looks up 31 spans of each of its metrics). */
  private readonly byMetric = new Map<string, Map<number, Entry<V>>>();
  /** Every entry, least recently used first. */
  private readonly recency = new Set<Entry<V>>();
  private bytes = 0;
  private clock = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(idHex: string, slot: number): V | undefined {
    const entry = this.byMetric.get(idHex)?.get(slot);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Moved to the most recent end only when it has drifted into the older half: a move on
    // every hit was a tenth of a cached 30-day read (31 spans a metric).
    if (this.clock - entry.at >= this.recency.size / 2) {
      this.recency.delete(entry);
      this.recency.add(entry);
      entry.at = ++this.clock;
    }
    return entry.value;
  }

  put(idHex: string, slot: number, value: V): void {
    if (this.maxBytes === 0) return;
    this.remove(idHex, slot);
    const entry: Entry<V> = { idHex, slot, value, bytes: this.sizeOf(value), at: ++this.clock };
    let slots = this.byMetric.get(idHex);
    if (slots === undefined) this.byMetric.set(idHex, (slots = new Map()));
    slots.set(slot, entry);
    this.recency.add(entry);
    this.bytes += entry.bytes;
    for (const oldest of this.recency) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(oldest.idHex, oldest.slot);
    }
  }

  /** Drops the metric's slots at or after `from`. */
  dropFrom(idHex: string, from: number): void {
    const slots = this.byMetric.get(idHex);
    if (slots === undefined) return;
    for (const slot of [...slots.keys()]) if (slot >= from) this.remove(idHex, slot);
  }

  dropMetric(idHex: string): void {
    this.dropFrom(idHex, -Infinity);
  }

  get size(): number {
    return this.recency.size;
  }

  private remove(idHex: string, slot: number): void {
    const slots = this.byMetric.get(idHex);
    const entry = slots?.get(slot);
    if (entry === undefined) return;
    slots!.delete(slot);
    if (slots!.size === 0) this.byMetric.delete(idHex);
    this.recency.delete(entry);
    this.bytes -= entry.bytes;
  }
}

/** One chunk span's numeric rollup periods computed from sealed raw blocks, as columns. */
export type ComputedPeriods = CompactPeriods;

/** Most heap a shard thread spends on computed numeric periods by default: about 370 metric-days (180 KB each). */
export const COMPUTED_ROLLUPS_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Numeric rollup periods computed from raw data not yet aged (storage/rollups.ts): the finest
 * level's periods of one metric over one chunk span (a day at 60 s), slot = the chunk's start;
 * a late sample drops its chunk and the later ones (the carry makes them depend on it).
 */
export class ComputedRollups extends MetricCache<ComputedPeriods> {
  constructor(maxBytes = COMPUTED_ROLLUPS_MAX_BYTES) {
    super(maxBytes, (periods) => periods.bytes);
  }
}
