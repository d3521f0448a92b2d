// Short-lived typed arrays carved out of shared slabs. A typed array of a few kilobytes costs
// ≈ 6 µs to make on Node 24 (its own zeroed backing store, which the GC then tracks as external
// memory) against ≈ 0.1 µs for a view of a slab: a 100-stream fetch made a dozen such arrays per
// stream, and making them was most of its time once its rollups were cached (issue 31).
//
// Only for arrays that die with the work that made them. A slab lives as long as any view of it,
// so a view kept in a cache keeps its whole slab; and `postMessage` clones a view's whole buffer,
// so a view must never be posted to another thread. Slab memory is never handed out twice: a
// view is zero when made, and no later view can overwrite one still in use.

/** Bytes per slab: a few hundred views of a day of 60 s periods each. */
const SLAB_BYTES = 1 << 20;
/** Larger arrays get their own memory: they would waste most of a slab. */
const LARGEST_BYTES = SLAB_BYTES >> 3;

let slab = new ArrayBuffer(SLAB_BYTES);
let used = 0;

/** `bytes` of zeroed slab memory at a multiple of 8, as [buffer, offset]. */
function carve(bytes: number): [ArrayBuffer, number] {
  const size = (bytes + 7) & ~7;
  if (used + size > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    used = 0;
  }
  const at = used;
  used += size;
  return [slab, at];
}

/** `bytes` of zeros as [buffer, offset] (a multiple of 8): a slab's, or a buffer of their own when large. */
export function scratchMemory(bytes: number): [ArrayBuffer, number] {
  return bytes > LARGEST_BYTES ? [new ArrayBuffer(bytes), 0] : carve(bytes);
}

/** n zeros, as a view of a slab (or its own memory when large). */
export function scratchFloat64(n: number): Float64Array {
  const [buffer, at] = scratchMemory(n * 8);
  return new Float64Array(buffer, at, n);
}

export function scratchUint8(n: number): Uint8Array {
  const [buffer, at] = scratchMemory(n);
  return new Uint8Array(buffer, at, n);
}

export function scratchInt32(n: number): Int32Array {
  const [buffer, at] = scratchMemory(n * 4);
  return new Int32Array(buffer, at, n);
}
