// Tables looked up by names from requests (transforms, rollup types, functions, units).
// A plain object literal inherits `valueOf`, `constructor`, `__proto__`…, so a request
// naming one of those found a function instead of "unknown" (fuzz: /read/…/valueOf/… → 500).
// A table without a prototype has only its own entries.

export function lookupTable<T>(entries: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, entries);
}
