// Lossless codecs for one column of doubles in a rollup chunk (docs/format/rollup-chunk.md).
// Each column starts with a scheme byte and picks the smallest of: all zeros, small
// integers (counts), decimal fixed point (values with few decimals become integers), or
// the bits XORed with the previous value and split into byte planes. A general-purpose
// pass (deflate, from node:zlib) runs on top when it saves at least an eighth.
// Format v3 (encodeColumnV3) adds near-decimal columns (each value as a short decimal and its
// distance in ulps from it: floating-point sums of decimals), Σx² columns coded against
// (Σx)²/n, and zstd in place of deflate; decodeColumn reads both.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { zstdPlain } from '../codec/zstd-plain.js';
import { ByteReader, ByteWriter, putVarint, unzigzag, zigzag } from '../codec/bytes.js';
import { ZstdFrames } from '../codec/zstd-frames.js';

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
  /**
   * Near-decimal (format v3): u8 k, m deltas of d = round(x·10^k) as zigzag varints, then per
   * value its distance in ulps from d / 10^k (a sum of decimals in floating point lands a few
   * ulps off the decimal), or an escape and the value's 8 bytes.
   */
  nearDecimal: 5,
  /**
   * Near-decimal against a prediction (format v3, Σx² columns: the prediction is (Σx)²/n from the
   * chunk's n and Σx columns of the same quantity): as scheme 5, but each d is coded as its
   * difference from round(prediction · 10^k) instead of from the previous d.
   */
  predictedDecimal: 6,
  /** Each value's ulp distance from the prediction, or an escape and its 8 bytes (format v3). */
  predictedUlps: 7,
} as const;

/** Schemes whose reader needs the prediction. */
export const isPredicted = (head: number): boolean => {
  const scheme = head & SCHEME_MASK;
  return (head & DEFLATED) === 0 && (scheme === ColumnScheme.predictedDecimal || scheme === ColumnScheme.predictedUlps);
};

const DEFLATED = 0x80;
/** The rest is compressed with zstd (format v3 chunks; 0x80 is then clear). */
const ZSTD = 0x40;
const SCHEME_MASK = 0x3f;
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
  const out = new Uint8Array(xs.length * 8);
  xorPlanesInto(xs, out, 0);
  return out;
}

/** `xorPlanes` written into out[at, at + 8n). */
function xorPlanesInto(xs: Float64Array, out: Uint8Array, at: number): void {
  const n = xs.length;
  const words = new Uint32Array(xs.buffer, xs.byteOffset, n * 2);
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < n; i++) {
    const l = words[2 * i]! ^ lo;
    const h = words[2 * i + 1]! ^ hi;
    lo = words[2 * i]!;
    hi = words[2 * i + 1]!;
    for (let b = 0; b < 4; b++) {
      out[at + (3 - b) * n + i] = (h >>> (8 * b)) & 0xff;
      out[at + (7 - b) * n + i] = (l >>> (8 * b)) & 0xff;
    }
  }
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

/** The column's bytes (its length is stored by the caller, like the value count): format v2. */
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
export function decodeColumn(bytes: Uint8Array, count: number, predicted: Float64Array | null = null): Float64Array {
  const out = new Float64Array(count);
  const r0 = new ByteReader(bytes);
  const head = r0.byte();
  if (isPredicted(head) && predicted?.length !== count) r0.fail('a predicted column without its prediction');
  if (head & ZSTD) return decodeV3(r0, head, bytes, out, predicted);
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
    case ColumnScheme.nearDecimal:
    case ColumnScheme.predictedDecimal:
      if (head & DEFLATED) r0.fail('a deflated near-decimal column');
      readNearDecimal(r, out, scheme === ColumnScheme.nearDecimal ? null : predicted);
      break;
    case ColumnScheme.predictedUlps:
      if (head & DEFLATED) r0.fail('a deflated predicted column');
      readPredictedUlps(r, out, predicted!);
      break;
    default:
      r0.fail(`unknown column scheme ${scheme}`);
  }
  return out;
}

// ---- Format v3 (docs/format/rollup-chunk.md): zstd instead of deflate, and near-decimal columns.

/** Columns shorter than this are stored uncompressed. */
const ZSTD_MIN_BYTES = 24;
/** Ulp distances are kept below this, so the 64-bit arithmetic on two 32-bit halves stays exact in doubles. */
const MAX_ULPS = 2 ** 44;
const TWO32 = 2 ** 32;
const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** x's ulp distance from y (same sign, both finite), or null when too far or of another sign. */
function ulpsFrom(x: number, y: number): number | null {
  f64[0] = x;
  const ulps = ulpsOfBits(u32[0]!, u32[1]!, y);
  return Number.isNaN(ulps) ? null : ulps;
}

