// A binary min-heap of small integer ids by a number key, in typed arrays, with each id's
// position kept so an id can be removed from the middle (a buffer sealed or deleted before its
// due time leaves the seal schedule at once, so its row can be reused).
import { grown, withRoom } from '../../model/typed-arrays.js';

const NOT_IN_HEAP = -1;

export class IndexedMinHeap {
  private ids = new Int32Array(64);
  private keys = new Float64Array(64);
  /** Position of each id in `ids`, NOT_IN_HEAP when absent. */
  private pos = new Int32Array(64).fill(NOT_IN_HEAP);
  private n = 0;

  get size(): number {
    return this.n;
  }

  /** The smallest key (Infinity when empty). */
  peekKey(): number {
    return this.n === 0 ? Infinity : this.keys[0]!;
  }

  has(id: number): boolean {
    return id < this.pos.length && this.pos[id] !== NOT_IN_HEAP;
  }

  /** Adds `id` with `key`, or moves it to `key` when present. */
  push(id: number, key: number): void {
    if (this.has(id)) this.remove(id);
    this.room(id);
    const i = this.n++;
    this.place(i, id, key);
    this.up(i);
  }

  /** Takes the id with the smallest key; -1 when empty. */
  pop(): number {
    if (this.n === 0) return -1;
    const top = this.ids[0]!;
    this.removeAt(0);
    return top;
  }

  remove(id: number): void {
    if (this.has(id)) this.removeAt(this.pos[id]!);
  }

  private removeAt(i: number): void {
    const id = this.ids[i]!;
    this.pos[id] = NOT_IN_HEAP;
    const last = --this.n;
    if (i === last) return;
    this.place(i, this.ids[last]!, this.keys[last]!);
    this.down(i);
    this.up(i);
  }

  private place(i: number, id: number, key: number): void {
    this.ids[i] = id;
    this.keys[i] = key;
    this.pos[id] = i;
  }

  private up(i: number): void {
    const id = this.ids[i]!;
    const key = this.keys[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.keys[parent]! <= key) break;
      this.place(i, this.ids[parent]!, this.keys[parent]!);
      i = parent;
    }
    this.place(i, id, key);
  }

  private down(i: number): void {
    const id = this.ids[i]!;
    const key = this.keys[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.n) break;
      const r = l + 1;
      const child = r < this.n && this.keys[r]! < this.keys[l]! ? r : l;
      if (this.keys[child]! >= key) break;
      this.place(i, this.ids[child]!, this.keys[child]!);
      i = child;
    }
    this.place(i, id, key);
  }

  /** Grows the arrays to hold one more entry and ids up to `id`. */
  private room(id: number): void {
    if (this.n === this.ids.length) {
      this.ids = grown(this.ids, this.ids.length * 2);
      this.keys = grown(this.keys, this.keys.length * 2);
    }
    this.pos = withRoom(this.pos, id + 1, NOT_IN_HEAP);
  }
}
