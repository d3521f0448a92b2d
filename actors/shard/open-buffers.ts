// One partition's open (not yet sealed) buffers, indexed for the write path and for
// checkpoints. A checkpoint must not visit every open buffer: with a million active series
// that would be a million checks a second. So buffers sit in a schedule keyed by the
// earliest time they can be due, full buffers in a list, and the journal low-water mark
// comes from a count of open buffers per first journal sequence.
import type { DataKind } from '../../model/ingest-record.js';
import type { MetricInfo, MetricRef } from '../../model/metric-info.js';
import { MetricBuffers, WindowBuffer } from './window-buffer.js';

/** A metric with open buffers. */
export interface MetricState {
  info: MetricRef;
  /** The metric object the write path looks this state up by (null: only by id). */
  key: MetricInfo | null;
  buffers: MetricBuffers;
  /** Activity slice of the last sample noted for this metric (skips noting the same slice again). */
  lastSlice: number;
}

export interface SealRules {
  spanMs: number;
  maxBlockSamples: number;
  sealQuietMs: number;
  maxBufferAgeMs: number;
}

interface Scheduled {
  at: number;
  state: MetricState;
  buffer: WindowBuffer;
}

export class OpenBuffers {
  private readonly byId = new Map<string, MetricState>();
  /** The same states by metric object: the write path's lookup, no string hashing. */
  private readonly byInfo = new Map<MetricInfo, MetricState>();
  /** Open buffers per first journal sequence. */
  private readonly seqs = new Map<number, number>();
  private readonly schedule = new MinHeap<Scheduled>();
  private full: Scheduled[] = [];

  constructor(private readonly rules: SealRules) {}

  get(idHex: string): MetricState | undefined {
    return this.byId.get(idHex);
  }

  /** The metric's state, created on its first sample. */
  stateOf(metric: MetricInfo): MetricState {
    let state = this.byInfo.get(metric);
    if (state !== undefined) return state;
    state = this.byId.get(metric.idHex);
    if (state === undefined) {
      state = { info: metric, key: metric, buffers: new MetricBuffers(), lastSlice: -1 };
      this.byId.set(metric.idHex, state);
    } else {
      if (state.key !== null) this.byInfo.delete(state.key);
      state.key = metric;
    }
    this.byInfo.set(metric, state);
    return state;
  }

  /** The open buffer for (kind, window), created and scheduled when new. */
  bufferFor(state: MetricState, kind: DataKind, windowStart: number, seq: number, now: number): WindowBuffer {
    const before = state.buffers.size;
    const buffer = state.buffers.bufferFor(kind, windowStart, seq, now);
    if (state.buffers.size !== before) {
      this.seqs.set(seq, (this.seqs.get(seq) ?? 0) + 1);
      this.schedule.push({ at: this.earliestDue(buffer), state, buffer });
    }
    return buffer;
  }

  /** Marks a buffer that reached the block size for the next seal. */
  filled(state: MetricState, buffer: WindowBuffer): void {
    this.full.push({ at: 0, state, buffer });
  }

  /**
   * Buffers due now (full, window ended and quiet, or too old), each once, still open; at
   * most `limit` of the scheduled ones (a million windows ending at once are sealed over a
   * few checkpoints, not in one batch that holds the partition).
   */
  due(now: number, limit = Infinity): Scheduled[] {
    const out = new Set<WindowBuffer>();
    const picked: Scheduled[] = [];
    const take = (s: Scheduled) => {
      if (s.buffer.closed || out.has(s.buffer)) return;
      out.add(s.buffer);
      picked.push(s);
    };
    for (const s of this.full) if (s.buffer.size >= this.rules.maxBlockSamples) take(s);
    this.full = [];
    while (this.schedule.size > 0 && this.schedule.peek()!.at <= now && picked.length < limit) {
      const s = this.schedule.pop()!;
      if (s.buffer.closed) continue;
      if (this.isDue(s.buffer, now)) take(s);
      else this.schedule.push({ ...s, at: this.nextCheck(s.buffer, now) });
    }
    return picked;
  }

  /** Every open buffer (shutdown, explicit flush). */
  *all(): Generator<Scheduled> {
    for (const state of this.byId.values()) for (const buffer of state.buffers.windows()) yield { at: 0, state, buffer };
  }

  /** Closes a sealed or emptied buffer; forgets the metric when it has none left. */
  close(state: MetricState, buffer: WindowBuffer): void {
    if (buffer.closed) return;
    buffer.closed = true;
    buffer.release();
    state.buffers.remove(buffer);
    const n = (this.seqs.get(buffer.firstSeq) ?? 1) - 1;
    if (n === 0) this.seqs.delete(buffer.firstSeq);
    else this.seqs.set(buffer.firstSeq, n);
    if (state.buffers.size === 0) this.forget(state);
  }

  /** Drops a metric and its buffers (full delete). */
  drop(idHex: string): void {
    const state = this.byId.get(idHex);
    if (state === undefined) return;
    for (const b of [...state.buffers.windows()]) this.close(state, b);
    this.forget(state);
  }

  /** The oldest journal sequence an open buffer depends on (Infinity when none). */
  lowWater(): number {
    let low = Infinity;
    for (const seq of this.seqs.keys()) if (seq < low) low = seq;
    return low;
  }

  private forget(state: MetricState): void {
    this.byId.delete(state.info.idHex);
    if (state.key !== null) this.byInfo.delete(state.key);
  }

  private isDue(b: WindowBuffer, now: number): boolean {
    const r = this.rules;
    if (b.size >= r.maxBlockSamples || now - b.openedAt >= r.maxBufferAgeMs) return true;
    return b.windowStart + r.spanMs + r.sealQuietMs <= now && now - b.lastAppendAt >= r.sealQuietMs;
  }

  private earliestDue(b: WindowBuffer): number {
    return Math.min(b.windowStart + this.rules.spanMs + this.rules.sealQuietMs, b.openedAt + this.rules.maxBufferAgeMs);
  }

  /** When a buffer checked too early can next be due. */
  private nextCheck(b: WindowBuffer, now: number): number {
    const r = this.rules;
    const quiet = Math.max(b.windowStart + r.spanMs, b.lastAppendAt) + r.sealQuietMs;
    return Math.max(now + 1, Math.min(quiet, b.openedAt + r.maxBufferAgeMs));
  }
}

/** A binary min-heap on `at`. */
class MinHeap<T extends { at: number }> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]!.at <= item.at) break;
      a[i] = a[parent]!;
      i = parent;
    }
    a[i] = item;
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const child = r < a.length && a[r]!.at < a[l]!.at ? r : l;
      if (a[child]!.at >= last.at) break;
      a[i] = a[child]!;
      i = child;
    }
    a[i] = last;
    return top;
  }
}
