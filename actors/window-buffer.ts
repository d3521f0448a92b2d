// The open, not-yet-sealed samples of one metric, one data kind and one block window.
import type { DataKind } from '../model/ingest-record.js';
import type { Series } from '../model/series.js';
import type { NumericValue } from '../model/types.js';

export type BufferValue = NumericValue | string;

export class WindowBuffer {
  readonly ts: number[] = [];
  readonly values: BufferValue[] = [];
  /** Generations, kept only once a sample with a non-zero one arrives. */
  private gens: number[] | null = null;
  /** Journal sequence of the oldest sample here: the journal must be kept from it on. */
  readonly firstSeq: number;
  /** Wall-clock ms when the buffer was opened and last appended to. */
  readonly openedAt: number;
  lastAppendAt: number;

  constructor(
    readonly kind: DataKind,
    readonly windowStart: number,
    seq: number,
    now: number,
  ) {
    this.firstSeq = seq;
    this.openedAt = now;
    this.lastAppendAt = now;
  }

  append(ts: number, value: BufferValue, now: number, generation = 0): void {
    if (generation !== 0 && this.gens === null) this.gens = new Array<number>(this.ts.length).fill(0);
    this.ts.push(ts);
    this.values.push(value);
    this.gens?.push(generation);
    this.lastAppendAt = now;
  }

  /** The samples as appended (not normalised); shares the arrays. */
  series(): Series<BufferValue> {
    return this.gens === null ? { ts: this.ts, values: this.values } : { ts: this.ts, values: this.values, gens: this.gens };
  }

  get size(): number {
    return this.ts.length;
  }

  /** Removes samples stamped before `ts` (a delete); appended order is kept. */
  dropBefore(ts: number): void {
    let w = 0;
    for (let i = 0; i < this.ts.length; i++) {
      if (this.ts[i]! < ts) continue;
      this.ts[w] = this.ts[i]!;
      if (this.gens !== null) this.gens[w] = this.gens[i]!;
      this.values[w++] = this.values[i]!;
    }
    this.ts.length = w;
    this.values.length = w;
    if (this.gens !== null) this.gens.length = w;
  }
}

/** All open buffers of one metric, keyed by data kind and window start. */
export class MetricBuffers {
  readonly windows = new Map<string, WindowBuffer>();

  bufferFor(kind: DataKind, windowStart: number, seq: number, now: number): WindowBuffer {
    const key = `${kind}:${windowStart}`;
    let buffer = this.windows.get(key);
    if (buffer === undefined) {
      buffer = new WindowBuffer(kind, windowStart, seq, now);
      this.windows.set(key, buffer);
    }
    return buffer;
  }

  remove(buffer: WindowBuffer): void {
    const key = `${buffer.kind}:${buffer.windowStart}`;
    if (this.windows.get(key) === buffer) this.windows.delete(key);
  }

  /** Open buffers of `kind` whose window may hold samples in [start, end). */
  overlapping(kind: DataKind, start: number, end: number, span: number): WindowBuffer[] {
    const out: WindowBuffer[] = [];
    for (const b of this.windows.values()) {
      if (b.kind === kind && b.windowStart < end && b.windowStart + span > start) out.push(b);
    }
    return out;
  }
}
