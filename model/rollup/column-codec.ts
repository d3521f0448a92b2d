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

function xorPlanes(xs: Float64Array): Uint8Array {
  const bits = new BigUint64Array(xs.length);
  const view = new BigUint64Array(xs.buffer, xs.byteOffset, xs.length);
  let prev = 0n;
  for (let i = 0; i < xs.length; i++) {
    const b = view[i]!;
    bits[i] = b ^ prev;
    prev = b;
  }
  const bytes = new Uint8Array(bits.buffer);
  const out = new Uint8Array(bytes.length);
  const n = xs.length;
  for (let i = 0; i < n; i++) for (let p = 0; p < 8; p++) out[p * n + i] = bytes[i * 8 + p]!;
  return out;
}

function fromXorPlanes(planes: Uint8Array, out: Float64Array): void {
  const n = out.length;
  const bytes = new Uint8Array(n * 8);
  for (let p = 0; p < 8; p++) for (let i = 0; i < n; i++) bytes[i * 8 + p] = planes[p * n + i]!;
  const bits = new BigUint64Array(bytes.buffer);
  const view = new BigUint64Array(out.buffer, out.byteOffset, n);
  let prev = 0n;
  for (let i = 0; i < n; i++) view[i] = prev = bits[i]! ^ prev;
}

/** The column's bytes (its length is stored by the caller, like the value count). */
export function encodeColumn(xs: Float64Array): Uint8Array {
  if (xs.every((x) => x === 0 && !Object.is(x, -0))) return Uint8Array.of(ColumnScheme.zeros);
  const w = new ByteWriter(xs.length * 2 + 8);
  const k = decimalsOf(xs);
  if (k === 0) {
    w.byte(ColumnScheme.integers);
    writeDeltas(w, xs, 1);
  } else if (k > 0) {
    w.byte(ColumnScheme.decimal);
    w.byte(k);
    writeDeltas(w, xs, POW10[k]!);
  } else {
    w.byte(ColumnScheme.xorPlanes);
    w.bytes(xorPlanes(xs));
  }
  return maybeDeflate(w.finish());
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
  const body = head & DEFLATED ? inflateRawSync(bytes.subarray(1)) : bytes.subarray(1);
  const r = new ByteReader(body);
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
    case ColumnScheme.xorPlanes:
      fromXorPlanes(r.bytes(count * 8), out);
      break;
    default:
      r0.fail(`unknown column scheme ${scheme}`);
  }
  return out;
}
