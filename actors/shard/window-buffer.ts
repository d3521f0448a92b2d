// The open, not-yet-sealed samples of every (metric, data kind, block window) of a partition,
// as a table of columns indexed by buffer id (issue 30: with a million active series an open
// buffer must not be a handful of V8 objects). Plain doubles go as (ts, value) pairs into chunks
// of pooled typed memory (actors/shard/sample-chunks.ts); the first few, then every FREEZE_PAIRS
// of them are encoded as a numeric block (a part) into chunks of the same pool, so a buffer
// holding an hour of 10 s scrapes keeps ≈ 1 KiB, not 360 pairs of doubles (5.6 KiB). A buffer
// switches to plain arrays only once another value arrives (text, null, 64-bit integers) or a
// sample carries a generation.
import type { DataKind } from '../../model/ingest-record.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { Series } from '../../model/series.js';
import type { BufferValue, NumericValue } from '../../model/types.js';
import { seriesSource, type DenseSource } from '../../model/dense-series.js';
import { CHUNK_BYTES, CHUNK_PAIRS, NO_CHUNK, SampleChunks } from './sample-chunks.js';
import { decodeNumericBlock, decodeNumericBlockInto, encodeNumericBlock } from '../../model/codec/numeric-block.js';
import { grown, roomFor } from '../../model/typed-arrays.js';
import { ShardMetric } from './series-table.js';

export type { BufferValue };

/** An open buffer's row in its table; ids of closed buffers are reused. */
export type BufferId = number;
export const NO_BUFFER: BufferId = -1;

const KINDS: readonly DataKind[] = ['numeric', 'text', 'histogram'];
const KIND_CODE: Record<DataKind, number> = { numeric: 0, text: 1, histogram: 2 };

/**
 * Pairs a buffer holds as doubles before they are encoded as a part: 512 bytes of them at most
 * (encoding 32 samples costs ≈ 2–3 µs, once; a part of a collector's samples is 40–100 bytes).
 */
export const FREEZE_PAIRS = 32;
/**
 * A buffer's first part is made sooner, at this many pairs (two chunks): most buffers a node
 * holds are young, and 8 pairs encode in ≈ 30–40 bytes, so a series' first 12 samples take two
 * chunks instead of three.
 */
export const FIRST_PART_PAIRS = 8;

/** A buffer's samples once they are not all plain doubles. */
interface ArraySamples {
  ts: number[];
  values: BufferValue[];
  /** Kept only once a sample with a non-zero generation arrives. */
  gens: number[] | null;
}

const FREE = -1;
const OWNED_BY_OBJECT = -2;

/** The `metricAt` of buffers given no series table (tests): every owner is kept as an object. */
export function noSeriesTable(row: number): never {
  throw new Error(`BUG: an open buffer is owned by series-table row ${row}, but its buffers were given no table`);
}

export class BufferTable {
  private readonly chunks = new SampleChunks();
  private rows = 0;
  private kinds = new Uint8Array(0);
  private sizes = new Uint32Array(0);
  /** First and last chunk of a buffer in pair form; NO_CHUNK in array form or when empty. */
  private heads = new Int32Array(0);
  private tails = new Int32Array(0);
  /** The next open buffer of the same metric (OpenBuffers keeps each metric's as a list). */
  private nexts = new Int32Array(0);
  private windowStarts = new Float64Array(0);
  private firstSeqs = new Float64Array(0);
  private openedAts = new Float64Array(0);
  private lastAppendAts = new Float64Array(0);
  /**
   * A buffer's oldest pairs kept encoded: how many samples, and the chain of chunks holding the
   * parts (each a 2-byte little-endian length, then a numeric block) and how many bytes of it.
   */
  private frozen = new Uint32Array(0);
  private partHeads = new Int32Array(0);
  private partTails = new Int32Array(0);
  private partBytes = new Uint32Array(0);
  /**
   * The metric of each open buffer: its series-table row (no object kept per buffer: issue 30),
   * OWNED_BY_OBJECT for a metric no table holds (kept in `ownerObjects`), FREE for a free row.
   */
  private ownerRows = new Int32Array(0);
  private readonly ownerObjects = new Map<BufferId, MetricInfo>();
  private readonly arrays = new Map<BufferId, ArraySamples>();
  private readonly freeRows: BufferId[] = [];
  private scratchBytes = new Uint8Array(1024);
  private used = 0;

  /** `metricAt`: the metric of a series-table row (actors/shard/series-table.ts). */
  constructor(private readonly metricAt: (row: number) => MetricInfo = noSeriesTable) {}