/** `ulpsFrom` of the x whose bits are `xl` (low word) and `xh`, NaN for null (a number either way). */
function ulpsOfBits(xl: number, xh: number, y: number): number {
  f64[0] = y;
  const yl = u32[0]!;
  const yh = u32[1]!;
  if ((xh ^ yh) >>> 31 !== 0) return NaN;
  const hi = (xh & 0x7fffffff) - (yh & 0x7fffffff);
  if (hi > 2 ** 13 || hi < -(2 ** 13)) return NaN;
  const d = hi * TWO32 + (xl - yl);
  return Math.abs(d) < MAX_ULPS ? d : NaN;
}

/**
 * Writes to out[i] the double `ulps` away from y in magnitude, keeping y's sign; false (writing
 * nothing) when that is not a finite double. Written, not returned: a double that may be null
 * is boxed, one allocation a value, and a stored rollup column decodes millions.
 */
export function shiftUlps(y: number, ulps: number, out: Float64Array, i: number): boolean {
  f64[0] = y;
  const t = u32[0]! + ulps;
  if (t >= 0 && t < TWO32 && (u32[1]! & 0x7ff00000) !== 0x7ff00000) {
    // No carry into the high word (most values: a decimal is within a few ulps of its double).
    u32[0] = t;
    out[i] = f64[0]!;
    return true;
  }
  const sign = u32[1]! & 0x80000000;
  const lo = ((t % TWO32) + TWO32) % TWO32;
  const hi = (u32[1]! & 0x7fffffff) + (t - lo) / TWO32;
  if (hi < 0 || hi >= 0x7ff00000) return false;
  u32[0] = lo;
  u32[1] = (hi | sign) >>> 0;
  out[i] = f64[0]!;
  return true;
}

/**
 * Bytes of varint n. Above 2^28 by log2, as the exponent choice has always counted them: that
 * says 7 for 2^49, one short, and a changed count could change a chosen exponent and so the bytes.
 */
const varintLength = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : Math.ceil(Math.log2(n + 1) / 7));

/**
 * Where the v3 encoder codes a column before compressing it, and its ulp codes and escaped values
 * on the side: reused, as encoding is synchronous. A ByteWriter or two and an escape list per
 * column were most of the encoder's garbage (issue 31: ageing a week codes ≈ 9 700 columns).
 */
let scratch = new Uint8Array(1 << 16);
let codeScratch = new Uint8Array(1 << 14);
let escapeScratch = new Float64Array(1 << 9);
function room(n: number): Uint8Array {
  if (scratch.length < n) scratch = new Uint8Array(Math.max(n, 2 * scratch.length));
  return scratch;
}
function codeRoom(n: number): Uint8Array {
  if (codeScratch.length < n) codeScratch = new Uint8Array(Math.max(n, 2 * codeScratch.length));
  return codeScratch;
}
function escapeRoom(n: number): Float64Array {
  if (escapeScratch.length < n) escapeScratch = new Float64Array(Math.max(n, 2 * escapeScratch.length));
  return escapeScratch;
}

/**
 * Values the decimal exponent is chosen on. Trying every k over a whole column was most of the
 * encoder's time (issue 31: 20 % of ageing a week); a column's values share their magnitude and
 * decimals, so its first values tell the best k (bench/rollup-bytes.ts: within 0.5 % of the size).
 */
const K_SAMPLE = 96;

/**
 * x's ulps from d / p as a near-decimal column codes it, or NaN where x is escaped: not finite,
 * d no safe integer, -0, or `ulpsFrom` null (a number either way, so the loops stay monomorphic).
 * `xl`, `xh`: x's bits, low and high word.
 */
function nearUlps(x: number, xl: number, xh: number, d: number, p: number): number {
  if (!(x - x === 0) || Math.abs(d) > MAX_INT || (x === 0 && xh !== 0)) return NaN;
  return ulpsOfBits(xl, xh, d / p);
}

/** The column's bits as 32-bit words (little-endian: low word first), read in place. */
const wordsOf = (xs: Float64Array): Uint32Array => new Uint32Array(xs.buffer, xs.byteOffset, xs.length * 2);

/** The last d a costing run coded (the base of the next run's first delta). */
let costPrev = 0;

