// JSON for time series, written by hand: values may be bigints (exact int64/uint64) and
// non-finite doubles, which JSON.stringify cannot write. Non-finite values become null:
// the interface never emits bare NaN/inf tokens.
import type { NumericValue } from './types.js';

export function numberJson(v: NumericValue): string {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return v.toString();
  return Number.isFinite(v) ? String(v) : 'null';
}

/** `[[ts, value], ...]` */
export function rowsJson<V>(ts: readonly number[], values: readonly V[], value: (v: V) => string): string {
  const parts = new Array<string>(ts.length);
  for (let i = 0; i < ts.length; i++) parts[i] = `[${ts[i]},${value(values[i]!)}]`;
  return `[${parts.join(',')}]`;
}
