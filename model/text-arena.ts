// Texts kept as UTF-8 bytes back to back in one growing buffer, by number (0, 1, … in the
// order added). A parse worker of a million-series node names a million metrics: as V8
// strings they cost a header and a GC-traced object each, here their bytes and 8 bytes of
// offsets, outside the V8 heap (issue 30). Read back as a string when asked.
import { grown } from './typed-arrays.js';

export class TextArena {
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  private starts = new Uint32Array(1024);
  private lengths = new Uint32Array(1024);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Keeps `text`; its number. */
  add(text: string): number {
    const n = this.count;
    if (n === this.starts.length) {
      this.starts = grown(this.starts, n * 2);
      this.lengths = grown(this.lengths, n * 2);
    }
    // At most 3 bytes a UTF-16 unit: room first, then encode in place.
    const most = text.length * 3;
    if (this.used + most > this.bytes.length) this.bytes = grown(this.bytes, Math.max(this.bytes.length * 2, this.used + most));
    const { written } = ENCODER.encodeInto(text, this.bytes.subarray(this.used));
    this.starts[n] = this.used;
    this.lengths[n] = written;
    this.used += written;
    this.count = n + 1;
    return n;
  }

  /** Text number `n` (as added). */
  text(n: number): string {
    if (!(n >= 0 && n < this.count)) throw new RangeError(`BUG: text ${n} of ${this.count}`);
    const start = this.starts[n]!;
    return DECODER.decode(this.bytes.subarray(start, start + this.lengths[n]!));
  }
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();
