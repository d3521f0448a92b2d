// MSB-first bit streams for the XOR float codec. Values are written in chunks of at most
// 32 bits, so 64-bit patterns travel as two 32-bit halves and no bigint is needed.
import { BlockFormatError } from './errors.js';

export class BitWriter {
  private buf: Uint8Array;
  private bit = 0;

  constructor(capacity = 64) {
    this.buf = new Uint8Array(capacity);
  }

  /** Writes the low `n` bits (0..32) of `v`, most significant first. */
  write(v: number, n: number): void {
    if (((this.bit + n + 7) >>> 3) > this.buf.length) this.grow();
    while (n > 0) {
      const index = this.bit >>> 3;
      const free = 8 - (this.bit & 7);
      const take = free < n ? free : n;
      const chunk = (v >>> (n - take)) & ((1 << take) - 1);
      this.buf[index]! |= chunk << (free - take);
      this.bit += take;
      n -= take;
    }
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, (this.bit + 7) >>> 3);
  }

  private grow(): void {
    const next = new Uint8Array(this.buf.length * 2 + 16);
    next.set(this.buf);
    this.buf = next;
  }
}

export class BitReader {
  private bit = 0;

  constructor(
    private readonly buf: Uint8Array,
    /** Byte offset of the stream in the block, for error messages. */
    private readonly base: number,
  ) {}

  /** Moves past `n` bits without reading them. */
  skip(n: number): void {
    this.bit += n;
  }

  /** Reads `n` bits (0..32) as an unsigned number. */
  read(n: number): number {
    if (this.bit + n > this.buf.length * 8) throw new BlockFormatError(this.base + (this.bit >>> 3), 'bit stream ends early');
    let v = 0;
    while (n > 0) {
      const index = this.bit >>> 3;
      const avail = 8 - (this.bit & 7);
      const take = avail < n ? avail : n;
      const chunk = (this.buf[index]! >>> (avail - take)) & ((1 << take) - 1);
      v = v * (1 << take) + chunk; // multiplication keeps 32-bit results unsigned
      this.bit += take;
      n -= take;
    }
    return v;
  }
}
