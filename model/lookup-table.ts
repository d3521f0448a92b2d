// Tables looked up by names from requests (transforms, rollup types, functions, units).
// A plain object literal inherits `valueOf`, `constructor`, `__proto__`…, so a request
// naming one of those found a function instead of "unknown" (fuzz: /read/…/valueOf/… → 500).
// A table without a prototype has only its own entries.

export function lookupTable<T>(entries: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, entries);
}

/**
 * A record keyed by user text (label names, tag texts) that must keep its prototype (it is
 * compared, spread and serialised like any object): `key`'s own value, never an inherited one.
 */
export function ownValue<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Sets `key` as an own property: an assignment to `__proto__` would set the prototype instead. */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
