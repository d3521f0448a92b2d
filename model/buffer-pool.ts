// Memory outside the JS heap, reused by size. Allocating many typed arrays of tens of kilobytes
// and more makes V8 run full mark-compacts to free them (it counts their memory as external);
// a pass that knows when it is done with its arrays gives their memory back here instead. Sizes
// go by powers of two; a few idle buffers are kept per size. One pool per use and per thread.

export class BufferPool {
  private readonly idle = new Map<number, ArrayBuffer[]>();
  /** Buffers made here, and which of them are idle (a second give of one is ignored). */
  private readonly ours = new WeakSet<ArrayBuffer>();
  private readonly idleSet = new WeakSet<ArrayBuffer>();

  constructor(
    /** Smallest buffer made, in bytes: smaller requests get one of this size. */
    private readonly minBytes: number,
    /** Larger requests get memory of their own, never kept. */
    private readonly maxBytes: number,
    /** Idle buffers kept per size. */
    private readonly idlePerSize: number,
  ) {}

  /** At least `bytes`; a reused buffer holds what it was last given back with unless `zeroed`. */
  take(bytes: number, zeroed: boolean): ArrayBuffer {
    if (bytes > this.maxBytes) return new ArrayBuffer(bytes);
    const size = Math.max(this.minBytes, 2 ** Math.ceil(Math.log2(Math.max(1, bytes))));
    const reused = this.idle.get(size)?.pop();
    if (reused === undefined) {
      const made = new ArrayBuffer(size);
      this.ours.add(made);
      return made;
    }
    this.idleSet.delete(reused);
    if (zeroed) new Uint8Array(reused, 0, bytes).fill(0);
    return reused;
  }

  /** Gives a buffer back: nothing may read it (or a view of it) after. Buffers not made here are ignored. */
  give(buffer: ArrayBuffer): void {
    if (!this.ours.has(buffer) || this.idleSet.has(buffer)) return;
    let list = this.idle.get(buffer.byteLength);
    if (list === undefined) this.idle.set(buffer.byteLength, (list = []));
    if (list.length >= this.idlePerSize) return;
    list.push(buffer);
    this.idleSet.add(buffer);
  }
}
