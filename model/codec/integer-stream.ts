// Integer sequences for packed numeric blocks (format 5, docs/format/blocks.md): a block's scaled
// decimal mantissas as a constant, or as deltas / deltas of deltas whose residuals are written
// frame-of-reference bit-packed, as zigzag varints, or as zstd of those varints — whichever is
// smallest for this block. Random-walk gauges and counters have residuals spread evenly over a
// range, which a fixed bit width codes near their entropy (a varint wastes up to 7 bits in 8);
// zstd wins when a few residuals are far larger than the rest.
import { zstdCompressSync } from 'node:zlib';
import { zstdPlain } from './zstd-plain.js';
import { BitReader } from './bitstream.js';
import { ByteReader, ByteWriter, unzigzag, zigzag } from './bytes.js';
import { BlockFormatError } from './errors.js';

/** How the mantissas are predicted (low 2 bits of the mode byte). */
const Order = { Constant: 0, Delta: 1, DeltaOfDelta: 2 } as const;
type Order = (typeof Order)[keyof typeof Order];
/** How the residuals are written (the mode byte's upper bits, times 4). */
const Packing = { Bits: 0, Varints: 1, Zstd: 2 } as const;
type Packing = (typeof Packing)[keyof typeof Packing];

/** Widest residual range a bit-packed stream holds: ranges stay exact safe integers. */
const MAX_WIDTH = 53;
/** zstd's frame costs ~10 bytes; below this many residuals it never pays. */
const ZSTD_MIN_RESIDUALS = 32;
/** A zigzag varint of a safe integer takes at most 8 bytes. */
const MAX_VARINT_BYTES = 8;

/** Writes `ms` (safe integers, |m| ≤ 2^51) in the smallest of the codings above. */
export function writeIntegers(w: ByteWriter, ms: readonly number[]): void {
  const n = ms.length;
  if (n === 0) return;
  const m0 = ms[0]!;
  if (isConstant(ms)) {
    w.byte(Order.Constant);
    w.varint(zigzag(m0));
    return;
  }
  // Both residual orders go into scratch columns (a block is encoded at a time, synchronously):
  // a series' first part, sealed blocks and merges each encode one, a million series at a time.
  const deltas = differencesInto(ms, n, scratchColumn(0, n));
  const dods = differencesInto(deltas, n, scratchColumn(1, n));
  // The order is chosen on sizes computed without writing anything; only the winner is written.
  const viaDelta = residualStats(deltas, 1, n);
  const viaDod = n > 2 && allSafeFrom(dods, 2, n) ? residualStats(dods, 2, n) : null;
  const useDod = viaDod !== null && viaDod.bytes + varintLength(zigzag(deltas[1]!)) < viaDelta.bytes;
  const stats = useDod ? viaDod : viaDelta;
  const residuals = useDod ? dods : deltas;
  const varints = stats.packing === Packing.Varints && n - stats.from >= ZSTD_MIN_RESIDUALS ? varintStream(residuals, stats.from, n) : null;
  const zstd = varints === null ? null : zstdFramed(varints, n - stats.from);
  const packing = zstd !== null ? Packing.Zstd : stats.packing;
  w.byte((useDod ? Order.DeltaOfDelta : Order.Delta) + 4 * packing);
  w.varint(zigzag(m0));
  if (useDod) w.varint(zigzag(deltas[1]!));
  if (zstd !== null) w.bytes(zstd);
  else if (varints !== null) w.bytes(varints);
  // Too few residuals for zstd to pay: the varints go straight into the block.
  else if (stats.packing === Packing.Varints) writeVarints(w, residuals, stats.from, n);
  else writeBitPacked(w, residuals, stats, n);
}

function isConstant(ms: readonly number[]): boolean {
  const m0 = ms[0]!;
  for (let i = 1; i < ms.length; i++) if (ms[i] !== m0) return false;
  return true;
}

function allSafeFrom(xs: Float64Array, from: number, n: number): boolean {
  for (let i = from; i < n; i++) if (!Number.isSafeInteger(xs[i])) return false;
  return true;
}

/** Two columns of doubles `writeIntegers` reuses: grown to the longest block encoded (at most a merged block, 8192 samples, or `maxBlockSamples`) and kept. */
const scratchColumns = [new Float64Array(1024), new Float64Array(1024)];

function scratchColumn(k: 0 | 1, n: number): Float64Array {
  if (scratchColumns[k]!.length < n) scratchColumns[k] = new Float64Array(Math.max(n, 2 * scratchColumns[k]!.length));
  return scratchColumns[k]!;
}

export function readIntegers(r: ByteReader, n: number): number[] {
  const out = new Array<number>(n);
  readIntegersInto(r, n, out, 0);
  return out;
}

/**
 * `readIntegers` into out[at..at + n) (a JS array or, for rollup reads, a Float64Array), each
 * integer m written as m / `divisor` · `multiplier` (a packed block's decimal scale, applied in
 * the pass that sums the residuals: m / 1 and m · 1 are m, so the bits are those of scaling after).
 */
