// Numeric blocks: header + timestamps (block-header.ts), then the non-null values in one
// of three encodings chosen per block (docs/format/blocks.md). Decimal values are written as
// packed integers (format 5); format 2, their coding before, is still read.
import type { NumericValue } from '../types.js';
import { BitReader, BitWriter } from './bitstream.js';
import { BlockFormat, peekHeader, readHeader, readHeaderFields, readTimestampsInto, writeHeader, type BlockHeader } from './block-header.js';
import { BlockFormatError } from './errors.js';
import { bigUnzigzag, bigZigzag, ByteReader, ByteWriter, unzigzag, zigzag } from './bytes.js';
import { readIntegersInto, writeIntegers } from './integer-stream.js';

export interface NumericSamples {
  ts: number[];
  values: NumericValue[];
  /** Per-sample generations; absent when all are 0. */
  gens?: number[];
}

/** Scaled integers within ±2^51 delta-encode exactly in double arithmetic (deltas stay below 2^53). */
const INT_LIMIT = 2 ** 51;
/** Most decimal digits a decimal block keeps; values needing more go to the XOR codec. */
const MAX_SCALE = 12;
const POW10 = Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k);

export function encodeNumericBlock(samples: NumericSamples): Uint8Array {
  const { ts, values } = samples;
  // Most blocks are plain numbers: then they are their own defined values (no copy).
  const plain = allNumbers(values);
  const defined: (number | bigint)[] = plain ? (values as number[]) : [];
  let present: boolean[] | null = null;
  let anyBig = false;
  if (!plain) {
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v === null) {
        present ??= values.slice(0, i).map(() => true);
        present.push(false);
        continue;
      }
      present?.push(true);
      defined.push(v);
      if (typeof v === 'bigint') anyBig = true;
    }
  }
  const scaled = anyBig ? null : decimalScaled(defined as number[]);
  const format = anyBig ? BlockFormat.NumericBigint : scaled ? BlockFormat.NumericPacked : BlockFormat.NumericFloat;
  const w = scratch;
  try {
    writeHeader(w, format, ts, present, samples.gens ?? null);
    if (format === BlockFormat.NumericFloat) w.bytes(encodeXor(defined as number[]));
    else if (format === BlockFormat.NumericPacked) writePacked(w, scaled!);
    else writeBigDeltas(w, defined);
    return w.take();
  } finally {
    w.length = 0;
    // A merged block of many samples grows it: not kept at that size.
    if (w.raw.length > SCRATCH_KEPT_BYTES) scratch = new ByteWriter(SCRATCH_BYTES);
  }
}

function allNumbers(values: readonly NumericValue[]): values is number[] {
  for (let i = 0; i < values.length; i++) if (typeof values[i] !== 'number') return false;
  return true;
}

/** One writer for every block this thread encodes (blocks are encoded one at a time, synchronously). */
const SCRATCH_BYTES = 4096;
const SCRATCH_KEPT_BYTES = 256 * 1024;
let scratch = new ByteWriter(SCRATCH_BYTES);

export function decodeNumericBlock(bytes: Uint8Array): NumericSamples {
  const r = new ByteReader(bytes);
  const head = readHeader(r);
  if (head.version === BlockFormat.Text) r.fail('a text block is not a numeric block');
  const n = head.present === null ? head.count : head.present.filter(Boolean).length;
  let defined: (number | bigint)[];
  if (head.version === BlockFormat.NumericFloat) defined = decodeXor(new BitReader(bytes.subarray(r.pos), r.pos), n);
  else if (head.version === BlockFormat.NumericPacked) defined = readPacked(r, n);
  else if (head.version === BlockFormat.NumericDecimal) defined = readDecimals(r, n);
  else defined = readBigDeltas(r, n);
  let values: NumericValue[] = defined;
  if (head.present !== null) {
    values = new Array<NumericValue>(head.count);
    for (let i = 0, j = 0; i < head.count; i++) values[i] = head.present[i] ? defined[j++]! : null;
  }
  return head.gens === null ? { ts: head.ts, values } : { ts: head.ts, values, gens: head.gens };
}

/**
 * Appends the block's non-null samples to ts[at..] and values[at..] as doubles (a bigint as its
 * nearest double), for rollup math (model/dense-series.ts); returns the new end. Packed blocks
 * without nulls (what collectors' decimals seal into) decode straight into the arrays. Returns
 * -1, writing nothing, for a block with per-sample generations: its duplicates need the
 * conflict resolver, so the caller reads the general way.
 */
export function decodeNumericBlockInto(bytes: Uint8Array, ts: Float64Array, values: Float64Array, at: number): number {
  const r = new ByteReader(bytes);
  const head = readHeaderFields(r);
  if (head.version === BlockFormat.Text) r.fail('a text block is not a numeric block');
  if (head.gens !== null) return -1;
  if (head.count === 0) return at;
  if (head.version !== BlockFormat.NumericPacked || head.present !== null) {
    const s = decodeNumericBlock(bytes);
    for (let i = 0; i < s.ts.length; i++) {
      const v = s.values[i];
      if (v === null || v === undefined) continue;
      ts[at] = s.ts[i]!;
      values[at++] = Number(v);
    }
    return at;
  }
  readTimestampsInto(r, head, ts, at);
  readPackedInto(r, head.count, values, at);
  return at + head.count;
}

