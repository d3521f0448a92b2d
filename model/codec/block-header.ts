// The header every block starts with, and the parts all block formats share: the null
// bitmap and the delta-of-delta timestamp stream.
import { ByteReader, ByteWriter, unzigzag, zigzag } from './bytes.js';

/** The first byte of a block. The enum only grows: a value, once written, keeps its meaning. */
export const BlockFormat = {
  NumericFloat: 1,
  /** Values that are exact decimals m / 10^k: a scale byte k, then deltas of m. */
  NumericDecimal: 2,
  NumericBigint: 3,
  Text: 4,
  /** Exact decimals m · 10^−k with the mantissas packed (integer-stream.ts); replaces 2 for new blocks. */
  NumericPacked: 5,
} as const;
export type BlockFormat = (typeof BlockFormat)[keyof typeof BlockFormat];

/** The most samples a block may hold (the largest `maxBlockSamples`, and merged blocks). */
export const MAX_BLOCK_SAMPLES = 1 << 20;

const FLAG_HAS_NULLS = 1;
/** Numeric blocks: one zigzag varint generation per sample follows the null bitmap. */
const FLAG_HAS_GENERATIONS = 2;
/** Every timestamp is a whole second: first, span and the timestamp tokens count seconds. */
const FLAG_SECONDS = 4;

export interface BlockHeader {
  version: BlockFormat;
  count: number;
  firstTs: number;
  lastTs: number;
}

export function writeHeader(w: ByteWriter, format: BlockFormat, ts: readonly number[], present: boolean[] | null, gens: readonly number[] | null = null): void {
  w.byte(format);
  w.varint(ts.length);
  if (ts.length === 0) return;
  // Collectors mostly stamp whole seconds; counted in seconds, the first timestamp, the span and
  // the step take about 5 bytes fewer a block. Numeric blocks only (text keeps its exact bytes).
  const unit = format !== BlockFormat.Text && ts.every((t) => t % 1000 === 0) ? 1000 : 1;
  w.varint(ts[0]! / unit);
  w.varint((ts[ts.length - 1]! - ts[0]!) / unit);
  const withGens = gens !== null && gens.some((g) => g !== 0);
  w.byte((present === null ? 0 : FLAG_HAS_NULLS) | (withGens ? FLAG_HAS_GENERATIONS : 0) | (unit === 1000 ? FLAG_SECONDS : 0));
  if (present !== null) writeBitmap(w, present);
  if (withGens) for (const g of gens) w.varint(zigzag(g));
  writeTimestamps(w, ts, unit);
}

export interface DecodedHeader extends BlockHeader {
  /** null when every value is present. */
  present: boolean[] | null;
  /** null when every sample's generation is 0. */
  gens: number[] | null;
  ts: number[];
}

export function readHeader(r: ByteReader): DecodedHeader {
  const f = readHeaderFields(r);
  const ts = new Array<number>(f.count);
  if (f.count > 0) readTimestampsInto(r, f, ts, 0);
  return { version: f.version, count: f.count, firstTs: f.firstTs, lastTs: f.lastTs, present: f.present, gens: f.gens, ts };
}

/** A header up to its timestamps: what `readTimestampsInto` needs to read them where the caller wants. */
export interface HeaderFields extends BlockHeader {
  present: boolean[] | null;
  gens: number[] | null;
  /** 1000 when the stamps are counted in seconds, else 1. */
  unit: number;
}