export function readIntegersInto(r: ByteReader, n: number, out: number[] | Float64Array, at: number, divisor = 1, multiplier = 1): void {
  if (n === 0) return;
  const mode = r.byte();
  const order = (mode & 3) as Order;
  const packing = (mode >>> 2) as Packing;
  const m0 = unzigzag(r.varint());
  out[at] = (m0 / divisor) * multiplier;
  if (order === Order.Constant) {
    if (packing !== 0) r.fail(`constant block with packing ${packing}`);
    out.fill((m0 / divisor) * multiplier, at, at + n);
    return;
  }
  if (order === Order.Delta) {
    if (packing === Packing.Bits) return readBitPackedSums(r, n - 1, out, at + 1, { m: m0, delta: 0, dod: false, divisor, multiplier });
    // The residuals are read into the output, then summed (and scaled) in place.
    readResidualsInto(r, packing, n - 1, out, at + 1);
    let m = m0;
    for (let i = at + 1; i < at + n; i++) out[i] = ((m += out[i]!) / divisor) * multiplier;
    return;
  }
  if (order !== Order.DeltaOfDelta || n < 3) r.fail(`unknown integer order ${order} for ${n} values`);
  let delta = unzigzag(r.varint());
  out[at + 1] = ((m0 + delta) / divisor) * multiplier;
  if (packing === Packing.Bits) return readBitPackedSums(r, n - 2, out, at + 2, { m: m0 + delta, delta, dod: true, divisor, multiplier });
  readResidualsInto(r, packing, n - 2, out, at + 2);
  let m = m0 + delta;
  for (let i = at + 2; i < at + n; i++) {
    delta += out[i]!;
    out[i] = ((m += delta) / divisor) * multiplier;
  }
}

/** out[0] = xs[0], out[i] = xs[i] − xs[i−1] for i < n: index i predicts from index i − 1. Returns `out`. */
function differencesInto(xs: ArrayLike<number>, n: number, out: Float64Array): Float64Array {
  out[0] = xs[0]!;
  for (let i = 1; i < n; i++) out[i] = xs[i]! - xs[i - 1]!;
  return out;
}

/** What the residuals xs[from..] would cost, and how they are best written without zstd. */
interface Stats {
  from: number;
  min: number;
  width: number;
  packing: Packing;
  bytes: number;
}

/** Of xs[from..n). */
function residualStats(xs: Float64Array, from: number, n: number): Stats {
  let min = xs[from]!;
  let max = min;
  let varintBytes = 0;
  for (let i = from; i < n; i++) {
    const x = xs[i]!;
    if (x < min) min = x;
    if (x > max) max = x;
    varintBytes += varintLength(zigzag(x));
  }
  const range = max - min;
  if (!Number.isSafeInteger(range)) return { from, min, width: 0, packing: Packing.Varints, bytes: varintBytes };
  const width = bitWidth(range);
  const bitBytes = varintLength(zigzag(min)) + 1 + Math.ceil(((n - from) * width) / 8);
  return bitBytes <= varintBytes ? { from, min, width, packing: Packing.Bits, bytes: bitBytes } : { from, min, width, packing: Packing.Varints, bytes: varintBytes };
}

function varintStream(xs: Float64Array, from: number, n: number): Uint8Array {
  const w = new ByteWriter((n - from) * 3 + 8);
  writeVarints(w, xs, from, n);
  return w.finish();
}

function writeVarints(w: ByteWriter, xs: Float64Array, from: number, n: number): void {
  for (let i = from; i < n; i++) w.varint(zigzag(xs[i]!));
}

/**
 * zstd is tried only when bit-packing lost to varints, i.e. when a few residuals are much wider
 * than the rest: on evenly spread residuals it never beat the bit width in bench:raw-bytes, and
 * compressing every block made sealing several times dearer. Returns the framed stream when smaller.
 */
function zstdFramed(varints: Uint8Array, count: number): Uint8Array | null {
  if (count < ZSTD_MIN_RESIDUALS) return null;
  const packed = zstdCompressSync(varints);
  if (packed.length + varintLength(packed.length) >= varints.length) return null;
  const framed = new ByteWriter(packed.length + 4);
  framed.varint(packed.length);
  framed.bytes(packed);
  return framed.finish();
}

/** zigzag(min), the width byte, then each residual − min in `width` bits, MSB first. */
function writeBitPacked(w: ByteWriter, xs: Float64Array, { from, min, width }: Stats, n: number): void {
  w.varint(zigzag(min));
  w.byte(width);
  if (width === 0) return;
  const bytes = Math.ceil(((n - from) * width) / 8);
  w.ensure(bytes);
  // Packed straight into the writer's buffer (a BitWriter of its own, then a copy, cost more
  // than the packing for the short blocks most series seal).
  const out = w.raw;
  out.fill(0, w.length, w.length + bytes);
  let bit = w.length * 8;
  for (let i = from; i < n; i++, bit += width) packBits(out, bit, xs[i]! - min, width);
  w.length += bytes;
}