/**
 * `bytes` plus the bytes of the near-decimal coding of xs[from, to) at k (escapes at 10), the
 * run following a value coded as d = `prev`; the last d is left in `costPrev`. Infinity once the
 * sample of n values must cost more than `limit`: every value still to come costs at least 2
 * bytes (a varint each for d and ulps), so an exponent worse than the best so far stops about as
 * soon as it falls behind, and a cost at or under the limit is exact.
 */
function nearDecimalCost(xs: Float64Array, words: Uint32Array, from: number, to: number, n: number, k: number, predicted: Float64Array | null, bytes: number, prev: number, limit: number): number {
  const p = POW10[k]!;
  for (let i = from; i < to; i++) {
    if (bytes + 2 * (n - i) > limit) return Infinity;
    const x = xs[i]!;
    const d = Math.round(x * p) + 0;
    const ulps = nearUlps(x, words[2 * i]!, words[2 * i + 1]!, d, p);
    if (ulps !== ulps) {
      bytes += 10;
      continue;
    }
    bytes += varintLength(zigzag(d - (predicted === null ? prev : predictedInt(predicted[i]!, p)))) + varintLength(zigzag(ulps) + 1);
    prev = d;
  }
  costPrev = prev;
  return bytes <= limit ? bytes : Infinity;
}

/** round(prediction · 10^k), or 0 where that is no safe integer (the reader computes the same). */
function predictedInt(x: number, p: number): number {
  const d = Math.round(x * p);
  return Number.isFinite(d) && Math.abs(d) <= MAX_INT ? d + 0 : 0;
}

/** Values every exponent is costed on first, to choose which one to cost whole first. */
const K_PREFIX = 8;
const prefixBytes = new Float64Array(MAX_DECIMALS + 1);
const prefixPrev = new Float64Array(MAX_DECIMALS + 1);

/**
 * The cheapest decimal exponent on the column's first values and the bytes it codes them in
 * (the smallest k of those that tie). Every exponent is costed on a few values, the cheapest of
 * them then on all K_SAMPLE, and the others go on from where they were only while they can still
 * match it: they stop as soon as they fall behind (issue 31: 611 values costed per column in
 * ascending order, the best k being anywhere from 0 to 6).
 */
function bestExponent(xs: Float64Array, words: Uint32Array, predicted: Float64Array | null): { k: number; bytes: number } {
  const n = Math.min(xs.length, K_SAMPLE);
  const m = Math.min(n, K_PREFIX);
  let first = 0;
  for (let at = 0; at <= MAX_DECIMALS; at++) {
    prefixBytes[at] = nearDecimalCost(xs, words, 0, m, n, at, predicted, 2, 0, Infinity);
    prefixPrev[at] = costPrev;
    if (prefixBytes[at]! < prefixBytes[first]!) first = at;
  }
  let k = first;
  let bytes = nearDecimalCost(xs, words, m, n, n, first, predicted, prefixBytes[first]!, prefixPrev[first]!, Infinity);
  for (let at = 0; at <= MAX_DECIMALS; at++) {
    if (at === first) continue;
    const cost = nearDecimalCost(xs, words, m, n, n, at, predicted, prefixBytes[at]!, prefixPrev[at]!, bytes);
    if (cost < bytes || (cost === bytes && at < k)) {
      bytes = cost;
      k = at;
    }
  }
  return { k, bytes };
}

/**
 * The near-decimal column at exponent k (against the prediction when given), or null when more
 * than a quarter of the values escape. A view into the scratch.
 */
function encodeNearDecimal(xs: Float64Array, words: Uint32Array, k: number, predicted: Float64Array | null): Uint8Array | null {
  if (k < 0) return null;
  const n = xs.length;
  const p = POW10[k]!;
  // Per value at most 8 bytes of d, 7 of ulps (below 2^45) and 8 escaped.
  const out = room(23 * n + 2);
  const codes = codeRoom(7 * n);
  const escaped = escapeRoom(n);
  out[0] = predicted === null ? ColumnScheme.nearDecimal : ColumnScheme.predictedDecimal;
  out[1] = k;
  let at = 2;
  let c = 0;
  let e = 0;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    // + 0: a -0 here would give a negative zero the reader, which sums deltas from +0, never sees.
    const d = Math.round(x * p) + 0;
    const ulps = nearUlps(x, words[2 * i]!, words[2 * i + 1]!, d, p);
    if (ulps !== ulps) {
      if ((e + 1) * 4 > n) return null;
      escaped[e++] = x;
      out[at++] = 0;
      codes[c++] = 0;
      continue;
    }
    at = putVarint(out, at, zigzag(d - (predicted === null ? prev : predictedInt(predicted[i]!, p))));
    c = putVarint(codes, c, zigzag(ulps) + 1);
    prev = d;
  }
  out.set(codes.subarray(0, c), at);
  at += c;
  return withEscapes(out, at, escaped, e);
}