  /** A new empty buffer. */
  create(owner: MetricInfo, kind: DataKind, windowStart: number, seq: number, now: number): BufferId {
    const b = this.freeRows.pop() ?? this.newRow();
    if (owner instanceof ShardMetric) this.ownerRows[b] = owner.row;
    else {
      this.ownerRows[b] = OWNED_BY_OBJECT;
      this.ownerObjects.set(b, owner);
    }
    this.kinds[b] = KIND_CODE[kind];
    this.sizes[b] = 0;
    this.heads[b] = NO_CHUNK;
    this.tails[b] = NO_CHUNK;
    this.nexts[b] = NO_BUFFER;
    this.windowStarts[b] = windowStart;
    this.firstSeqs[b] = seq;
    this.openedAts[b] = now;
    this.lastAppendAts[b] = now;
    this.clearParts(b);
    if (kind !== 'numeric') this.arrays.set(b, { ts: [], values: [], gens: null });
    this.used++;
    return b;
  }

  /** Lets go of a buffer's samples and its row. */
  free(b: BufferId): void {
    this.releaseChunks(b);
    this.arrays.delete(b);
    this.ownerRows[b] = FREE;
    this.ownerObjects.delete(b);
    this.freeRows.push(b);
    this.used--;
  }

  append(b: BufferId, ts: number, value: BufferValue, now: number, generation = 0): void {
    this.lastAppendAts[b] = now;
    const n = this.sizes[b]!;
    const arrays = this.arrays.get(b) ?? (typeof value === 'number' && generation === 0 ? undefined : this.toArrays(b));
    this.sizes[b] = n + 1;
    if (arrays === undefined) return this.appendPair(b, n, ts, value as number);
    if (generation !== 0 && arrays.gens === null) arrays.gens = new Array<number>(n).fill(0);
    arrays.ts.push(ts);
    arrays.values.push(value);
    arrays.gens?.push(generation);
  }

  /** The samples as appended (not normalised), in arrays a caller may keep. */
  series(b: BufferId): Series<BufferValue> {
    const arrays = this.arrays.get(b);
    if (arrays !== undefined) {
      const out: Series<BufferValue> = { ts: arrays.ts.slice(), values: arrays.values.slice() };
      if (arrays.gens !== null) out.gens = arrays.gens.slice();
      return out;
    }
    return this.pairs(b);
  }

  /** A numeric buffer's samples as a dense read takes them: in pair form, decoded straight into its arrays. */
  denseSource(b: BufferId): DenseSource {
    if (this.arrays.has(b)) return seriesSource(this.series(b) as Series<NumericValue>);
    return { count: this.sizes[b]!, into: (ts, values, at) => this.pairsInto(b, ts, values, at) };
  }

  /** `pairs` written into typed arrays from `at`: the new end, or -1 (a part that does not decode densely). */
  private pairsInto(b: BufferId, ts: Float64Array, values: Float64Array, at: number): number {
    // The parts' framing walked in place rather than through `parts`: no generator per buffer
    // read (a fetch of a thousand open series reads a thousand).
    const stream = this.frozen[b] === 0 ? null : this.partStream(b);
    for (let p = 0; stream !== null && p < stream.length; ) {
      const length = stream[p]! | (stream[p + 1]! << 8);
      at = decodeNumericBlockInto(stream.subarray(p + 2, p + 2 + length), ts, values, at);
      if (at < 0) return -1;
      p += 2 + length;
    }
    return this.rawPairsInto(b, this.sizes[b]! - this.frozen[b]!, ts, values, at);
  }

  /** A buffer's samples (in pair form: its parts, then its pairs), copied out. */
  private pairs(b: BufferId): { ts: number[]; values: BufferValue[] } {
    const n = this.sizes[b]!;
    const ts = new Array<number>(n);
    const values = new Array<BufferValue>(n);
    let i = 0;
    for (const bytes of this.parts(b)) {
      const part = decodeNumericBlock(bytes);
      for (let k = 0; k < part.ts.length; k++, i++) {
        ts[i] = part.ts[k]!;
        values[i] = part.values[k]!;
      }
    }
    this.rawPairsInto(b, n - i, ts, values, i);
    return { ts, values };
  }

  /** The buffer's encoded parts in order: views of the table's scratch, read before the next call. */
  private *parts(b: BufferId): Generator<Uint8Array> {
    if (this.frozen[b] === 0) return;
    const stream = this.partStream(b);
    for (let at = 0; at < stream.length; ) {
      const length = stream[at]! | (stream[at + 1]! << 8);
      yield stream.subarray(at + 2, at + 2 + length);
      at += 2 + length;
    }
  }