/** The header of any block (numeric or text) without decoding its body. */
export function blockHeader(bytes: Uint8Array): BlockHeader {
  return peekHeader(bytes);
}

interface Scaled {
  scale: number;
  mantissas: number[];
}

/**
 * Collectors mostly send decimals with a few digits (53.123), whose double bits look
 * random to an XOR codec. Written as integers m with v = m / 10^k, their deltas are small
 * varints. Only used when every value comes back bit-identical (so never for -0, NaN or ±Inf).
 */
function decimalScaled(values: number[]): Scaled | null {
  // The scale is the least at which every value is exact (the largest of the values' own): each
  // value is tried at the scale so far, which most pass, and raises it when it does not.
  const mantissas = new Array<number>(values.length);
  let scale = 0;
  let p = 1;
  let lastRaise = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Object.is(v, -0)) return null; // a mantissa cannot carry the sign of zero
    let m = Math.round(v * p);
    if (!exactMantissa(m, p, v)) {
      do {
        if (++scale > MAX_SCALE) return null;
        p = POW10[scale]!;
        m = Math.round(v * p);
      } while (!exactMantissa(m, p, v));
      lastRaise = i;
    }
    mantissas[i] = m;
  }
  // The values before the last raise were written at a smaller scale: again, at this one.
  for (let i = 0; i < lastRaise; i++) {
    const v = values[i]!;
    const m = Math.round(v * p);
    if (!exactMantissa(m, p, v)) return null;
    mantissas[i] = m;
  }
  // Common trailing zeros (byte counts in KiB, round thresholds) leave the mantissas: a
  // negative scale multiplies back, exactly, since every product is an integer v.
  let tens = mantissas.length > 0 && mantissas.every((m) => m % 10 === 0);
  while (tens && scale > -MAX_SCALE) {
    for (let i = 0; i < mantissas.length; i++) {
      const m = mantissas[i]! / 10;
      mantissas[i] = m;
      if (m % 10 !== 0) tens = false;
    }
    scale--;
  }
  return { scale, mantissas };
}

/** m = round(v · p) stands for v exactly (v is not -0; NaN and ±Infinity never do). */
function exactMantissa(m: number, p: number, v: number): boolean {
  return Math.abs(m) <= INT_LIMIT && m / p === v;
}

/** Format 5: zigzag(scale) (v = m / 10^scale; negative: m · 10^−scale), then the mantissas packed. */
function writePacked(w: ByteWriter, { scale, mantissas }: Scaled): void {
  w.varint(zigzag(scale));
  writeIntegers(w, mantissas);
}

function readPacked(r: ByteReader, n: number): number[] {
  const out = new Array<number>(n);
  readPackedInto(r, n, out, 0);
  return out;
}

function readPackedInto(r: ByteReader, n: number, out: number[] | Float64Array, at: number): void {
  const scale = unzigzag(r.varint());
  if (Math.abs(scale) > MAX_SCALE) r.fail(`decimal scale ${scale} exceeds ±${MAX_SCALE}`);
  // v = m / 10^scale, or m · 10^−scale for a negative scale.
  if (scale >= 0) readIntegersInto(r, n, out, at, POW10[scale]!, 1);
  else readIntegersInto(r, n, out, at, 1, POW10[-scale]!);
}

/** Format 2 (written before format 5): one byte scale, then zigzag deltas of the mantissas. */
function readDecimals(r: ByteReader, n: number): number[] {
  const scale = r.byte();
  if (scale > MAX_SCALE) r.fail(`decimal scale ${scale} exceeds ${MAX_SCALE}`);
  const p = POW10[scale]!;
  const out = new Array<number>(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    m += unzigzag(r.varint());
    out[i] = m / p;
  }
  return out;
}

// Bigint blocks (rare: only 64-bit integers beyond ±2^53 need them): each value is a
// kind byte, then a zigzag bigint varint (kind 0) or the 8 bytes of a double (kind 1),
// so a window mixing huge integers and doubles keeps both exact.
function writeBigDeltas(w: ByteWriter, values: (number | bigint)[]): void {
  const double = new DataView(new ArrayBuffer(8));
  for (const v of values) {
    if (typeof v === 'bigint') {
      w.byte(0);
      w.bigVarint(bigZigzag(v));
    } else {
      w.byte(1);
      double.setFloat64(0, v, true);
      w.bytes(new Uint8Array(double.buffer));
    }
  }
}