/** Writes the low `width` bits of x (a safe integer ≥ 0) at bit `bit` of `out` (zeroed), MSB first. */
function packBits(out: Uint8Array, bit: number, x: number, width: number): void {
  if (width > 32) {
    packBits(out, bit, Math.floor(x / 2 ** 32), width - 32);
    packBits(out, bit + width - 32, x % 2 ** 32, 32);
    return;
  }
  let n = width;
  while (n > 0) {
    const index = bit >>> 3;
    const free = 8 - (bit & 7);
    const take = free < n ? free : n;
    out[index]! |= ((x >>> (n - take)) & ((1 << take) - 1)) << (free - take);
    bit += take;
    n -= take;
  }
}

function readResidualsInto(r: ByteReader, packing: Packing, count: number, out: number[] | Float64Array, at: number): void {
  if (packing === Packing.Varints) return readVarints(r, count, out, at);
  if (packing === Packing.Zstd) {
    const pos = r.pos;
    const packed = r.bytes(r.varint());
    let plain: Uint8Array;
    try {
      plain = zstdPlain.plain(packed, Math.max(1, count * MAX_VARINT_BYTES));
    } catch (error) {
      throw new BlockFormatError(pos, `zstd residuals do not decompress: ${(error as Error).message}`);
    }
    const inner = new ByteReader(plain);
    readVarints(inner, count, out, at);
    if (inner.pos !== plain.length) r.fail('zstd residuals hold more than the block counts');
    return;
  }
  return r.fail(`unknown residual packing ${packing as number}`);
}

function readVarints(r: ByteReader, count: number, out: number[] | Float64Array, at: number): void {
  for (let i = at; i < at + count; i++) out[i] = unzigzag(r.varint());
}

/** Widest residual the unpacking loop below reads from its 32-bit window (wider ones go through BitReader). */
const FAST_WIDTH = 24;

/** How bit-packed residuals become integers: the sums before the first, and the decimal scale. */
interface Sums {
  m: number;
  delta: number;
  /** Residuals are deltas of deltas (else deltas). */
  dod: boolean;
  divisor: number;
  multiplier: number;
}

/**
 * `count` bit-packed residuals summed into integers as they are read, each written scaled to
 * out[at..]: one pass over the values, where reading the residuals, summing them and scaling
 * were three (a tenth of a raw read's decoding). The same additions in the same order.
 */
function readBitPackedSums(r: ByteReader, count: number, out: number[] | Float64Array, at: number, s: Sums): void {
  const min = unzigzag(r.varint());
  const width = r.byte();
  if (width > MAX_WIDTH) r.fail(`bit width ${width} exceeds ${MAX_WIDTH}`);
  const pos = r.pos;
  const bytes = r.bytes(Math.ceil((count * width) / 8));
  let { m, delta } = s;
  const { dod, divisor, multiplier } = s;
  // MSB first, as BitWriter wrote them. Each value is cut from the four bytes holding its first
  // bit (no branch on how many bytes it spans); the last few values, whose four bytes would run
  // past the stream, and values wider than the window, are read through BitReader.
  const fast = width === 0 ? count : width > FAST_WIDTH ? 0 : Math.max(0, Math.min(count, Math.floor(((bytes.length - 4) * 8) / width)));
  const mask = width === 0 ? 0 : (1 << Math.min(width, FAST_WIDTH)) - 1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let bit = 0;
  let i = at;
  const stop = at + fast;
  // One loop per kind of stream, each with nothing to decide per value.
  if (width === 0 && dod) for (; i < stop; i++) out[i] = ((m += delta += min) / divisor) * multiplier;
  else if (width === 0) for (; i < stop; i++) out[i] = ((m += min) / divisor) * multiplier;
  else if (dod) for (; i < stop; i++, bit += width) out[i] = ((m += delta += min + ((view.getUint32(bit >>> 3) >>> (32 - width - (bit & 7))) & mask)) / divisor) * multiplier;
  else for (; i < stop; i++, bit += width) out[i] = ((m += min + ((view.getUint32(bit >>> 3) >>> (32 - width - (bit & 7))) & mask)) / divisor) * multiplier;
  if (i === at + count) return;
  const bits = new BitReader(bytes, pos);
  bits.skip(bit);
  for (const stop = at + count; i < stop; i++) {
    const x = min + readBits(bits, width);
    if (dod) m += delta += x;
    else m += x;
    out[i] = (m / divisor) * multiplier;
  }
}

function readBits(bits: BitReader, width: number): number {
  if (width <= 32) return bits.read(width);
  const hi = bits.read(width - 32);
  return hi * 2 ** 32 + bits.read(32);
}

/** Bits needed to write 0..range. */
function bitWidth(range: number): number {
  if (range < 2 ** 32) return 32 - Math.clz32(range);
  let width = 32;
  while (width < MAX_WIDTH && 2 ** width <= range) width++;
  return width;
}

function varintLength(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  let length = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    length++;
  }
  return length;
}
