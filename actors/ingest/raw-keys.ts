// A parse worker's metrics by the raw bytes of a TSV line's check and name fields (issue 30:
// a sample of a known series allocates nothing). At a million series a Map keyed by name
// strings costs a string per line to look up, a string per series to keep, and a chain of
// cache misses per sample; here a line's fields are hashed where they lie in the body, and one
// probe of a typed open-addressing table, checked against a copy of the name's bytes, finds
// the metric. Check fields repeat line after line, so each is kept once, as a small number.
// A metric is its number (the worker's sid, actors/ingest/worker-series.ts), kept in a column.
import type { MetricResolution } from '../../model/ingest-record.js';
import type { KnownKeys } from '../../model/tsv.js';
import { placeEntry, slotsFor } from '../../model/hash-slots.js';
import { grown, roomFor, withRoom } from '../../model/typed-arrays.js';

const EMPTY = -1;
/** Slots per entry at least (load factor ≤ 1/2). */
const SLOTS_PER_ENTRY = 2;

export class RawKeys implements KnownKeys<number> {
  /** Check fields by their text (latin1 of their bytes: one string per distinct check). */
  private readonly checkIds = new Map<string, number>();
  private lastCheck: Buffer = Buffer.alloc(0);
  private lastCheckId = -1;
  /** Name bytes of every entry, back to back. */
  private arena = new Uint8Array(1 << 16);
  private arenaUsed = 0;
  private starts = new Uint32Array(1024);
  private lengths = new Uint32Array(1024);
  private hashes = new Uint32Array(1024);
  private checks = new Uint32Array(1024);
  /** Entry + 1 of the line that followed each entry's last time it was found (0: none yet). */
  private next = new Int32Array(1024);
  /** The entry the last `find` returned. */
  private previous = EMPTY;
  /**
   * Where the last `find` that missed looked, and the name's hash there: `resolveNew` of the same
   * fields (what a parse does next) neither hashes nor probes again (a million new series: ≈ 1 s).
   */
  private missed: { bytes: Buffer | null; from: number; to: number; check: number; hash: number } = { bytes: null, from: 0, to: 0, check: EMPTY, hash: 0 };
  private entries = 0;
  /** Each entry's metric. */
  private metrics = new Int32Array(1024);
  /** Entry + 1 per slot (0 = empty), by hash. */
  private slots = new Int32Array(2048);

  /** `resolve`: a check field and name as text to a metric (uncached: this table is the cache). */
  constructor(private readonly resolve: (checkField: string, name: string) => MetricResolution<number>) {}

  get size(): number {
    return this.entries;
  }

  find(bytes: Buffer, from: number, tab: number, to: number): number | undefined {
    const check = this.checkId(bytes, from, tab);
    if (check === EMPTY) return undefined;
    // Collectors send their series in the same order body after body: the entry that followed
    // the previous line's last time is tried first, without hashing or probing.
    const previous = this.previous;
    const guess = previous === EMPTY ? EMPTY : this.next[previous]! - 1;
    if (guess !== EMPTY && this.checks[guess] === check && this.lengths[guess] === to - tab - 1 && sameBytes(this.arena, this.starts[guess]!, bytes, tab + 1, to - tab - 1)) {
      this.previous = guess;
      return this.metrics[guess];
    }
    const hash = hashName(bytes, tab + 1, to, check);
    const entry = this.lookup(bytes, tab + 1, to, check, hash);
    if (entry === EMPTY) {
      this.remember(bytes, from, to, check, hash);
      return undefined;
    }
    if (previous !== EMPTY) this.next[previous] = entry + 1;
    this.previous = entry;
    return this.metrics[entry];
  }

  resolveNew(bytes: Buffer, from: number, tab: number, to: number): MetricResolution<number> {
    const resolved = this.resolve(bytes.toString('utf8', from, tab), bytes.toString('utf8', tab + 1, to));
    if (resolved.ok) this.add(bytes, from, tab, to, resolved.metric);
    return resolved;
  }

  private remember(bytes: Buffer, from: number, to: number, check: number, hash: number): void {
    const m = this.missed;
    m.bytes = bytes;
    m.from = from;
    m.to = to;
    m.check = check;
    m.hash = hash;
  }

  private add(bytes: Buffer, from: number, tab: number, to: number, metric: number): void {
    const m = this.missed;
    // The fields `find` just missed: nothing was added since (only `add` adds, and it clears this).
    const known = m.bytes === bytes && m.from === from && m.to === to && m.check !== EMPTY;
    m.bytes = null;
    const check = known ? m.check : this.checkId(bytes, from, tab, true);
    const hash = known ? m.hash : hashName(bytes, tab + 1, to, check);
    if (!known && this.lookup(bytes, tab + 1, to, check, hash) !== EMPTY) return;
    const entry = this.entries++;
    if (entry === this.starts.length) this.growEntries();
    if ((entry + 1) * SLOTS_PER_ENTRY > this.slots.length) this.slots = slotsFor(this.slots.length * 2, this.hashes, entry);
    const length = to - tab - 1;
    this.arena = withRoom(this.arena, this.arenaUsed + length);
    this.arena.set(bytes.subarray(tab + 1, to), this.arenaUsed);
    this.starts[entry] = this.arenaUsed;
    this.lengths[entry] = length;
    this.arenaUsed += length;
    this.hashes[entry] = hash;
    this.checks[entry] = check;
    this.metrics[entry] = metric;
    placeEntry(this.slots, this.hashes, entry);
    if (this.previous !== EMPTY) this.next[this.previous] = entry + 1;
    this.previous = entry;
  }

  /** The entry holding the name bytes [from, to) of check `check`, or EMPTY. */
  private lookup(bytes: Uint8Array, from: number, to: number, check: number, hash: number): number {
    const mask = this.slots.length - 1;
    const length = to - from;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry === EMPTY) return EMPTY;
      if (this.hashes[entry] !== hash || this.checks[entry] !== check || this.lengths[entry] !== length) continue;
      if (sameBytes(this.arena, this.starts[entry]!, bytes, from, length)) return entry;
    }
  }

  private growEntries(): void {
    const n = roomFor(this.starts.length, this.entries + 1);
    this.starts = grown(this.starts, n);
    this.lengths = grown(this.lengths, n);
    this.hashes = grown(this.hashes, n);
    this.checks = grown(this.checks, n);
    this.next = grown(this.next, n);
    this.metrics = grown(this.metrics, n);
  }

  /** The number of the check field [from, to): the last one's when the bytes are the same; EMPTY when unknown and not `create`. */
  private checkId(bytes: Buffer, from: number, to: number, create = false): number {
    if (this.lastCheckId !== EMPTY && to - from === this.lastCheck.length && sameBytes(this.lastCheck, 0, bytes, from, to - from)) return this.lastCheckId;
    const text = bytes.toString('latin1', from, to);
    let id = this.checkIds.get(text);
    if (id === undefined) {
      if (!create) return EMPTY;
      id = this.checkIds.size;
      this.checkIds.set(text, id);
    }
    this.lastCheck = Buffer.from(bytes.subarray(from, to));
    this.lastCheckId = id;
    return id;
  }
}

/** FNV-1a over the name's bytes, seeded with the check's number. */
function hashName(bytes: Uint8Array, from: number, to: number, check: number): number {
  let h = (0x811c9dc5 ^ Math.imul(check, 0x9e3779b1)) >>> 0;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

function sameBytes(a: Uint8Array, at: number, b: Uint8Array, from: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[at + i] !== b[from + i]) return false;
  return true;
}
