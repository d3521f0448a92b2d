// Growing typed arrays: columns that hold a value per row and double when full.

export type NumberArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

/** A copy of `a` with room for `length` values (the new part zero, or `fill`). */
export function grown<T extends NumberArray>(a: T, length: number, fill = 0): T {
  const out = new (a.constructor as new (n: number) => T)(length);
  if (fill !== 0) out.fill(fill, a.length);
  out.set(a);
  return out;
}
