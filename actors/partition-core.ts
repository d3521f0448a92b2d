// One partition's data: open buffers per metric, sealing them into compressed blocks,
// and reading a metric back from blocks plus buffers. Only the partition actor calls
// this, one message at a time, so nothing here races with itself.
import { conflictResolver, type ConflictResolver } from '../model/conflict.js';
import type { FerriteConfig } from '../model/config.js';
import type { DataKind, IngestRecord } from '../model/ingest-record.js';
import { concatSeries, normalizeLastWins, normalizeNumeric, sliceSeries, type Series } from '../model/series.js';
import type { NumericValue } from '../model/types.js';
import { blockKey, blockKeyFloor, blockWindowOf, CF, encodeU64, sealSeqKey } from '../storage/keys.js';
import type { Store } from '../storage/rocks.js';
import { blockHeader, LAYOUT } from './block-store.js';
import type { MetricInfo } from './metric-info.js';
import { MetricBuffers, type BufferValue, type WindowBuffer } from './window-buffer.js';

export interface PartitionDeps {
  index: number;
  store: Store;
  config: FerriteConfig;
  /** Seal sequence to start from (persisted per partition; see storage/keys.ts). */
  sealSeq: number;
  now: () => number;
}

export class PartitionCore {
  private readonly metrics = new Map<string, { info: MetricInfo; buffers: MetricBuffers }>();
  private readonly resolve: ConflictResolver;
  private sealSeq: number;

  constructor(private readonly deps: PartitionDeps) {
    this.resolve = conflictResolver(deps.config.conflictResolver);
    this.sealSeq = deps.sealSeq;
  }

  get span(): number {
    return this.deps.config.blockSpanMs;
  }

  /** Appends a journaled request's records; returns true when a buffer filled up. */
  apply(seq: number, records: readonly IngestRecord<MetricInfo>[]): boolean {
    const now = this.deps.now();
    const span = this.span;
    const max = this.deps.config.maxBlockSamples;
    let full = false;
    for (const r of records) {
      const buffers = this.buffersOf(r.metric);
      const windowStart = r.ts - (r.ts % span);
      const buffer = buffers.bufferFor(r.kind, windowStart, seq, now);
      buffer.append(r.ts, r.value as BufferValue, now);
      if (buffer.size >= max) full = true;
    }
    return full;
  }

  /** Seals the buffers that are due (full, window ended and quiet, or too old). */
  async sealDue(): Promise<void> {
    const now = this.deps.now();
    const { maxBlockSamples, sealQuietMs, maxBufferAgeMs } = this.deps.config;
    await this.seal((b) => {
      if (b.size >= maxBlockSamples) return true;
      if (now - b.openedAt >= maxBufferAgeMs) return true;
      return b.windowStart + this.span + sealQuietMs <= now && now - b.lastAppendAt >= sealQuietMs;
    });
  }

  async sealAll(): Promise<void> {
    await this.seal(() => true);
  }

  /** The oldest journal sequence any open buffer still depends on (Infinity when none). */
  lowWater(): number {
    let low = Infinity;
    for (const { buffers } of this.metrics.values()) {
      for (const b of buffers.windows.values()) if (b.firstSeq < low) low = b.firstSeq;
    }
    return low;
  }

  /** Every sample of `kind` with start <= ts < end, one per timestamp, in time order. */
  async read(metric: MetricInfo, kind: DataKind, start: number, end: number): Promise<Series<BufferValue>> {
    const parts = await this.readBlocks(metric, kind, start, end);
    const open = this.metrics.get(metric.idHex)?.buffers.overlapping(kind, start, end, this.span) ?? [];
    for (const b of open.sort((x, y) => x.windowStart - y.windowStart)) parts.push({ ts: b.ts, values: b.values });
    return sliceSeries(this.normalize(kind, concatSeries(parts)), start, end);
  }

