// Append-style byte writer and bounds-checked reader with LEB128 varints and zigzag,
// for safe-integer numbers and for bigints.
import { BlockFormatError } from './errors.js';

export class ByteWriter {
  private buf: Uint8Array;
  length = 0;

  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }

  ensure(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  /** Unsigned LEB128 of a non-negative safe integer. */
  varint(n: number): void {
    this.ensure(8);
    // One byte (most of a block's varints) without a call.
    if (n < 0x80) this.buf[this.length++] = n;
    else this.length = putVarint(this.buf, this.length, n);
  }

  /** Unsigned LEB128 of a non-negative bigint of any size. */
  bigVarint(n: bigint): void {
    while (n >= 0x80n) {
      this.byte(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    this.byte(Number(n));
  }

  /** The written bytes (a view; copy if the writer is reused). */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  /** A copy of the written bytes, and the writer emptied for its next use. */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.length);
    this.length = 0;
    return out;
  }

  /** Direct access for the bit writer, which appends in place. */
  get raw(): Uint8Array {
    return this.buf;
  }
}

export class ByteReader {
  pos = 0;

  constructor(readonly buf: Uint8Array) {}

  fail(reason: string): never {
    throw new BlockFormatError(this.pos, reason);
  }

  byte(): number {
    if (this.pos >= this.buf.length) this.fail('unexpected end of block');
    return this.buf[this.pos++]!;
  }

  bytes(n: number): Uint8Array {
    if (n > this.buf.length - this.pos) this.fail(`needs ${n} bytes, ${this.buf.length - this.pos} left`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /**
   * A little-endian double. Read through a DataView of exactly these bytes: the block may
   * be a view into a larger (pooled) buffer at any alignment, so `.buffer` of it is not it.
   */
  float64le(): number {
    const b = this.bytes(8);
    return new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
    }
    return this.fail('varint longer than 8 bytes');
  }

  bigVarint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
      shift += 7n;
    }
    return this.fail('varint longer than 10 bytes');
  }
}

/** Zigzag maps signed to unsigned so small magnitudes stay small: 0,-1,1,-2 → 0,1,2,3. */
export const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1);
export const unzigzag = (n: number): number => (n % 2 === 0 ? n / 2 : -(n + 1) / 2);
export const bigZigzag = (n: bigint): bigint => (n >= 0n ? n << 1n : (-n << 1n) - 1n);
export const bigUnzigzag = (n: bigint): bigint => ((n & 1n) === 0n ? n >> 1n : -((n + 1n) >> 1n));

/** Unsigned LEB128 of a non-negative safe integer into buf at `at` (room for 8 bytes); returns the end. */
export function putVarint(buf: Uint8Array, at: number, n: number): number {
  // One and two bytes (most ulp codes and deltas) without a loop.
  if (n < 0x80) {
    buf[at] = n;
    return at + 1;
  }
  if (n < 0x4000) {
    buf[at] = (n & 0x7f) | 0x80;
    buf[at + 1] = n >>> 7;
    return at + 2;
  }
  // Above 2^31 the bit operators would wrap: those bytes go by division.
  while (n >= 0x80000000) {
    buf[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[at++] = n;
  return at;
}
