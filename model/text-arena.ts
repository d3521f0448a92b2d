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

  /**
   * Texts [from, to) by number, in byte order (equal texts by number). Sorting with `compare`
   * calls it ≈ log n times a text, each walking the bytes the texts share (a dictionary's new
   * values, `bench.metric.N`, share most): here each text is first keyed by its four bytes after
   * the prefix all of them share, the keys sorted natively, and only texts with equal keys
   * compared byte by byte.
   */
  sortedRange(from: number, to: number): Uint32Array {
    const n = to - from;
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i++) out[i] = from + i;
    if (n < 2) return out;
    const byBytes = (a: number, b: number) => this.compare(a, b) || a - b;
    if (n > KEYED_MAX) return out.sort(byBytes);
    const skip = this.sharedPrefix(from, to);
    const packed = new Float64Array(n);
    for (let i = 0; i < n; i++) packed[i] = this.wordAt(from + i, skip) * KEY_SCALE + i;
    packed.sort();
    for (let i = 0; i < n; i++) out[i] = from + (packed[i]! % KEY_SCALE);
    // Runs of one key: in byte order by their whole texts.
    for (let i = 0; i < n; ) {
      const key = Math.floor(packed[i]! / KEY_SCALE);
      let j = i + 1;
      while (j < n && Math.floor(packed[j]! / KEY_SCALE) === key) j++;
      if (j - i > 1) out.subarray(i, j).sort(byBytes);
      i = j;
    }
    return out;
  }

  /**
   * Lists `a` and `b` of text numbers, each in byte order, merged into `into` in byte order (`a`'s
   * first on equal texts). Texts are told apart by their four bytes after the prefix all of them
   * share (for lists in order: the prefix their firsts and lasts share), and byte by byte only
   * when those are equal: a dictionary's values, merged again at each eighth of growth, mostly
   * share a long prefix that `compare` would walk at every step.
   */
  mergeSorted(a: Uint32Array, b: Uint32Array, into: Uint32Array): void {
    let skip = 0;
    if (a.length > 0 && b.length > 0) {
      const [a0, a1, b0, b1] = [a[0]!, a[a.length - 1]!, b[0]!, b[b.length - 1]!];
      skip = Math.min(this.commonPrefix(a0, a1), this.commonPrefix(b0, b1), this.commonPrefix(a0, b0));
    }
    let i = 0;
    let j = 0;
    let n = 0;
    let ka = i < a.length ? this.wordAt(a[i]!, skip) : 0;
    let kb = j < b.length ? this.wordAt(b[j]!, skip) : 0;
    while (i < a.length && j < b.length) {
      if (ka < kb || (ka === kb && this.compare(a[i]!, b[j]!) <= 0)) {
        into[n++] = a[i++]!;
        if (i < a.length) ka = this.wordAt(a[i]!, skip);
      } else {
        into[n++] = b[j++]!;
        if (j < b.length) kb = this.wordAt(b[j]!, skip);
      }
    }
    while (i < a.length) into[n++] = a[i++]!;
    while (j < b.length) into[n++] = b[j++]!;
  }

  /** Bytes texts `x` and `y` start with alike. */
  private commonPrefix(x: number, y: number): number {
    const [ax, ay] = [this.starts[x]!, this.starts[y]!];
    const most = Math.min(this.lengths[x]!, this.lengths[y]!);
    let i = 0;
    while (i < most && this.bytes[ax + i] === this.bytes[ay + i]) i++;
    return i;
  }

  /** Bytes every text of [from, to) starts with (at most the shortest's length). */
  private sharedPrefix(from: number, to: number): number {
    let shared = this.lengths[from]!;
    for (let n = from + 1; n < to && shared > 0; n++) shared = Math.min(shared, this.commonPrefix(from, n));
    return shared;
  }

  /**
   * Text n's four bytes from `skip`, big-endian, 0 past its end: texts in byte order have keys in
   * order, except that a text ending early keys like one going on with zero bytes (equal keys,
   * which the caller orders by the whole texts).
   */
  private wordAt(n: number, skip: number): number {
    const at = this.starts[n]! + skip;
    const left = this.lengths[n]! - skip;
    let word = 0;
    for (let i = 0; i < 4; i++) word = word * 256 + (i < left ? this.bytes[at + i]! : 0);
    return word;
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
/** `sortedRange` packs a 32-bit key and a position under 2^21 into one exact double. */
const KEY_SCALE = 2 ** 21;
const KEYED_MAX = KEY_SCALE;