export function readHeaderFields(r: ByteReader): HeaderFields {
  const version = r.byte() as BlockFormat;
  if (version < BlockFormat.NumericFloat || version > BlockFormat.NumericPacked) r.fail(`unknown block format ${version}`);
  const count = r.varint();
  if (count === 0) return { version, count, firstTs: 0, lastTs: 0, present: null, gens: null, unit: 1 };
  // Before format 5 every sample cost at least one bit, which bounded a corrupt count; a packed
  // constant block costs nothing per sample, so its count is bounded by the largest block sealed.
  if (count > r.buf.length * 8 && (version !== BlockFormat.NumericPacked || count > MAX_BLOCK_SAMPLES)) r.fail(`count ${count} cannot fit in ${r.buf.length} bytes`);
  const first = r.varint();
  const span = r.varint();
  const flags = r.byte();
  const unit = flags & FLAG_SECONDS ? 1000 : 1;
  const present = flags & FLAG_HAS_NULLS ? readBitmap(r, count) : null;
  const gens = flags & FLAG_HAS_GENERATIONS ? Array.from({ length: count }, () => unzigzag(r.varint())) : null;
  return { version, count, firstTs: first * unit, lastTs: (first + span) * unit, present, gens, unit };
}

/** The header's `count` timestamps, in ms, into out[at..] (a JS array or, for rollup reads, a Float64Array). */
export function readTimestampsInto(r: ByteReader, f: HeaderFields, out: number[] | Float64Array, at: number): void {
  const last = readTimestamps(r, f.count, f.firstTs / f.unit, f.unit, out, at);
  if (last !== f.lastTs / f.unit) r.fail('timestamps disagree with the header');
}

/** Reads only the fixed part of the header, without decoding the body. */
export function peekHeader(bytes: Uint8Array): BlockHeader {
  const r = new ByteReader(bytes);
  const version = r.byte() as BlockFormat;
  const count = r.varint();
  if (count === 0) return { version, count, firstTs: 0, lastTs: 0 };
  const first = r.varint();
  const span = r.varint();
  const unit = r.byte() & FLAG_SECONDS ? 1000 : 1;
  return { version, count, firstTs: first * unit, lastTs: (first + span) * unit };
}

function writeBitmap(w: ByteWriter, present: boolean[]): void {
  for (let i = 0; i < present.length; i += 8) {
    let b = 0;
    for (let j = 0; j < 8 && i + j < present.length; j++) if (present[i + j]) b |= 0x80 >>> j;
    w.byte(b);
  }
}

function readBitmap(r: ByteReader, count: number): boolean[] {
  const bytes = r.bytes(Math.ceil(count / 8));
  const present = new Array<boolean>(count);
  for (let i = 0; i < count; i++) present[i] = (bytes[i >>> 3]! & (0x80 >>> (i & 7))) !== 0;
  return present;
}

// Timestamps after the first: zigzag delta-of-delta tokens. A token's low bit says what
// it is: 0 = one delta-of-delta (value << 1), 1 = a run of N zero delta-of-deltas
// (N << 1 | 1), so a regular series costs a couple of bytes in all.
function writeTimestamps(w: ByteWriter, ts: readonly number[], unit: number): void {
  let prevDelta = 0;
  let zeros = 0;
  for (let i = 1; i < ts.length; i++) {
    const delta = (ts[i]! - ts[i - 1]!) / unit;
    const dod = delta - prevDelta;
    prevDelta = delta;
    if (dod === 0) {
      zeros++;
      continue;
    }
    if (zeros > 0) w.varint(zeros * 2 + 1);
    zeros = 0;
    w.varint(zigzag(dod) * 2);
  }
  if (zeros > 0) w.varint(zeros * 2 + 1);
}

/** Stamps in units of `unit` ms, written in ms; returns the last in units (the header's check). */
function readTimestamps(r: ByteReader, count: number, first: number, unit: number, ts: number[] | Float64Array, at: number): number {
  const end = at + count;
  let t = first;
  ts[at] = t * unit;
  let delta = 0;
  let i = at + 1;
  while (i < end) {
    const token = r.varint();
    if (token % 2 === 1) {
      const run = (token - 1) / 2;
      if (run === 0 || run > end - i) r.fail(`timestamp run of ${run} overflows the block`);
      for (const stop = i + run; i < stop; i++) ts[i] = (t += delta) * unit;
    } else {
      delta += unzigzag(token / 2);
      ts[i++] = (t += delta) * unit;
    }
  }
  return t;
}
