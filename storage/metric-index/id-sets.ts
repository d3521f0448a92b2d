// Sets of dense metric ids as sorted Uint32Arrays, and the operations a query plan needs:
// intersection (galloping when the sizes differ a lot), union (a bitset when the inputs are
// large), difference. Posting lists grow in place (IdList) and are read as views.

const EMPTY = new Uint32Array(0);

/**
 * A sorted, growable list of ids. Ids mostly arrive in ascending order (they are dense and
 * assigned in order). A list of one id (most `__name` terms name one metric) holds it in a
 * field: a typed array per term would cost about 200 bytes a series.
 */
export class IdList {
  private array: Uint32Array | null = null;
  /** The id while the list holds exactly one and no array yet. */
  private one = 0;
  size = 0;

  /** Adds `id` keeping the list sorted; an id already present is not added again. */
  add(id: number): void {
    const n = this.size;
    if (n === 0) return this.first(id);
    const ids = this.room();
    if (ids[n - 1]! < id) {
      ids[n] = id;
      this.size = n + 1;
      return;
    }
    // Out of order: two writes that named new metrics finished in the other order.
    const at = lowerBound(ids, 0, n, id);
    if (ids[at] === id) return;
    ids.copyWithin(at + 1, at, n);
    ids[at] = id;
    this.size = n + 1;
  }

  /** A list of `ids` (sorted, distinct), kept as given (an index snapshot's). */
  static of(ids: Uint32Array): IdList {
    const list = new IdList();
    list.assign(ids);
    return list;
  }

  /** Takes `ids` (sorted, distinct) as the list, as given. */
  protected assign(ids: Uint32Array): void {
    if (ids.length === 1) this.first(ids[0]!);
    else if (ids.length > 1) {
      this.array = ids;
      this.size = ids.length;
    }
  }

  /** Appends without keeping order (a bulk load); `sortUnique` restores it. */
  push(id: number): void {
    if (this.size === 0) return this.first(id);
    this.room()[this.size++] = id;
  }

  sortUnique(): void {
    if (this.array === null) return;
    const sorted = this.view().sort();
    let n = 0;
    for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[n++] = sorted[i]!;
    this.size = n;
  }

  /** The ids, as a view valid until the list is next compacted (appends never disturb it). */
  view(): Uint32Array {
    if (this.array !== null) return this.array.subarray(0, this.size);
    return this.size === 0 ? EMPTY : Uint32Array.of(this.one);
  }

  /** Drops ids `keep` rejects, into a fresh array (views handed out earlier stay intact). */
  compact(keep: (id: number) => boolean): void {
    const kept = this.view().filter(keep);
    this.array = null;
    this.size = 0;
    if (kept.length === 1) this.first(kept[0]!);
    else if (kept.length > 1) {
      this.array = kept;
      this.size = kept.length;
    }
  }

  private first(id: number): void {
    this.one = id;
    this.size = 1;
  }

  /** The array, with room for one more id (made from the single id when there is none yet). */
  private room(): Uint32Array {
    if (this.array === null) {
      this.array = new Uint32Array(4);
      this.array[0] = this.one;
    } else if (this.size === this.array.length) {
      const next = new Uint32Array(this.array.length * 2);
      next.set(this.array);
      this.array = next;
    }
    return this.array;
  }
}

/** First index in [from, to) whose id is >= `id`. */
export function lowerBound(a: Uint32Array, from: number, to: number, id: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Ids in both sorted sets. */
export function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length > b.length) [a, b] = [b, a];
  if (a.length === 0) return EMPTY;
  return a.length * 16 < b.length ? gallop(a, b) : mergeIntersect(a, b);
}

function mergeIntersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      out[n++] = x;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return out.subarray(0, n);
}

/** For each id of the small set, an exponential then binary search in the large one. */
function gallop(small: Uint32Array, large: Uint32Array): Uint32Array {
  const out = new Uint32Array(small.length);
  let n = 0;
  let lo = 0;
  for (let i = 0; i < small.length && lo < large.length; i++) {
    const id = small[i]!;
    let step = 1;
    let hi = lo;
    while (hi < large.length && large[hi]! < id) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    lo = lowerBound(large, lo, Math.min(hi + 1, large.length), id);
    if (lo < large.length && large[lo] === id) out[n++] = id;
  }
  return out.subarray(0, n);
}

/** Which ids of `cands` are in `list`, as flags over `cands` (set to 1; others left as they were). */
export function markMembers(cands: Uint32Array, list: Uint32Array, flags: Uint8Array): void {
  if (cands.length * 16 < list.length) {
    let lo = 0;
    for (let i = 0; i < cands.length && lo < list.length; i++) {
      lo = lowerBound(list, lo, list.length, cands[i]!);
      if (lo < list.length && list[lo] === cands[i]) flags[i] = 1;
    }
    return;
  }
  let i = 0;
  let j = 0;
  while (i < cands.length && j < list.length) {
    const x = cands[i]!;
    const y = list[j]!;
    if (x === y) {
      flags[i++] = 1;
      j++;
    } else if (x < y) i++;
    else j++;
  }
}

/** Ids of `a` not in `b`. */
export function difference(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (b.length === 0 || a.length === 0) return a;
  const flags = new Uint8Array(a.length);
  markMembers(a, b, flags);
  return select(a, flags, 0);
}

/** The ids of `a` whose flag equals `want`. */
export function select(a: Uint32Array, flags: Uint8Array, want: number): Uint32Array {
  let n = 0;
  for (let i = 0; i < flags.length; i++) if (flags[i] === want) n++;
  const out = new Uint32Array(n);
  n = 0;
  for (let i = 0; i < flags.length; i++) if (flags[i] === want) out[n++] = a[i]!;
  return out;
}

/** Below this many ids in all, a union concatenates and sorts; above, it marks a bitset. */
const SORT_UNION_MAX = 4096;

/** The union of sorted sets; `bound` is larger than every id. */
export function union(sets: readonly Uint32Array[], bound: number): Uint32Array {
  const live = sets.filter((s) => s.length > 0);
  if (live.length === 0) return EMPTY;
  if (live.length === 1) return live[0]!;
  let total = 0;
  for (const s of live) total += s.length;
  if (total <= SORT_UNION_MAX) {
    const all = new Uint32Array(total);
    let at = 0;
    for (const s of live) {
      all.set(s, at);
      at += s.length;
    }
    all.sort();
    return dedupeSorted(all);
  }
  const bits = new Uint32Array((bound >>> 5) + 1);
  for (const s of live) for (let i = 0; i < s.length; i++) bits[s[i]! >>> 5]! |= 1 << (s[i]! & 31);
  return bitsToIds(bits);
}

function dedupeSorted(a: Uint32Array): Uint32Array {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (i === 0 || a[i] !== a[i - 1]) a[n++] = a[i]!;
  return a.subarray(0, n);
}

function bitsToIds(bits: Uint32Array): Uint32Array {
  let n = 0;
  for (let w = 0; w < bits.length; w++) n += popcount(bits[w]!);
  const out = new Uint32Array(n);
  n = 0;
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w]!;
    while (word !== 0) {
      const low = word & -word;
      out[n++] = (w << 5) | (31 - Math.clz32(low));
      word ^= low;
    }
  }
  return out;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Ids of `a` that `keep` accepts. */
export function filterIds(a: Uint32Array, keep: (id: number) => boolean): Uint32Array {
  return a.filter(keep);
}

export { EMPTY as NO_IDS };
