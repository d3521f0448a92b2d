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
 * `a` when it has room for `needed` values, else a copy doubled (to `needed` at least): a column
 * filled an append at a time is copied O(log n) times.
 */
export function withRoom<T extends NumberArray>(a: T, needed: number, fill = 0): T {
  return needed <= a.length ? a : grown(a, Math.max(needed, a.length * 2), fill);
}
