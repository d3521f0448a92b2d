// Open-addressing slots for tables whose entries are numbered 0, 1, … and keep their own 32-bit
// hashes in a column (actors/ingest/raw-keys.ts, storage/metric-index/term-dictionary.ts): a
// slot holds entry + 1 (0: empty); an entry sits at the first empty slot from its hash on.
// Callers keep the slots at most half full, so a probe ends at an empty slot.

/** Puts `entry` (hash `hashes[entry]`) into the first empty slot from its hash on. */
export function placeEntry(slots: Int32Array, hashes: Uint32Array, entry: number): void {
  const mask = slots.length - 1;
  let slot = hashes[entry]! & mask;
  while (slots[slot] !== 0) slot = (slot + 1) & mask;
  slots[slot] = entry + 1;
}

/** `size` (a power of two) slots holding entries 0 … count − 1. */
export function slotsFor(size: number, hashes: Uint32Array, count: number): Int32Array<ArrayBuffer> {
  const slots = new Int32Array(size);
  for (let entry = 0; entry < count; entry++) placeEntry(slots, hashes, entry);
  return slots;
}
