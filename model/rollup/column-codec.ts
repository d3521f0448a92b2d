// Lossless codecs for one column of doubles in a rollup chunk (docs/format/rollup-chunk.md).
// Each column starts with a scheme byte and picks the smallest of: all zeros, small
// integers (counts), decimal fixed point (values with few decimals become integers), or
// the bits XORed with the previous value and split into byte planes. A general-purpose
// pass (deflate, from node:zlib) runs on top when it saves at least an eighth.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ByteReader, ByteWriter, unzigzag, zigzag } from '../codec/bytes.js';

/** Scheme byte of a column; the high bit says the rest is deflated. */
export const ColumnScheme = {
  zeros: 0,
  /** Deltas of safe integers, zigzag LEB128. */
  integers: 1,
  /** A decimal exponent byte k, then deltas of x·10^k as zigzag LEB128. */
  decimal: 2,
  /** XOR with the previous value's bits, little-endian bytes split into 8 planes. */
  xorPlanes: 3,
  /** The same values as an earlier column of the chunk, whose index is the next byte (model/rollup/chunk.ts). */
  copy: 4,
} as const;

const DEFLATED = 0x80;
/** Integers this large could overflow a delta's zigzag past 2^53. */
const MAX_INT = 2 ** 50;
const MAX_DECIMALS = 9;
const POW10 = Array.from({ length: MAX_DECIMALS + 1 }, (_, k) => 10 ** k);
/** Columns shorter than this are not worth a deflate call. */
const DEFLATE_MIN_BYTES = 64;

/** The fewest decimals k ≤ 9 with which every value round-trips exactly as an integer / 10^k, or -1. */
export function decimalsOf(xs: Float64Array): number {
  // A value that needs more decimals sends every value back through the check at the new k
  // (a larger k can push an earlier value past MAX_INT).
  for (let k = 0, checked = false; !checked; ) {
    checked = true;
    for (let i = 0; i < xs.length; i++) {
      while (!exactAt(xs[i]!, k)) {
        if (++k > MAX_DECIMALS) return -1;
        checked = false;
      }
    }
    if (checked) return k;
  }
  return -1;
}

function exactAt(x: number, k: number): boolean {
  const p = POW10[k]!;
  const n = Math.round(x * p);
  return Math.abs(n) <= MAX_INT && n / p === x && !Object.is(x, -0);
}

function writeDeltas(w: ByteWriter, xs: Float64Array, scale: number): void {
  let prev = 0;
  for (let i = 0; i < xs.length; i++) {
    const n = Math.round(xs[i]! * scale);
    w.varint(zigzag(n - prev));
    prev = n;
  }
}

function readDeltas(r: ByteReader, out: Float64Array, scale: number): void {
  let prev = 0;
  for (let i = 0; i < out.length; i++) {
    prev += unzigzag(r.varint());
    out[i] = scale === 1 ? prev : prev / scale;
  }
}

/** Planes holding the sign, exponent and top mantissa bits: the part of XORed doubles worth deflating. */
const HIGH_PLANES = 3;

/** Each value's bits XOR the previous value's, as 8 byte planes, most significant plane first. */
function xorPlanes(xs: Float64Array): Uint8Array {
  const n = xs.length;
  const words = new Uint32Array(xs.buffer, xs.byteOffset, n * 2);
  const out = new Uint8Array(n * 8);
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < n; i++) {
    const l = words[2 * i]! ^ lo;
    const h = words[2 * i + 1]! ^ hi;
    lo = words[2 * i]!;
    hi = words[2 * i + 1]!;
    for (let b = 0; b < 4; b++) {
      out[(3 - b) * n + i] = (h >>> (8 * b)) & 0xff;
      out[(7 - b) * n + i] = (l >>> (8 * b)) & 0xff;
    }
  }
  return out;
}