  /** The first `count` of the buffer's pairs not encoded yet, written from index `at` of `ts` and `values`; the index after them. */
  private rawPairsInto(b: BufferId, count: number, ts: number[] | Float64Array, values: BufferValue[] | Float64Array, at: number): number {
    let k = 0;
    for (let c = this.heads[b]!; c !== NO_CHUNK && k < count; c = this.chunks.next(c)) {
      const slab = this.chunks.slabOf(c);
      const base = this.chunks.offset(c);
      for (let j = 0; j < CHUNK_PAIRS && k < count; j++, k++) {
        ts[at] = slab[base + 2 * j]!;
        values[at++] = slab[base + 2 * j + 1]!;
      }
    }
    return at;
  }

  /**
   * Encodes the buffer's pairs (`count` of them) as one more part and gives their chunks back,
   * when they are stamped in whole milliseconds from 1970 on, none before the one before (what a
   * block's stamps can be); returns whether it did. A block holds every double's bits, -0 and
   * NaN included (test/shard/window-buffer.test.ts), so the part reads back as appended.
   */
  private freeze(b: BufferId, count: number): boolean {
    const ts = new Array<number>(count);
    const values = new Array<BufferValue>(count);
    this.rawPairsInto(b, count, ts, values, 0);
    for (let i = 0; i < count; i++) if (!Number.isSafeInteger(ts[i]) || ts[i]! < (i === 0 ? 0 : ts[i - 1]!)) return false;
    const part = encodeNumericBlock({ ts, values: values as number[] });
    if (part.length > 0xffff) return false;
    this.appendPart(b, part);
    this.chunks.freeChain(this.heads[b]!);
    this.heads[b] = NO_CHUNK;
    this.tails[b] = NO_CHUNK;
    this.frozen[b] += count;
    return true;
  }

  /** Appends a part (its length, then its bytes) to the buffer's chain of part bytes. */
  private appendPart(b: BufferId, part: Uint8Array): void {
    const framed = this.scratch(part.length + 2);
    framed[0] = part.length & 0xff;
    framed[1] = part.length >> 8;
    framed.set(part, 2);
    let used = this.partBytes[b]!;
    let tail = this.partTails[b]!;
    for (let from = 0; from < framed.length; ) {
      const at = used % CHUNK_BYTES;
      if (at === 0) {
        // The chain is empty or its last chunk full.
        const c = this.chunks.alloc();
        if (tail === NO_CHUNK) this.partHeads[b] = c;
        else this.chunks.link(tail, c);
        tail = c;
      }
      const n = Math.min(CHUNK_BYTES - at, framed.length - from);
      this.chunks.bytesOf(tail).set(framed.subarray(from, from + n), this.chunks.offset(tail) * 8 + at);
      from += n;
      used += n;
    }
    this.partTails[b] = tail;
    this.partBytes[b] = used;
  }

  /** The buffer's part bytes, one chunk after another: a copy in the table's scratch, read before the next call. */
  private partStream(b: BufferId): Uint8Array {
    const out = this.scratch(this.partBytes[b]!);
    let at = 0;
    for (let c = this.partHeads[b]!; c !== NO_CHUNK; c = this.chunks.next(c)) {
      const n = Math.min(CHUNK_BYTES, out.length - at);
      const base = this.chunks.offset(c) * 8;
      out.set(this.chunks.bytesOf(c).subarray(base, base + n), at);
      at += n;
    }
    return out;
  }

  /**
   * n bytes of memory reused by every part written or read (both synchronous, and a part's
   * samples decode into arrays of their own): a typed array of its own costs microseconds to make,
   * and a graceful stop reads the parts of every open buffer.
   */
  private scratch(n: number): Uint8Array {
    if (this.scratchBytes.length < n) this.scratchBytes = new Uint8Array(Math.max(n, 2 * this.scratchBytes.length));
    return this.scratchBytes.subarray(0, n);
  }

  /** Gives back the chunks of the buffer's pairs and parts: it holds no samples in the pool after. */
  private releaseChunks(b: BufferId): void {
    this.chunks.freeChain(this.heads[b]!);
    this.chunks.freeChain(this.partHeads[b]!);
    this.heads[b] = NO_CHUNK;
    this.tails[b] = NO_CHUNK;
    this.clearParts(b);
  }

  /** Forgets the buffer's parts (their chunks already given back, or never taken). */
  private clearParts(b: BufferId): void {
    this.frozen[b] = 0;
    this.partHeads[b] = NO_CHUNK;
    this.partTails[b] = NO_CHUNK;
    this.partBytes[b] = 0;
  }

  /** True when a sample is stamped before `ts`. */
  hasBefore(b: BufferId, ts: number): boolean {
    return this.series(b).ts.some((t) => t < ts);
  }

