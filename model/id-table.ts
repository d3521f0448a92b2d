// Metric storage ids (16 bytes of SHA-256, model/metric-key.ts) to dense numbers 0, 1, 2…,
// in typed memory: at a million series a Map keyed by strings costs an entry and a key string
// per series on the V8 heap (which V8 lets grow to a multiple of what is live, issue 30), and
// hashing the string per lookup. Here an id's first four bytes are its hash (they are
// uniformly spread already) and an open-addressing table of numbers points into one array of
// the ids back to back.
import { grown, roomFor } from './typed-arrays.js';

const ID_BYTES = 16;

export class IdTable {
  private ids = new Uint8Array(ID_BYTES * 1024);
  /** Number + 1 per slot (0: empty), at most half full. */
  private slots = new Int32Array(2048);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The number of `id` (its first 16 bytes), or -1. */
  find(id: Uint8Array): number {
    const mask = this.slots.length - 1;
    for (let slot = hashOf(id, 0) & mask; ; slot = (slot + 1) & mask) {
      const n = this.slots[slot]! - 1;
      if (n < 0) return -1;
      if (this.sameId(n, id)) return n;
    }
  }

  /** The id numbered `n`, as a view (one made before the table grew still reads it: the old array keeps it). */
  view(n: number): Buffer {
    return Buffer.from(this.ids.buffer, n * ID_BYTES, ID_BYTES);
  }

  /**
   * The number of `id`, numbering it if new: one probe either way (a new series' `find` and
   * `add` probed the table twice, each a likely cache miss at a million ids).
   */
  numberOf(id: Uint8Array): number {
    const mask = this.slots.length - 1;
    let slot = hashOf(id, 0) & mask;
    for (; ; slot = (slot + 1) & mask) {
      const n = this.slots[slot]! - 1;
      if (n < 0) break;
      if (this.sameId(n, id)) return n;
    }
    const n = this.append(id);
    // The empty slot the probe ended at is where `place` would put it, unless the slots grew.
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.slots[slot] = n + 1;
    return n;
  }

  /** Numbers `id`, which must not be in the table: the next number. */
  add(id: Uint8Array): number {
    const n = this.append(id);
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(n);
    return n;
  }

  /** Keeps `id`'s bytes as the next number (not yet in a slot). */
  private append(id: Uint8Array): number {
    const n = this.count++;
    if (this.count * ID_BYTES > this.ids.length) this.ids = grown(this.ids, roomFor(this.ids.length, this.count * ID_BYTES));
    this.ids.set(id.subarray(0, ID_BYTES), n * ID_BYTES);
    return n;
  }

  private sameId(n: number, id: Uint8Array): boolean {
    const at = n * ID_BYTES;
    for (let i = 0; i < ID_BYTES; i++) if (this.ids[at + i] !== id[i]) return false;
    return true;
  }

  private place(n: number): void {
    const mask = this.slots.length - 1;
    let slot = hashOf(this.ids, n * ID_BYTES) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = n + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    for (let n = 0; n < this.count; n++) this.place(n);
  }
}

function hashOf(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}
