// Texts kept as UTF-8 bytes back to back in one growing buffer, by number (0, 1, … in the
// order added). A parse worker of a million-series node names a million metrics, and an
// index dictionary holds a million values: as V8 strings they cost a header and a GC-traced
// object each, here their bytes and 8 bytes of offsets, outside the V8 heap (issue 30). Read
// back as a string when asked; compared and matched as bytes (UTF-8 byte order is code point
// order) without making one.
import { grown, roomFor, withRoom } from './typed-arrays.js';

export class TextArena {
  private bytes: Uint8Array;
  private used = 0;
  private starts: Uint32Array;
  private lengths: Uint32Array;
  private count = 0;

  /** Room at first for `bytes` bytes and `texts` texts (both grow by doubling). */
  constructor(bytes = 1 << 16, texts = 1024) {
    this.bytes = new Uint8Array(bytes);
    this.starts = new Uint32Array(texts);
    this.lengths = new Uint32Array(texts);
  }

  get size(): number {
    return this.count;
  }

  /** UTF-8 bytes of every text held. */
  get bytesUsed(): number {
    return this.used;
  }

  /** Keeps `text`; its number. */
  add(text: string): number {
    // At most 3 bytes a UTF-16 unit: room first, then encode in place.
    this.room(text.length * 3);
    return this.keep(ENCODER.encodeInto(text, this.bytes.subarray(this.used)).written);
  }

  /** Keeps the `length` bytes of `bytes` from `at` (UTF-8) as a text; its number. */
  addBytes(bytes: Uint8Array, length: number, at = 0): number {
    this.room(length);
    this.bytes.set(bytes.subarray(at, at + length), this.used);
    return this.keep(length);
  }

  /** Copies text `n`'s bytes into `target` from `at`. */
  copyTo(n: number, target: Uint8Array, at: number): void {
    const start = this.starts[n]!;
    target.set(this.bytes.subarray(start, start + this.lengths[n]!), at);
  }

  /** Text number `n` (as added). */
  text(n: number): string {
    if (!(n >= 0 && n < this.count)) throw new RangeError(`BUG: text ${n} of ${this.count}`);
    const start = this.starts[n]!;
    return DECODER.decode(this.bytes.subarray(start, start + this.lengths[n]!));
  }

  /** The UTF-8 length of text `n`. */
  byteLength(n: number): number {
    return this.lengths[n]!;
  }

  /** True when text `n` starts with the first `length` of `bytes`. */
  startsWith(n: number, bytes: Uint8Array, length: number): boolean {
    if (this.lengths[n]! < length) return false;
    const at = this.starts[n]!;
    for (let i = 0; i < length; i++) if (this.bytes[at + i] !== bytes[i]) return false;
    return true;
  }

  /** Byte order of texts `a` and `b` (negative: a first). */
  compare(a: number, b: number): number {
    return this.compareAt(a, this.bytes, this.starts[b]!, this.lengths[b]!);
  }

  /** Byte order of text `n` against the first `length` of `bytes` (negative: the text first). */
  compareBytes(n: number, bytes: Uint8Array, length: number): number {
    return this.compareAt(n, bytes, 0, length);
  }

  private compareAt(n: number, other: Uint8Array, from: number, length: number): number {
    const ln = this.lengths[n]!;
    const at = this.starts[n]!;
    const common = Math.min(ln, length);
    for (let i = 0; i < common; i++) {
      const d = this.bytes[at + i]! - other[from + i]!;
      if (d !== 0) return d;
    }
    return ln - length;
  }

  /** Room for `bytes` more bytes and one more text. */
  private room(bytes: number): void {
    if (this.count === this.starts.length) {
      this.starts = grown(this.starts, roomFor(this.count, this.count + 1));
      this.lengths = grown(this.lengths, roomFor(this.count, this.count + 1));
    }
    this.bytes = withRoom(this.bytes, this.used + bytes);
  }

  /** Numbers the `length` bytes just written at the end. */
  private keep(length: number): number {
    const n = this.count;
    this.starts[n] = this.used;
    this.lengths[n] = length;
    this.used += length;
    this.count = n + 1;
    return n;
  }
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();