/** The escaped values' 8 bytes each (little-endian) after out[0, at): the coded column, a view. */
function withEscapes(out: Uint8Array, at: number, escaped: Float64Array, count: number): Uint8Array {
  out.set(new Uint8Array(escaped.buffer, escaped.byteOffset, count * 8), at);
  return out.subarray(0, at + count * 8);
}

/** Bytes of the predicted-ulps coding of the column's first values. */
function predictedUlpsCost(xs: Float64Array, predicted: Float64Array): number {
  let bytes = 1;
  for (let i = 0; i < Math.min(xs.length, K_SAMPLE); i++) {
    const ulps = Number.isFinite(predicted[i]!) ? ulpsFrom(xs[i]!, predicted[i]!) : null;
    bytes += ulps === null ? 9 : varintLength(zigzag(ulps) + 1);
  }
  return bytes;
}

/** zstd frames of rollup columns, from one context (model/codec/zstd-frames.ts). */
const frames = new ZstdFrames(3);

/** The coded column (scheme byte first) with the rest zstd-compressed when that is shorter. A view: valid until the next column is coded. */
function zstd(coded: Uint8Array): Uint8Array {
  if (coded.length < ZSTD_MIN_BYTES) return coded;
  const framed = frames.frameAfter(1, coded.subarray(1));
  if (framed.length >= coded.length) return coded;
  framed[0] = coded[0]! | ZSTD;
  return framed;
}

/** Byte planes of XORed values, all of them zstd-compressed (format v3). */
function encodeXorPlanesV3(xs: Float64Array): Uint8Array {
  const out = room(xs.length * 8 + 1);
  out[0] = ColumnScheme.xorPlanes;
  xorPlanesInto(xs, out, 1);
  return zstd(out.subarray(0, xs.length * 8 + 1));
}

/** Each value's ulps from the prediction (escaped where too far), or null when most are. A view into the scratch. */
function encodePredictedUlps(xs: Float64Array, predicted: Float64Array): Uint8Array | null {
  const n = xs.length;
  const out = room(15 * n + 1);
  const escaped = escapeRoom(n);
  out[0] = ColumnScheme.predictedUlps;
  let at = 1;
  let e = 0;
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    const y = predicted[i]!;
    const ulps = Number.isFinite(y) ? ulpsFrom(x, y) : null;
    if (ulps === null || Object.is(x, -0) !== Object.is(y, -0)) {
      out[at++] = 0;
      escaped[e++] = x;
    } else {
      at = putVarint(out, at, zigzag(ulps) + 1);
    }
  }
  if (e * 4 > n) return null;
  return withEscapes(out, at, escaped, e);
}

/** True when every value is +0. */
function allZeros(xs: Float64Array): boolean {
  for (let i = 0; i < xs.length; i++) if (!(xs[i] === 0 && !Object.is(xs[i], -0))) return false;
  return true;
}

/**
 * The column's bytes in format v3: the smallest of the v2 schemes (zstd for deflate),
 * near-decimal, and, given a prediction of each value (Σx² columns), the predicted schemes.
 */
export function encodeColumnV3(xs: Float64Array, predicted: Float64Array | null = null): Uint8Array {
  return codeColumnV3(xs, predicted).slice();
}

/**
 * `encodeColumnV3`'s bytes as a view into memory the next call reuses (a chunk copies each
 * column into its record: model/rollup/chunk.ts), so coding a column allocates nothing.
 */