function readBigDeltas(r: ByteReader, n: number): (number | bigint)[] {
  const out = new Array<number | bigint>(n);
  for (let i = 0; i < n; i++) {
    const kind = r.byte();
    if (kind === 0) out[i] = bigUnzigzag(r.bigVarint());
    else if (kind === 1) out[i] = r.float64le();
    else r.fail(`unknown value kind ${kind}`);
  }
  return out;
}

// Gorilla-style XOR of IEEE-754 bit patterns (Pelkonen et al., VLDB 2015): '0' when equal
// to the previous value; '10' + meaningful bits when they fit the previous window;
// '11' + 5 bits leading zeros + 6 bits (length - 1) + meaningful bits otherwise.
// Bit patterns are handled as two uint32 halves; every pattern (NaN payloads, -0) survives.

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
// Little-endian hosts keep the high word at index 1 (every platform Node supports).
const HI = 1;
const LO = 0;

function encodeXor(values: number[]): Uint8Array {
  const bits = new BitWriter();
  if (values.length === 0) return bits.finish();
  f64[0] = values[0]!;
  let prevHi = u32[HI]!;
  let prevLo = u32[LO]!;
  bits.write(prevHi, 32);
  bits.write(prevLo, 32);
  let windowLead = -1;
  let windowTrail = 0;
  for (let i = 1; i < values.length; i++) {
    f64[0] = values[i]!;
    const hi = u32[HI]!;
    const lo = u32[LO]!;
    const xHi = (hi ^ prevHi) >>> 0;
    const xLo = (lo ^ prevLo) >>> 0;
    prevHi = hi;
    prevLo = lo;
    if (xHi === 0 && xLo === 0) {
      bits.write(0, 1);
      continue;
    }
    let lead = xHi !== 0 ? Math.clz32(xHi) : 32 + Math.clz32(xLo);
    if (lead > 31) lead = 31;
    const trail = xLo !== 0 ? ctz32(xLo) : 32 + ctz32(xHi);
    if (windowLead >= 0 && lead >= windowLead && trail >= windowTrail) {
      bits.write(2, 2);
      writeMeaningful(bits, xHi, xLo, windowTrail, 64 - windowLead - windowTrail);
    } else {
      const length = 64 - lead - trail;
      bits.write(3, 2);
      bits.write(lead, 5);
      bits.write(length - 1, 6);
      writeMeaningful(bits, xHi, xLo, trail, length);
      windowLead = lead;
      windowTrail = trail;
    }
  }
  return bits.finish();
}

function decodeXor(bits: BitReader, n: number): number[] {
  const out = new Array<number>(n);
  if (n === 0) return out;
  let hi = bits.read(32);
  let lo = bits.read(32);
  u32[HI] = hi;
  u32[LO] = lo;
  out[0] = f64[0]!;
  let windowLead = 0;
  let windowTrail = 0;
  for (let i = 1; i < n; i++) {
    if (bits.read(1) === 1) {
      if (bits.read(1) === 1) {
        windowLead = bits.read(5);
        windowTrail = 64 - windowLead - (bits.read(6) + 1);
        if (windowTrail < 0) throw new BlockFormatError(-1, 'XOR window exceeds 64 bits');
      }
      const [xHi, xLo] = readMeaningful(bits, windowTrail, 64 - windowLead - windowTrail);
      hi = (hi ^ xHi) >>> 0;
      lo = (lo ^ xLo) >>> 0;
    }
    u32[HI] = hi;
    u32[LO] = lo;
    out[i] = f64[0]!;
  }
  return out;
}

/** Writes bits [trail, trail + length) of the 64-bit value hi:lo. */
function writeMeaningful(bits: BitWriter, hi: number, lo: number, trail: number, length: number): void {
  // Shift the 64-bit value right by `trail`.
  let sHi: number;
  let sLo: number;
  if (trail >= 32) {
    sHi = 0;
    sLo = hi >>> (trail - 32);
  } else if (trail === 0) {
    sHi = hi;
    sLo = lo;
  } else {
    sHi = hi >>> trail;
    sLo = ((lo >>> trail) | (hi << (32 - trail))) >>> 0;
  }
  if (length > 32) {
    bits.write(sHi & lowMask(length - 32), length - 32);
    bits.write(sLo, 32);
  } else {
    bits.write((sLo & lowMask(length)) >>> 0, length);
  }
}

function readMeaningful(bits: BitReader, trail: number, length: number): [number, number] {
  let sHi = 0;
  let sLo: number;
  if (length > 32) {
    sHi = bits.read(length - 32);
    sLo = bits.read(32);
  } else sLo = bits.read(length);
  // Shift left by `trail` back into place.
  if (trail >= 32) return [(sLo << (trail - 32)) >>> 0, 0];
  if (trail === 0) return [sHi >>> 0, sLo >>> 0];
  return [((sHi << trail) | (sLo >>> (32 - trail))) >>> 0, (sLo << trail) >>> 0];
}

const lowMask = (n: number): number => (n >= 32 ? 0xffffffff : (1 << n) - 1);

function ctz32(x: number): number {
  return 31 - Math.clz32(x & -x);
}
