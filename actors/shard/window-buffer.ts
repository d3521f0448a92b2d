// The open, not-yet-sealed samples of one metric, one data kind and one block window.
// With a million active series an open buffer is mostly overhead, so a buffer of plain
// doubles keeps its samples interleaved (ts, value, ts, value…) in one small Float64Array,
// and switches to plain arrays only for other values (text, null, 64-bit integers).
import type { DataKind } from '../../model/ingest-record.js';
import type { Series } from '../../model/series.js';
import type { BufferValue } from '../../model/types.js';

export type { BufferValue };

/** Pairs a new buffer has room for: most series get one sample per window at a time. */
const INITIAL_PAIRS = 2;

export class WindowBuffer {
  /** (ts, value) pairs while every value is a double; null once one is not. */
  private pairs: Float64Array | null;
  private ts: number[] | null = null;
  private values: BufferValue[] | null = null;
  /** Generations, kept only once a sample with a non-zero one arrives. */
  private gens: number[] | null = null;
  private n = 0;
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
    this.pairs = kind === 'numeric' ? new Float64Array(INITIAL_PAIRS * 2) : null;
    if (this.pairs === null) this.toArrays();
  }

  append(ts: number, value: BufferValue, now: number, generation = 0): void {
    this.lastAppendAt = now;
    if (this.pairs !== null && typeof value === 'number' && generation === 0) {
      if (this.n * 2 === this.pairs.length) this.growPairs();
      this.pairs[this.n * 2] = ts;
      this.pairs[this.n * 2 + 1] = value;
      this.n++;
      return;
    }
    if (this.pairs !== null) this.toArrays();
    if (generation !== 0 && this.gens === null) this.gens = new Array<number>(this.n).fill(0);
    this.ts!.push(ts);
    this.values!.push(value);
    this.gens?.push(generation);
    this.n++;
  }

  /**
   * Drops the samples of a buffer that was sealed or emptied. The seal schedule may hold on to a
   * closed buffer until its window's due time (minutes), and a full buffer's samples are the
   * bulk of a shard's memory under steady ingest.
   */
  release(): void {
    this.pairs = null;
    this.ts = [];
    this.values = [];
    this.gens = null;
    this.n = 0;
  }

  /** The samples as appended (not normalised); arrays a caller may keep. */
  series(): Series<BufferValue> {
    if (this.pairs !== null) {
      const ts = new Array<number>(this.n);
      const values = new Array<BufferValue>(this.n);
      for (let i = 0; i < this.n; i++) {
        ts[i] = this.pairs[i * 2]!;
        values[i] = this.pairs[i * 2 + 1]!;
      }
      return { ts, values };
    }
    return this.gens === null ? { ts: this.ts!.slice(), values: this.values!.slice() } : { ts: this.ts!.slice(), values: this.values!.slice(), gens: this.gens.slice() };
  }

  get size(): number {
    return this.n;
  }

  /** True when a sample is stamped before `ts`. */
  hasBefore(ts: number): boolean {
    for (let i = 0; i < this.n; i++) if (this.tsAt(i) < ts) return true;
    return false;
  }

  /** Removes samples stamped before `ts` (a delete); appended order is kept. */
  dropBefore(ts: number): void {
    this.toArrays();
    const t = this.ts!;
    const v = this.values!;
    let w = 0;
    for (let i = 0; i < this.n; i++) {
      if (t[i]! < ts) continue;
      t[w] = t[i]!;
      if (this.gens !== null) this.gens[w] = this.gens[i]!;
      v[w++] = v[i]!;
    }
    this.n = w;
    t.length = w;
    v.length = w;
    if (this.gens !== null) this.gens.length = w;
  }

  private tsAt(i: number): number {
    return this.pairs !== null ? this.pairs[i * 2]! : this.ts![i]!;
  }

  private growPairs(): void {
    const next = new Float64Array(this.pairs!.length * 2);
    next.set(this.pairs!);
    this.pairs = next;
  }

  /** Leaves the compact form (a value that is not a double arrived, or a delete trims). */
  private toArrays(): void {
    if (this.ts !== null) return;
    const { ts, values } = this.pairs === null ? { ts: [], values: [] } : this.series();
    this.ts = ts;
    this.values = values;
    this.pairs = null;
  }
}

/**
 * All open buffers of one metric. Nearly always a single numeric window is open, so that
 * one is held directly and a map is made only for more.
 */
export class MetricBuffers {
  private first: WindowBuffer | null = null;
  private more: Map<string, WindowBuffer> | null = null;

  bufferFor(kind: DataKind, windowStart: number, seq: number, now: number): WindowBuffer {
    const f = this.first;
    if (f !== null && f.windowStart === windowStart && f.kind === kind) return f;
    const key = `${kind}:${windowStart}`;
    let buffer = this.more?.get(key);
    if (buffer === undefined) {
      buffer = new WindowBuffer(kind, windowStart, seq, now);
      if (this.first === null) this.first = buffer;
      else (this.more ??= new Map()).set(key, buffer);
    }
    return buffer;
  }

  remove(buffer: WindowBuffer): void {
    if (this.first === buffer) {
      this.first = null;
      // Promote one of the others so the common lookup stays direct.
      const next = this.more?.entries().next();
      if (next !== undefined && !next.done) {
        this.more!.delete(next.value[0]);
        this.first = next.value[1];
      }
    } else this.more?.delete(`${buffer.kind}:${buffer.windowStart}`);
    if (this.more?.size === 0) this.more = null;
  }

  /** Every open buffer. */
  *windows(): Generator<WindowBuffer> {
    if (this.first !== null) yield this.first;
    if (this.more !== null) yield* this.more.values();
  }

  get size(): number {
    return (this.first === null ? 0 : 1) + (this.more?.size ?? 0);
  }

  /** Open buffers of `kind` whose window may hold samples in [start, end). */
  overlapping(kind: DataKind, start: number, end: number, span: number): WindowBuffer[] {
    const out: WindowBuffer[] = [];
    for (const b of this.windows()) if (b.kind === kind && b.windowStart < end && b.windowStart + span > start) out.push(b);
    return out;
  }

  /** Window starts of the open numeric buffers. */
  numericWindows(): number[] {
    const out: number[] = [];
    for (const b of this.windows()) if (b.kind === 'numeric') out.push(b.windowStart);
    return out;
  }
}
