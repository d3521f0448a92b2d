// Pooled typed memory for open numeric buffers (issue 30). A million open buffers as one
// Float64Array each cost about 300 bytes of V8 objects apiece before holding a sample; here every
// buffer's (ts, value) pairs live in fixed-size chunks, linked into a chain per buffer. One chunk
// size means no fragmentation between size classes: a chunk freed by a sealed buffer is the next
// one any buffer takes. Chunks sit in slabs of a fixed size, added as needed: one array doubled
// and copied cost more to allocate than to copy at a million series (a large new ArrayBuffer
// drags V8's external-memory accounting and GC with it), and held both copies until collected.
import { grown, roomFor } from '../../model/typed-arrays.js';

/** Pairs per chunk: small, since most open buffers hold a few samples (one per scrape so far). */
export const CHUNK_PAIRS = 4;
const CHUNK_DOUBLES = CHUNK_PAIRS * 2;
/** A chunk read as bytes (one holding encoded samples: actors/shard/window-buffer.ts). */
export const CHUNK_BYTES = CHUNK_DOUBLES * 8;
/** Chunks per slab (128 KiB of doubles: a partition holding a few series pays for one). */
const SLAB_SHIFT = 11;
const SLAB_CHUNKS = 1 << SLAB_SHIFT;
/** Chunks the link column first has room for; it doubles when full (4 bytes a chunk). */
const INITIAL_CHUNKS = 1024;

/** A chunk's number in the pool. */
export type ChunkId = number;
export const NO_CHUNK: ChunkId = -1;

export class SampleChunks {
  private readonly slabs: Float64Array[] = [];
  /** The same slabs as bytes. */
  private readonly slabBytes: Uint8Array[] = [];
  /** Next chunk of a chain (or of the free list); NO_CHUNK at the end. */
  private nextOf = new Int32Array(INITIAL_CHUNKS);
  private freeHead: ChunkId = NO_CHUNK;
  /** Chunks ever carved (the next fresh one's id). */
  private carved = 0;
  /** Chunks in chains now. */
  private inUse = 0;

  /** A chunk of its own, not linked to anything. */
  alloc(): ChunkId {
    let c = this.freeHead;
    if (c !== NO_CHUNK) this.freeHead = this.nextOf[c]!;
    else c = this.carve();
    this.nextOf[c] = NO_CHUNK;
    this.inUse++;
    return c;
  }

  /** Links `c` after `tail`. */
  link(tail: ChunkId, c: ChunkId): void {
    this.nextOf[tail] = c;
  }

  next(c: ChunkId): ChunkId {
    return this.nextOf[c]!;
  }

  /** Returns a whole chain, from `head`, to the pool. */
  freeChain(head: ChunkId): void {
    let c = head;
    while (c !== NO_CHUNK) {
      const next = this.nextOf[c]!;
      this.nextOf[c] = this.freeHead;
      this.freeHead = c;
      this.inUse--;
      c = next;
    }
  }

  /** The array holding chunk `c`; its pairs start at `offset(c)` there: ts, value, ts, value… */
  slabOf(c: ChunkId): Float64Array {
    return this.slabs[c >> SLAB_SHIFT]!;
  }

  offset(c: ChunkId): number {
    return (c & (SLAB_CHUNKS - 1)) * CHUNK_DOUBLES;
  }

  /** The bytes of chunk `c`'s slab; the chunk's CHUNK_BYTES start at `offset(c) * 8` there. */
  bytesOf(c: ChunkId): Uint8Array {
    return this.slabBytes[c >> SLAB_SHIFT]!;
  }

  /** Bytes of room made, and of chunks holding samples now. */
  get bytes(): { allocated: number; used: number } {
    return { allocated: this.slabs.length * SLAB_CHUNKS * CHUNK_DOUBLES * 8, used: this.inUse * CHUNK_DOUBLES * 8 };
  }

  private carve(): ChunkId {
    const c = this.carved++;
    if (c === this.nextOf.length) this.nextOf = grown(this.nextOf, roomFor(c, c + 1));
    if (c >> SLAB_SHIFT === this.slabs.length) {
      const slab = new Float64Array(SLAB_CHUNKS * CHUNK_DOUBLES);
      this.slabs.push(slab);
      this.slabBytes.push(new Uint8Array(slab.buffer));
    }
    return c;
  }
}