  /**
   * Reads whole windows before `before`'s window, newest first, until `enough` says the
   * samples gathered so far suffice. Used by the text lead, which looks back an unknown
   * distance. Open buffers join in window order, so the gathered samples never have a gap.
   */
  async readBackwards(
    metric: MetricInfo,
    kind: DataKind,
    before: number,
    enough: (s: Series<BufferValue>) => boolean,
  ): Promise<Series<BufferValue>> {
    const limit = before - (before % this.span);
    const layout = LAYOUT[kind];
    const open = (this.metrics.get(metric.idHex)?.buffers.overlapping(kind, 0, limit, this.span) ?? []).sort(
      (x, y) => y.windowStart - x.windowStart,
    );
    const windows: Series<BufferValue>[] = [];
    let upper = limit;
    // Adds everything from window `from` up to the last one added, and says if that suffices.
    const addDownTo = (from: number, sealed: Series<BufferValue>[]): boolean => {
      const parts = [...sealed];
      while (open.length > 0 && open[0]!.windowStart >= from) {
        const b = open.shift()!;
        parts.push({ ts: b.ts, values: b.values });
      }
      upper = from;
      if (parts.length > 0) windows.unshift(this.normalize(kind, concatSeries(parts)));
      return enough(this.normalize(kind, concatSeries(windows)));
    };
    let current: { window: number; parts: Series<BufferValue>[] } | null = null;
    let done = false;
    const scan = this.deps.store.scan(layout.cf, {
      gte: blockKeyFloor(metric.id, 0),
      lt: blockKeyFloor(metric.id, limit),
      reverse: true,
    });
    for await (const { key, value } of scan) {
      const window = blockWindowOf(key);
      if (current !== null && current.window !== window) {
        if (addDownTo(current.window, current.parts)) {
          done = true;
          break;
        }
        current = null;
      }
      current ??= { window, parts: [] };
      current.parts.unshift(layout.decode(value));
    }
    if (!done && current !== null) done = addDownTo(current.window, current.parts);
    if (!done && upper > 0) addDownTo(0, []);
    return this.normalize(kind, concatSeries(windows));
  }

  private normalize(kind: DataKind, s: Series<BufferValue>): Series<BufferValue> {
    if (kind === 'numeric') return normalizeNumeric(s as Series<NumericValue>, this.resolve) as Series<BufferValue>;
    return normalizeLastWins(s);
  }

  private async readBlocks(metric: MetricInfo, kind: DataKind, start: number, end: number): Promise<Series<BufferValue>[]> {
    const layout = LAYOUT[kind];
    const parts: Series<BufferValue>[] = [];
    const scan = this.deps.store.scan(layout.cf, {
      gte: blockKeyFloor(metric.id, start - (start % this.span)),
      lt: blockKeyFloor(metric.id, Math.min(end, Number.MAX_SAFE_INTEGER)),
    });
    for await (const { value } of scan) {
      const head = blockHeader(value);
      if (head.lastTs < start || head.firstTs >= end) continue;
      parts.push(layout.decode(value));
    }
    return parts;
  }

  private buffersOf(metric: MetricInfo): MetricBuffers {
    let entry = this.metrics.get(metric.idHex);
    if (entry === undefined) {
      entry = { info: metric, buffers: new MetricBuffers() };
      this.metrics.set(metric.idHex, entry);
    }
    return entry.buffers;
  }

  private async seal(due: (b: WindowBuffer) => boolean): Promise<void> {
    const batch = this.deps.store.batch();
    const sealed: { buffers: MetricBuffers; buffer: WindowBuffer }[] = [];
    let seq = this.sealSeq;
    try {
      for (const { info, buffers } of this.metrics.values()) {
        for (const buffer of buffers.windows.values()) {
          if (!due(buffer)) continue;
          const layout = LAYOUT[buffer.kind];
          const samples = this.normalize(buffer.kind, { ts: buffer.ts, values: buffer.values });
          batch.put(layout.cf, blockKey(info.id, buffer.windowStart, ++seq), layout.encode(samples));
          sealed.push({ buffers, buffer });
        }
      }
    } catch (error) {
      batch.discard();
      throw error;
    }
    if (sealed.length === 0) return;
    batch.put(CF.state, sealSeqKey(this.deps.index), encodeU64(seq));
    await batch.write();
    this.sealSeq = seq;
    for (const { buffers, buffer } of sealed) buffers.remove(buffer);
    for (const [idHex, entry] of this.metrics) if (entry.buffers.windows.size === 0) this.metrics.delete(idHex);
  }
}