function fromXorPlanes(planes: Uint8Array, out: Float64Array): void {
  const n = out.length;
  const words = new Uint32Array(out.buffer, out.byteOffset, n * 2);
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < n; i++) {
    let h = 0;
    let l = 0;
    for (let b = 0; b < 4; b++) {
      h |= planes[(3 - b) * n + i]! << (8 * b);
      l |= planes[(7 - b) * n + i]! << (8 * b);
    }
    words[2 * i] = lo ^= l;
    words[2 * i + 1] = hi ^= h;
  }
}

/** The column's bytes (its length is stored by the caller, like the value count). */
export function encodeColumn(xs: Float64Array): Uint8Array {
  if (xs.every((x) => x === 0 && !Object.is(x, -0))) return Uint8Array.of(ColumnScheme.zeros);
  const k = decimalsOf(xs);
  if (k < 0) return encodeXorPlanes(xs);
  const w = new ByteWriter(xs.length * 2 + 8);
  if (k === 0) {
    w.byte(ColumnScheme.integers);
  } else {
    w.byte(ColumnScheme.decimal);
    w.byte(k);
  }
  writeDeltas(w, xs, POW10[k]!);
  return maybeDeflate(w.finish());
}

/**
 * XOR planes; when deflating the high planes pays, they are stored deflated (after their
 * length) and the low planes, which are noise, raw.
 */
function encodeXorPlanes(xs: Float64Array): Uint8Array {
  const planes = xorPlanes(xs);
  const split = HIGH_PLANES * xs.length;
  const high = split >= DEFLATE_MIN_BYTES ? deflateRawSync(planes.subarray(0, split), { level: 1 }) : null;
  const w = new ByteWriter(planes.length + 8);
  if (high === null || high.length + 4 > split - split / 8) {
    w.byte(ColumnScheme.xorPlanes);
    w.bytes(planes);
  } else {
    w.byte(ColumnScheme.xorPlanes | DEFLATED);
    w.varint(high.length);
    w.bytes(high);
    w.bytes(planes.subarray(split));
  }
  return w.finish().slice();
}

function maybeDeflate(coded: Uint8Array): Uint8Array {
  if (coded.length < DEFLATE_MIN_BYTES) return coded.slice();
  // Level 1: on these columns it is within 1% of level 6's size at a fifth of the time.
  const packed = deflateRawSync(coded.subarray(1), { level: 1 });
  if (packed.length + 1 > coded.length - coded.length / 8) return coded.slice();
  const out = new Uint8Array(packed.length + 1);
  out[0] = coded[0]! | DEFLATED;
  out.set(packed, 1);
  return out;
}

/** Decodes `count` values (throws BlockFormatError on damage). */
export function decodeColumn(bytes: Uint8Array, count: number): Float64Array {
  const out = new Float64Array(count);
  const r0 = new ByteReader(bytes);
  const head = r0.byte();
  const scheme = head & ~DEFLATED;
  if (scheme === ColumnScheme.zeros) return out;
  if (scheme === ColumnScheme.xorPlanes) {
    const r = new ByteReader(bytes.subarray(1));
    if (!(head & DEFLATED)) {
      fromXorPlanes(r.bytes(count * 8), out);
      return out;
    }
    const high = inflateRawSync(r.bytes(r.varint()));
    const low = r.bytes(count * (8 - HIGH_PLANES));
    if (high.length !== count * HIGH_PLANES) r.fail(`high planes of ${high.length} bytes for ${count} values`);
    const planes = new Uint8Array(count * 8);
    planes.set(high);
    planes.set(low, high.length);
    fromXorPlanes(planes, out);
    return out;
  }
  const r = new ByteReader(head & DEFLATED ? inflateRawSync(bytes.subarray(1)) : bytes.subarray(1));
  switch (scheme) {
    case ColumnScheme.integers:
      readDeltas(r, out, 1);
      break;
    case ColumnScheme.decimal: {
      const k = r.byte();
      if (k > MAX_DECIMALS) r.fail(`decimal exponent ${k}`);
      readDeltas(r, out, POW10[k]!);
      break;
    }
    default:
      r0.fail(`unknown column scheme ${scheme}`);
  }
  return out;
}
