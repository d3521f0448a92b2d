// Smallest and largest of a list of any length. `Math.min(...list)` passes the list as call
// arguments and overflows the stack past ~100k elements (a CAQL grid, a PromQL range);
// these loop instead. Like Math.min/max: NaN if any value is NaN, ±Infinity when empty.

export function minOf(values: ArrayLike<number>): number {
  let min = Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isNaN(v)) return NaN;
    if (v < min) min = v;
  }
  return min;
}

export function maxOf(values: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isNaN(v)) return NaN;
    if (v > max) max = v;
  }
  return max;
}
