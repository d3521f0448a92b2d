// One partition's open (not yet sealed) buffers, indexed for the write path and for
// checkpoints. A checkpoint must not visit every open buffer: with a million active series
// that would be a million checks a second. So buffers sit in a schedule keyed by the
// earliest time they can be due, full buffers in a list, and the journal low-water mark
// comes from a count of open buffers per first journal sequence. A metric's open buffers are a
// list threaded through the buffer table, headed on its MetricInfo (`openHead`), so looking up a
// known metric's buffer takes no map.
import type { DataKind } from '../../model/ingest-record.js';
import type { MetricInfo, MetricRef } from '../../model/metric-info.js';
import { IndexedMinHeap } from './indexed-heap.js';
import { BufferTable, NO_BUFFER, noSeriesTable, type BufferId } from './window-buffer.js';

export { NO_BUFFER, type BufferId };

export interface SealRules {
  spanMs: number;
  maxBlockSamples: number;
  sealQuietMs: number;
  maxBufferAgeMs: number;
}

/** The shard's metrics as its open buffers ask for them (actors/shard/series-table.ts). */
export interface SeriesLookup {
  /** The MetricInfo of a metric named only by id (a MetricRef rebuilt from storage), whose `openHead` says where its buffers are. */
  find(idHex: string): MetricInfo | undefined;
  /** The metric of a series-table row, which a buffer keeps as its owner. */
  metricAt(row: number): MetricInfo;
}

/** Buffers of metrics no series table holds (tests): their owners are kept as objects. */
const NO_SERIES: SeriesLookup = { find: () => undefined, metricAt: noSeriesTable };

export class OpenBuffers {
  readonly table: BufferTable;
  /** Open buffers per first journal sequence. */
  private readonly seqs = new Map<number, number>();
  private readonly schedule = new IndexedMinHeap();
  private full: BufferId[] = [];

  constructor(
    private readonly rules: SealRules,
    private readonly series: SeriesLookup = NO_SERIES,
  ) {
    this.table = new BufferTable((row) => series.metricAt(row));
  }

  /** The open buffer for (kind, window) of the metric, created and scheduled when new. */
  bufferFor(metric: MetricInfo, kind: DataKind, windowStart: number, seq: number, now: number): BufferId {
    const t = this.table;
    for (let b = metric.openHead; b !== NO_BUFFER; b = t.next(b)) if (t.windowStart(b) === windowStart && t.kind(b) === kind) return b;
    const b = t.create(metric, kind, windowStart, seq, now);
    // Newest first: appends go to the newest window.
    t.setNext(b, metric.openHead);
    metric.openHead = b;
    this.seqs.set(seq, (this.seqs.get(seq) ?? 0) + 1);
    this.schedule.push(b, this.earliestDue(b));
    return b;
  }

  /** Marks a buffer that reached the block size for the next seal. */
  filled(b: BufferId): void {
    this.full.push(b);
  }

  /** The metric's open buffers of `kind` whose window may hold samples in [start, end), oldest window first. */
  overlapping(metric: MetricRef, kind: DataKind, start: number, end: number): BufferId[] {
    const t = this.table;
    const span = this.rules.spanMs;
    const out: BufferId[] = [];
    for (const b of this.of(metric)) if (t.kind(b) === kind && t.windowStart(b) < end && t.windowStart(b) + span > start) out.push(b);
    return out.sort((x, y) => t.windowStart(x) - t.windowStart(y));
  }

  /** Window starts of the metric's open numeric buffers. */
  numericWindows(metric: MetricRef): number[] {
    return this.of(metric)
      .filter((b) => this.table.kind(b) === 'numeric')
      .map((b) => this.table.windowStart(b));
  }

  /**
   * Buffers due now (full, window ended and quiet, or too old), each once, still open; at
   * most `limit` of the scheduled ones (a million windows ending at once are sealed over a
   * few checkpoints, not in one batch that holds the partition).
   */
  due(now: number, limit = Infinity): BufferId[] {
    const t = this.table;
    const picked = new Set<BufferId>();
    // A full buffer closed since it was listed may have handed its row to a new buffer: size tells.
    for (const b of this.full) if (t.isOpen(b) && t.size(b) >= this.rules.maxBlockSamples) picked.add(b);
    this.full = [];
    for (const b of picked) this.schedule.remove(b);
    while (this.schedule.size > 0 && this.schedule.peekKey() <= now && picked.size < limit) {
      const b = this.schedule.pop();
      if (this.isDue(b, now)) picked.add(b);
      else this.schedule.push(b, this.nextCheck(b, now));
    }
    return [...picked];
  }

  /** Every open buffer (shutdown, explicit flush). */
  all(): BufferId[] {
    return [...this.table.open()];
  }

  /** Closes a sealed or emptied buffer and frees its row. */
  close(b: BufferId): void {
    const t = this.table;
    const metric = t.owner(b);
    if (metric.openHead === b) metric.openHead = t.next(b);
    else for (let p = metric.openHead; p !== NO_BUFFER; p = t.next(p)) if (t.next(p) === b) t.setNext(p, t.next(b));
    const seq = t.firstSeq(b);
    const n = (this.seqs.get(seq) ?? 1) - 1;
    if (n === 0) this.seqs.delete(seq);
    else this.seqs.set(seq, n);
    this.schedule.remove(b);
    t.free(b);
  }

  /** Drops a metric's buffers (full delete). */
  drop(metric: MetricRef): void {
    for (const b of this.of(metric)) this.close(b);
  }

  /** The oldest journal sequence an open buffer depends on (Infinity when none). */
  lowWater(): number {
    let low = Infinity;
    for (const seq of this.seqs.keys()) if (seq < low) low = seq;
    return low;
  }

  /** The metric's open buffers, newest window first. */
  private of(metric: MetricRef): BufferId[] {
    const info = 'openHead' in metric ? (metric as MetricInfo) : this.series.find(metric.idHex);
    const out: BufferId[] = [];
    for (let b = info?.openHead ?? NO_BUFFER; b !== NO_BUFFER; b = this.table.next(b)) out.push(b);
    return out;
  }

  private isDue(b: BufferId, now: number): boolean {
    const r = this.rules;
    const t = this.table;
    if (t.size(b) >= r.maxBlockSamples || now - t.openedAt(b) >= r.maxBufferAgeMs) return true;
    return t.windowStart(b) + r.spanMs + r.sealQuietMs <= now && now - t.lastAppendAt(b) >= r.sealQuietMs;
  }

  private earliestDue(b: BufferId): number {
    const t = this.table;
    return Math.min(t.windowStart(b) + this.rules.spanMs + this.rules.sealQuietMs, t.openedAt(b) + this.rules.maxBufferAgeMs);
  }

  /** When a buffer checked too early can next be due. */
  private nextCheck(b: BufferId, now: number): number {
    const r = this.rules;
    const t = this.table;
    const quiet = Math.max(t.windowStart(b) + r.spanMs, t.lastAppendAt(b)) + r.sealQuietMs;
    return Math.max(now + 1, Math.min(quiet, t.openedAt(b) + r.maxBufferAgeMs));
  }
}
