// Integer sequences for packed numeric blocks (format 5, docs/format/blocks.md): a block's scaled
// decimal mantissas as a constant, or as deltas / deltas of deltas whose residuals are written
// frame-of-reference bit-packed, as zigzag varints, or as zstd of those varints — whichever is
// smallest for this block. Random-walk gauges and counters have residuals spread evenly over a
// range, which a fixed bit width codes near their entropy (a varint wastes up to 7 bits in 8);
// zstd wins when a few residuals are far larger than the rest.
import { zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { BitReader, BitWriter } from './bitstream.js';
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
  if (ms.length === 0) return;
  const m0 = ms[0]!;
  if (ms.every((m) => m === m0)) {
    w.byte(Order.Constant);
    w.varint(zigzag(m0));
    return;
  }
  const deltas = differences(ms);
  const dods = differences(deltas);
  // The order is chosen on the cheap codings; zstd is then tried for that order only.
  const viaDelta = residualCoding(deltas.slice(1));
  const viaDod = dods.length > 2 && dods.every(Number.isSafeInteger) ? residualCoding(dods.slice(2)) : null;
  const useDod = viaDod !== null && viaDod.bytes.length + varintLength(zigzag(deltas[1]!)) < viaDelta.bytes.length;
  const chosen = withZstd(useDod ? viaDod : viaDelta);
  w.byte((useDod ? Order.DeltaOfDelta : Order.Delta) + 4 * chosen.packing);
  w.varint(zigzag(m0));
  if (useDod) w.varint(zigzag(deltas[1]!));
  w.bytes(chosen.bytes);
}

export function readIntegers(r: ByteReader, n: number): number[] {
  const out = new Array<number>(n);
  if (n === 0) return out;
  const mode = r.byte();
  const order = (mode & 3) as Order;
  const packing = (mode >>> 2) as Packing;
  out[0] = unzigzag(r.varint());
  if (order === Order.Constant) {
    if (packing !== 0) r.fail(`constant block with packing ${packing}`);
    out.fill(out[0]);
    return out;
  }
  if (order === Order.Delta) {
    const deltas = readResiduals(r, packing, n - 1);
    for (let i = 1; i < n; i++) out[i] = out[i - 1]! + deltas[i - 1]!;
    return out;
  }
  if (order !== Order.DeltaOfDelta || n < 3) r.fail(`unknown integer order ${order} for ${n} values`);
  let delta = unzigzag(r.varint());
  out[1] = out[0] + delta;
  const dods = readResiduals(r, packing, n - 2);
  for (let i = 2; i < n; i++) {
    delta += dods[i - 2]!;
    out[i] = out[i - 1]! + delta;
  }
  return out;
}

/** d[0] = xs[0], d[i] = xs[i] − xs[i−1]: index i of the result predicts from index i − 1. */
function differences(xs: readonly number[]): number[] {
  const out = new Array<number>(xs.length);
  out[0] = xs[0]!;
  for (let i = 1; i < xs.length; i++) out[i] = xs[i]! - xs[i - 1]!;
  return out;
}

interface Coded {
  packing: Packing;
  bytes: Uint8Array;
  /** The residuals as zigzag varints (what zstd compresses). */
  plain: Uint8Array;
  count: number;
}

function residualCoding(rs: readonly number[]): Coded {
  const varints = new ByteWriter(rs.length * 2 + 8);
  for (const x of rs) varints.varint(zigzag(x));
  const plain = varints.finish().slice();
  const bits = bitPacked(rs);
  if (bits !== null && bits.length <= plain.length) return { packing: Packing.Bits, bytes: bits, plain, count: rs.length };
  return { packing: Packing.Varints, bytes: plain, plain, count: rs.length };
}

function withZstd(coded: Coded): Coded {
  if (coded.count < ZSTD_MIN_RESIDUALS) return coded;
  const packed = zstdCompressSync(coded.plain);
  if (packed.length + 3 >= coded.bytes.length) return coded;
  const framed = new ByteWriter(packed.length + 4);
  framed.varint(packed.length);
  framed.bytes(packed);
  const bytes = framed.finish().slice();
  return bytes.length < coded.bytes.length ? { ...coded, packing: Packing.Zstd, bytes } : coded;
}

/** zigzag(min), the width byte, then each residual − min in `width` bits, MSB first. */
function bitPacked(rs: readonly number[]): Uint8Array | null {
  let min = rs[0]!;
  let max = min;
  for (const x of rs) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const range = max - min;
  if (!Number.isSafeInteger(range)) return null;
  const width = bitWidth(range);
  const w = new ByteWriter(Math.ceil((rs.length * width) / 8) + 10);
  w.varint(zigzag(min));
  w.byte(width);
  if (width > 0) {
    const bits = new BitWriter();
    for (const x of rs) writeBits(bits, x - min, width);
    w.bytes(bits.finish());
  }
  return w.finish().slice();
}

function readResiduals(r: ByteReader, packing: Packing, count: number): number[] {
  if (packing === Packing.Bits) return readBitPacked(r, count);
  if (packing === Packing.Varints) return readVarints(r, count);
  if (packing === Packing.Zstd) {
    const at = r.pos;
    const packed = r.bytes(r.varint());
    let plain: Uint8Array;
    try {
      plain = zstdDecompressSync(packed, { maxOutputLength: Math.max(1, count * MAX_VARINT_BYTES) });
    } catch (error) {
      throw new BlockFormatError(at, `zstd residuals do not decompress: ${(error as Error).message}`);
    }
    const inner = new ByteReader(plain);
    const out = readVarints(inner, count);
    if (inner.pos !== plain.length) r.fail('zstd residuals hold more than the block counts');
    return out;
  }
  return r.fail(`unknown residual packing ${packing as number}`);
}

function readVarints(r: ByteReader, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = unzigzag(r.varint());
  return out;
}

function readBitPacked(r: ByteReader, count: number): number[] {
  const min = unzigzag(r.varint());
  const width = r.byte();
  if (width > MAX_WIDTH) r.fail(`bit width ${width} exceeds ${MAX_WIDTH}`);
  const out = new Array<number>(count);
  if (width === 0) return out.fill(min);
  const at = r.pos;
  const bits = new BitReader(r.bytes(Math.ceil((count * width) / 8)), at);
  for (let i = 0; i < count; i++) out[i] = min + readBits(bits, width);
  return out;
}

function writeBits(bits: BitWriter, x: number, width: number): void {
  if (width <= 32) bits.write(x, width);
  else {
    bits.write(Math.floor(x / 2 ** 32), width - 32);
    bits.write(x % 2 ** 32, 32);
  }
}

function readBits(bits: BitReader, width: number): number {
  if (width <= 32) return bits.read(width);
  const hi = bits.read(width - 32);
  return hi * 2 ** 32 + bits.read(32);
}

/** Bits needed to write 0..range. */
function bitWidth(range: number): number {
  let width = 0;
  while (width < MAX_WIDTH && 2 ** width <= range) width++;
  return width;
}

function varintLength(n: number): number {
  let length = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    length++;
  }
  return length;
}
