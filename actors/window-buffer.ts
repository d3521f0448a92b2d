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
  /** Sealed or emptied: no longer among its metric's open buffers. */
  closed = false;

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

/** All open buffers of one metric, by data kind and window start. */
export class MetricBuffers {
  private readonly byKind: Record<DataKind, Map<number, WindowBuffer>> = { numeric: new Map(), text: new Map(), histogram: new Map() };
  /** The numeric buffer appended to last: samples of a metric mostly arrive in one window. */
  private lastNumeric: WindowBuffer | null = null;

  bufferFor(kind: DataKind, windowStart: number, seq: number, now: number): WindowBuffer {
    if (kind === 'numeric' && this.lastNumeric !== null && this.lastNumeric.windowStart === windowStart) return this.lastNumeric;
    const windows = this.byKind[kind];
    let buffer = windows.get(windowStart);
    if (buffer === undefined) {
      buffer = new WindowBuffer(kind, windowStart, seq, now);
      windows.set(windowStart, buffer);
    }
    if (kind === 'numeric') this.lastNumeric = buffer;
    return buffer;
  }

  remove(buffer: WindowBuffer): void {
    const windows = this.byKind[buffer.kind];
    if (windows.get(buffer.windowStart) === buffer) windows.delete(buffer.windowStart);
    if (this.lastNumeric === buffer) this.lastNumeric = null;
  }

  /** Every open buffer. */
  *windows(): Generator<WindowBuffer> {
    for (const windows of Object.values(this.byKind)) yield* windows.values();
  }

  get size(): number {
    return this.byKind.numeric.size + this.byKind.text.size + this.byKind.histogram.size;
  }

  /** Open buffers of `kind` whose window may hold samples in [start, end). */
  overlapping(kind: DataKind, start: number, end: number, span: number): WindowBuffer[] {
    const out: WindowBuffer[] = [];
    for (const b of this.byKind[kind].values()) if (b.windowStart < end && b.windowStart + span > start) out.push(b);
    return out;
  }

  /** Window starts of the open numeric buffers. */
  numericWindows(): number[] {
    return [...this.byKind.numeric.keys()];
  }
}