  /** Removes samples stamped before `ts` (a delete); appended order is kept. */
  dropBefore(b: BufferId, ts: number): void {
    const arrays = this.toArrays(b);
    let w = 0;
    for (let i = 0; i < arrays.ts.length; i++) {
      if (arrays.ts[i]! < ts) continue;
      arrays.ts[w] = arrays.ts[i]!;
      if (arrays.gens !== null) arrays.gens[w] = arrays.gens[i]!;
      arrays.values[w++] = arrays.values[i]!;
    }
    arrays.ts.length = w;
    arrays.values.length = w;
    if (arrays.gens !== null) arrays.gens.length = w;
    this.sizes[b] = w;
  }

  size(b: BufferId): number {
    return this.sizes[b]!;
  }

  kind(b: BufferId): DataKind {
    return KINDS[this.kinds[b]!]!;
  }

  windowStart(b: BufferId): number {
    return this.windowStarts[b]!;
  }

  /** Journal sequence of the oldest sample here: the journal must be kept from it on. */
  firstSeq(b: BufferId): number {
    return this.firstSeqs[b]!;
  }

  /** Wall-clock ms when the buffer was opened and last appended to. */
  openedAt(b: BufferId): number {
    return this.openedAts[b]!;
  }

  lastAppendAt(b: BufferId): number {
    return this.lastAppendAts[b]!;
  }

  owner(b: BufferId): MetricInfo {
    const row = this.ownerRows[b]!;
    return row >= 0 ? this.metricAt(row) : this.ownerObjects.get(b)!;
  }

  isOpen(b: BufferId): boolean {
    return b >= 0 && b < this.rows && this.ownerRows[b] !== FREE;
  }

  next(b: BufferId): BufferId {
    return this.nexts[b]!;
  }

  setNext(b: BufferId, next: BufferId): void {
    this.nexts[b] = next;
  }

  /** Every open buffer. */
  *open(): Generator<BufferId> {
    for (let b = 0; b < this.rows; b++) if (this.ownerRows[b] !== FREE) yield b;
  }

  /** Open buffers, and bytes of pooled sample memory (allocated, holding samples). */
  get figures(): { buffers: number; bytes: { allocated: number; used: number } } {
    return { buffers: this.used, bytes: this.chunks.bytes };
  }

  private appendPair(b: BufferId, n: number, ts: number, value: number): void {
    // Pairs not encoded yet: the first FIRST_PART_PAIRS, then every FREEZE_PAIRS of them become a
    // part (tried again after FREEZE_PAIRS more when they could not be).
    let pairs = n - this.frozen[b]!;
    const due = n === FIRST_PART_PAIRS || (pairs > 0 && pairs % FREEZE_PAIRS === 0);
    if (due && this.freeze(b, pairs)) pairs = 0;
    const k = pairs % CHUNK_PAIRS;
    if (k === 0) {
      const c = this.chunks.alloc();
      if (this.tails[b] === NO_CHUNK) this.heads[b] = c;
      else this.chunks.link(this.tails[b]!, c);
      this.tails[b] = c;
    }
    const c = this.tails[b]!;
    const slab = this.chunks.slabOf(c);
    const at = this.chunks.offset(c) + 2 * k;
    slab[at] = ts;
    slab[at + 1] = value;
  }

  /** The buffer in array form, its pairs moved there. */
  private toArrays(b: BufferId): ArraySamples {
    let arrays = this.arrays.get(b);
    if (arrays !== undefined) return arrays;
    arrays = { ...this.pairs(b), gens: null };
    this.releaseChunks(b);
    this.arrays.set(b, arrays);
    return arrays;
  }

  private newRow(): BufferId {
    const b = this.rows++;
    if (b >= this.kinds.length) this.grow(roomFor(this.kinds.length, Math.max(64, b + 1)));
    return b;
  }

  private grow(cap: number): void {
    this.kinds = grown(this.kinds, cap);
    this.sizes = grown(this.sizes, cap);
    this.heads = grown(this.heads, cap);
    this.tails = grown(this.tails, cap);
    this.nexts = grown(this.nexts, cap);
    this.windowStarts = grown(this.windowStarts, cap);
    this.firstSeqs = grown(this.firstSeqs, cap);
    this.openedAts = grown(this.openedAts, cap);
    this.lastAppendAts = grown(this.lastAppendAts, cap);
    this.frozen = grown(this.frozen, cap);
    this.partHeads = grown(this.partHeads, cap);
    this.partTails = grown(this.partTails, cap);
    this.partBytes = grown(this.partBytes, cap);
    // Rows past `rows` are never read (create sets a row's owner): the new room is left unfilled.
    this.ownerRows = grown(this.ownerRows, cap);
  }
}
