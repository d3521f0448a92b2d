// Rollup periods computed from raw data not yet aged (storage/rollups.ts), kept so a dashboard
// reading the same metrics again does not recompute them from raw: the finest level's periods of
// one metric over one chunk span (a day at 60 s), computed from sealed blocks only, in a least
// recently used cache bounded by an estimate of its heap bytes. One per shard, shared by its
// partitions: each metric belongs to one partition, and the partition drops what a seal, a
// delete or ageing changes (`dropFrom`, `dropMetric`).
import type { CompactPeriods } from '../model/rollup/period-columns.js';

/** One chunk span's periods, as columns. */
export type ComputedPeriods = CompactPeriods;

/** Most heap a shard thread spends on computed periods by default: about 370 metric-days (180 KB each). */
export const COMPUTED_ROLLUPS_MAX_BYTES = 64 * 1024 * 1024;

export class ComputedRollups {
  /** `<idHex>/<chunk start>` → periods and the clock at their last move to the most recent end; least recently used first. */
  private readonly entries = new Map<string, { periods: ComputedPeriods; at: number }>();
  /** Chunk starts cached per metric, so a metric's entries are dropped without a scan. */
  private readonly byMetric = new Map<string, Set<number>>();
  private bytes = 0;
  private clock = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly maxBytes = COMPUTED_ROLLUPS_MAX_BYTES) {}

  get(idHex: string, chunkStart: number): ComputedPeriods | undefined {
    const key = `${idHex}/${chunkStart}`;
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Moved to the most recent end only when it has drifted into the older half: a Map delete
    // and re-insert on every hit was a tenth of a cached 30-day read (31 spans a metric).
    if (this.clock - entry.at >= this.entries.size / 2) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      entry.at = ++this.clock;
    }
    return entry.periods;
  }

  put(idHex: string, chunkStart: number, periods: ComputedPeriods): void {
    if (this.maxBytes === 0) return;
    const key = `${idHex}/${chunkStart}`;
    this.remove(idHex, chunkStart);
    this.entries.set(key, { periods, at: ++this.clock });
    this.bytes += periods.bytes;
    let starts = this.byMetric.get(idHex);
    if (starts === undefined) this.byMetric.set(idHex, (starts = new Set()));
    starts.add(chunkStart);
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      const at = oldest.lastIndexOf('/');
      this.remove(oldest.slice(0, at), Number(oldest.slice(at + 1)));
    }
  }

  /** Drops the metric's chunks that start at or after the chunk holding `from` (the carry makes later chunks depend on earlier samples). */
  dropFrom(idHex: string, chunkFrom: number): void {
    for (const start of [...(this.byMetric.get(idHex) ?? [])]) if (start >= chunkFrom) this.remove(idHex, start);
  }

  dropMetric(idHex: string): void {
    this.dropFrom(idHex, -Infinity);
  }

  get size(): number {
    return this.entries.size;
  }

  private remove(idHex: string, chunkStart: number): void {
    const key = `${idHex}/${chunkStart}`;
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= entry.periods.bytes;
    const starts = this.byMetric.get(idHex)!;
    starts.delete(chunkStart);
    if (starts.size === 0) this.byMetric.delete(idHex);
  }
}