export function codeColumnV3(xs: Float64Array, predicted: Float64Array | null = null): Uint8Array {
  if (allZeros(xs)) {
    const out = room(1);
    out[0] = ColumnScheme.zeros;
    return out.subarray(0, 1);
  }
  const k = decimalsOf(xs);
  if (k >= 0) {
    const out = room(xs.length * 8 + 2);
    let at = 0;
    if (k === 0) out[at++] = ColumnScheme.integers;
    else {
      out[at++] = ColumnScheme.decimal;
      out[at++] = k;
    }
    const scale = POW10[k]!;
    let prev = 0;
    for (let i = 0; i < xs.length; i++) {
      const n = Math.round(xs[i]! * scale);
      at = putVarint(out, at, zigzag(n - prev));
      prev = n;
    }
    return zstd(out.subarray(0, at));
  }
  // The candidate that codes the column's first values shortest is coded whole and compressed
  // (XOR planes where it cannot code most values): each candidate coded whole costs a pass, and
  // each zstd call a context of its own (issue 31's profile of ageing: two thirds of the time in
  // the encoder). Coding and compressing every candidate to keep the smallest saved 1.6 % of
  // the bytes (bench/rollup-bytes.ts).
  const words = wordsOf(xs);
  const plain = bestExponent(xs, words, null);
  const options: { bytes: number; code: () => Uint8Array | null }[] = [{ bytes: plain.bytes, code: () => encodeNearDecimal(xs, words, plain.k, null) }];
  if (predicted !== null) {
    const against = bestExponent(xs, words, predicted);
    options.push({ bytes: against.bytes, code: () => encodeNearDecimal(xs, words, against.k, predicted) }, { bytes: predictedUlpsCost(xs, predicted), code: () => encodePredictedUlps(xs, predicted) });
  }
  options.sort((x, y) => x.bytes - y.bytes);
  for (const option of options) {
    const coded = option.code();
    if (coded !== null) return zstd(coded);
  }
  return encodeXorPlanesV3(xs);
}

function decodeV3(r0: ByteReader, head: number, bytes: Uint8Array, out: Float64Array, predicted: Float64Array | null): Float64Array {
  const scheme = head & SCHEME_MASK;
  if (head & DEFLATED) r0.fail(`column scheme byte ${head}`);
  let body: Uint8Array;
  try {
    body = zstdPlain.plain(bytes.subarray(1));
  } catch {
    r0.fail('column does not decompress');
  }
  const r = new ByteReader(body);
  const count = out.length;
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
    case ColumnScheme.nearDecimal:
      readNearDecimal(r, out, null);
      break;
    case ColumnScheme.predictedDecimal:
      readNearDecimal(r, out, predicted);
      break;
    case ColumnScheme.predictedUlps:
      readPredictedUlps(r, out, predicted!);
      break;
    default:
      r0.fail(`unknown column scheme ${scheme}`);
  }
  return out;
}

/** The decimal integers a near-decimal column is read through: one array reused (reads are synchronous), not one per column. */
let intsScratch = new Float64Array(1440);
function scratchInts(n: number): Float64Array {
  if (intsScratch.length < n) intsScratch = new Float64Array(n);
  return intsScratch.subarray(0, n);
}

function readNearDecimal(r: ByteReader, out: Float64Array, predicted: Float64Array | null): void {
  const k = r.byte();
  if (k > MAX_DECIMALS) r.fail(`decimal exponent ${k}`);
  const p = POW10[k]!;
  const ints = scratchInts(out.length);
  if (predicted === null) readDeltas(r, ints, 1);
  else for (let i = 0; i < ints.length; i++) ints[i] = predictedInt(predicted[i]!, p) + unzigzag(r.varint());
  let escapes = 0;
  for (let i = 0; i < out.length; i++) {
    const code = r.varint();
    if (code === 0) {
      out[i] = NaN;
      escapes++;
      continue;
    }
    if (!shiftUlps(ints[i]! / p, unzigzag(code - 1), out, i)) r.fail('near-decimal value out of range');
  }
  fillEscapes(r, out, escapes);
}

/** The escaped values (8 bytes each, little-endian) into the slots marked NaN. */
function fillEscapes(r: ByteReader, out: Float64Array, escapes: number): void {
  if (escapes === 0) return;
  const raw = r.bytes(escapes * 8);
  const escaped = new Float64Array(new Uint8Array(raw).buffer); // a copy: raw may be an unaligned view into a Buffer
  for (let i = 0, e = 0; i < out.length; i++) if (Number.isNaN(out[i]!) && e < escapes) out[i] = escaped[e++]!;
}

function readPredictedUlps(r: ByteReader, out: Float64Array, predicted: Float64Array): void {
  let escapes = 0;
  for (let i = 0; i < out.length; i++) {
    const code = r.varint();
    if (code === 0) {
      out[i] = NaN;
      escapes++;
      continue;
    }
    if (!shiftUlps(predicted[i]!, unzigzag(code - 1), out, i)) r.fail('predicted value out of range');
  }
  fillEscapes(r, out, escapes);
}
