// Growing typed arrays: columns that hold a value per row and double when full.

export type NumberArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

/** A copy of `a` with room for `length` values (the new part zero, or `fill`). */
export function grown<T extends NumberArray>(a: T, length: number, fill = 0): T {
  const out = new (a.constructor as new (n: number) => T)(length);
  if (fill !== 0) out.fill(fill, a.length);
  out.set(a);
  return out;
}

/**
 * `a` when it has room for `needed` values, else a copy with `roomFor` them: a column filled an
 * append at a time is copied O(log n) times.
 */
export function withRoom<T extends NumberArray>(a: T, needed: number, fill = 0): T {
  return needed <= a.length ? a : grown(a, roomFor(a.length, needed, fill), fill);
}

/**
 * The length a growing column of `length` values takes when it needs `needed`: four times its
 * length (and `needed` at least). Room not yet used costs no memory — its pages are not touched,
 * so not resident — while each copy into a new column touches fresh pages, ≈ 14 µs a 4 KiB page
 * on our machines (README, Scale): grown fourfold, a column has copied a third of its final size
 * by the time it gets there, doubled all of it. A column whose new room is filled with a value
 * other than 0 touches all of it at once, so it doubles.
 */
export function roomFor(length: number, needed: number, fill = 0): number {
  return Math.max(needed, length * (fill === 0 ? 4 : 2));
}
