// The values of one tag category in one account, each with its posting list, kept sorted
// so that a pattern enumerates only the values in its literal prefix's range. New values
// land in a small unsorted tail that is merged in when it grows (a search never sorts the
// whole dictionary while ingest adds values).
//
// A million-series node has a million `__name` values (and as many of any per-series tag),
// almost all naming one metric (issue 30). So the dictionary keeps no object or string per
// value: values are numbered in the order added, their UTF-8 bytes sit back to back in one
// arena, an open-addressing table of their hashes finds them, a value that names one metric
// holds that id in a typed column, and only a value naming several has a posting list object
// (a Term). The order is UTF-8 byte order (code point order). Searches and images get Terms:
// the dictionary's own for values with a list, made on the spot for the others.
import { matches, type Matcher } from '../../model/tag-query/index.js';
import { literalPrefix } from '../../model/tag-query/index.js';
import { placeEntry, slotsFor } from '../../model/hash-slots.js';
import { TextArena } from '../../model/text-arena.js';
import { grown, roomFor } from '../../model/typed-arrays.js';
import { IdList } from './id-sets.js';
import { TermColumnsBuilder, TermCursor } from './term-columns.js';

/** The key of a category-only tag (`host` without a value): searches see its value as ''. */
export const NO_VALUE = '\u0000';

/** Values added since the last merge, which a search tests one by one: at most this many, or an eighth of the sorted ones. */
const MIN_UNSORTED = 256;
/** `single` of a value whose ids are in `lists`. */
const LISTED = -1;
/** `single` of a value compaction left without ids (dropped from the table at the next rebuild). */
const GONE = -2;

/** A value and its posting list (the dictionary's, or one made for a search of a one-metric value). */
export class Term extends IdList {
  /** The value as the canonical name spells it, when that differs from the search text (`b"…"`). */
  spelling: string | null = null;

  /** `ids`: its posting list as given (sorted, distinct; an index snapshot's). */
  constructor(
    readonly text: string,
    ids?: Uint32Array,
  ) {
    super();
    if (ids !== undefined) this.assign(ids);
  }

  get ids(): IdList {
    return this;
  }
}

export class TermDictionary {
  /** The category as the canonical name spells it, when that differs from the search text. */
  spelling: string | null = null;
  /** Values numbered 0… in the order added: their texts. */
  private texts = new TextArena(1024, 64);
  private count = 0;
  private dropped = 0;
  private hashes = new Uint32Array(64);
  /** The value's one id, or LISTED, or GONE. */
  private single = new Int32Array(64);
  /** Value + 1 per slot (0 = empty), by hash. */
  private slots = new Int32Array(128);
  private lists = new Map<number, Term>();
  private spellings = new Map<number, string>();
  /** Values in byte order: the first `merged` added (the rest are the unsorted tail). */
  private sorted = new Uint32Array(64);
  private merged = 0;
  /** A key's UTF-8 bytes, encoded for a lookup. */
  private scratch = new Uint8Array(256);
  private scratchLength = 0;

  /** Values held (those compaction emptied go at its end). */
  get size(): number {
    return this.count - this.dropped;
  }

  /** Ids over all posting lists. */
  get postings(): number {
    let n = 0;
    for (let v = 0; v < this.count; v++) if (this.single[v]! >= 0) n++;
    for (const t of this.lists.values()) n += t.size;
    return n;
  }

  /**
   * Adds `id` to the posting list of `key` (search text, or NO_VALUE), creating the value if
   * new; `spelling`: the value as the canonical name spells it when that differs. `bulk`: the
   * dictionary is being loaded and nobody searches it until `endBulk()`, so lists are appended
   * to unsorted and new values are not merged an eighth at a time (at a load of a million
   * names, those merges were most of its CPU).
   */
  add(key: string, id: number, spelling: string | null = null, bulk = false): void {
    let v = this.find(key);
    if (v < 0) {
      v = this.append(this.scratch, 0, this.scratchLength, this.hashOfScratch());
      this.single[v] = id;
      if (!bulk && this.count - this.merged > Math.max(MIN_UNSORTED, this.merged >> 3)) this.mergeUnsorted();
    } else {
      const one = this.single[v]!;
      if (one === id) return;
      if (one >= 0) {
        const list = new Term(this.texts.text(v), Uint32Array.of(one));
        list.spelling = this.spellings.get(v) ?? null;
        this.lists.set(v, list);
        this.single[v] = LISTED;
      }
      const list = this.lists.get(v)!;
      if (bulk) list.push(id);
      else list.add(id);
    }
    if (spelling !== null) {
      this.spellings.set(v, spelling);
      const list = this.lists.get(v);
      if (list !== undefined) list.spelling = spelling;
    }
  }

  /** Ends a bulk load: sorts what it added. */
  endBulk(): void {
    this.settle();
    for (const t of this.lists.values()) t.sortUnique();
  }

  /** Merges the unsorted tail into the sorted values. */
  settle(): void {
    if (this.count > this.merged) this.mergeUnsorted();
  }

  get(key: string): Term | undefined {
    const v = this.find(key);
    return v < 0 ? undefined : this.term(v);
  }

  /** Every value held, in the order added. */
  *all(): IterableIterator<Term> {
    for (let v = 0; v < this.count; v++) if (this.single[v] !== GONE) yield this.term(v);
  }

  /** UTF-8 bytes of every value held (an image's size). */
  get textBytes(): number {
    return this.texts.bytesUsed;
  }

  /** Appends the values, in byte order, to `out`, with their ids `keep` accepts (null: all); values left without ids are skipped. */
  writeTo(out: TermColumnsBuilder, keep: ((id: number) => boolean) | null): number {
    this.settle();
    const first = out.count;
    for (let i = 0; i < this.merged; i++) {
      const v = this.sorted[i]!;
      const one = this.single[v]!;
      if (one === GONE || (one >= 0 && keep !== null && !keep(one))) continue;
      const ids = one >= 0 ? one : keep === null ? this.lists.get(v)!.view() : this.lists.get(v)!.view().filter(keep);
      if (typeof ids !== 'number' && ids.length === 0) continue;
      out.addTerm(this.texts, v, ids, this.spellings.get(v) ?? null);
    }
    return out.count - first;
  }

  /** A dictionary of the next `count` terms of `terms`, given in byte order (an index image's). */
  static fromColumns(terms: TermCursor, count: number, spelling: string | null): TermDictionary {
    const d = new TermDictionary();
    d.spelling = spelling;
    const texts = terms.columns.texts;
    // Room for all of them at once: no arena copied, no table rebuilt at each doubling.
    d.texts = new TextArena(Math.max(1024, terms.textBytesAhead(count)), Math.max(64, count));
    d.growValues(Math.max(64, count));
    let slots = d.slots.length;
    while (slots < count * 2) slots *= 2;
    if (slots > d.slots.length) d.slots = new Int32Array(slots);
    for (let i = 0; i < count; i++) {
      terms.next();
      const v = d.append(texts, terms.textAt, terms.textLength, hashBytes(texts, terms.textAt, terms.textLength));
      const one = terms.singleId();
      const spelled = terms.spelling();
      if (one >= 0) d.single[v] = one;
      else {
        const list = new Term(d.texts.text(v), terms.ids());
        list.spelling = spelled;
        d.lists.set(v, list);
        d.single[v] = LISTED;
      }
      if (spelled !== null) d.spellings.set(v, spelled);
    }
    // Given in order (as `writeTo` writes them), the sorted values are the values as numbered;
    // values out of order (an image's bytes not as written) are sorted here rather than trusted.
    let ordered = true;
    for (let v = 1; v < d.count && ordered; v++) ordered = d.texts.compare(v - 1, v) < 0;
    if (ordered) {
      for (let v = 0; v < d.count; v++) d.sorted[v] = v;
      d.merged = d.count;
    } else d.mergeUnsorted();
    return d;
  }

  /** The values whose text `m` accepts (null: every value). */
  matching(m: Matcher | null): Term[] {
    if (m === null) return [...this.all()];
    if (m.kind === 'exact') {
      const hit = this.get(m.value);
      const none = m.value === '' ? this.get(NO_VALUE) : undefined;
      return [hit, none].filter((t): t is Term => t !== undefined);
    }
    const out: Term[] = [];
    const test = (v: number) => {
      if (this.single[v] === GONE) return;
      const text = this.texts.text(v);
      if (matches(m, text === NO_VALUE ? '' : text)) out.push(this.term(v, text));
    };
    const prefix = literalPrefix(m);
    if (prefix === '') {
      for (let v = 0; v < this.count; v++) test(v);
      return out;
    }
    this.encode(prefix);
    for (let i = this.lowerBound(); i < this.merged && this.startsWithScratch(this.sorted[i]!); i++) test(this.sorted[i]!);
    for (let v = this.merged; v < this.count; v++) if (this.startsWithScratch(v)) test(v);
    return out;
  }

  /** Drops ids `keep` rejects from every posting list, and then the values left without any. */
  compact(keep: (id: number) => boolean): void {
    for (let v = 0; v < this.count; v++) {
      const one = this.single[v]!;
      if (one >= 0 && !keep(one)) this.drop(v);
    }
    for (const [v, t] of this.lists) {
      t.compact(keep);
      if (t.size === 0) this.drop(v);
    }
    if (this.dropped > 0) this.rebuild();
  }

  private drop(v: number): void {
    this.single[v] = GONE;
    this.lists.delete(v);
    this.spellings.delete(v);
    this.dropped++;
  }

  /** The dictionary anew from the values still held, in order (after compaction dropped some). */
  private rebuild(): void {
    const out = new TermColumnsBuilder({ terms: this.size, textBytes: this.textBytes, postings: this.postings });
    const count = this.writeTo(out, null);
    const again = TermDictionary.fromColumns(new TermCursor(out.finish()), count, this.spelling);
    // Every field (the table, columns, lists, order) taken from the rebuilt dictionary.
    Object.assign(this, again);
  }

  private term(v: number, text?: string): Term {
    const list = this.lists.get(v);
    if (list !== undefined) return list;
    const one = this.single[v]!;
    const t = new Term(text ?? this.texts.text(v), one >= 0 ? Uint32Array.of(one) : undefined);
    t.spelling = this.spellings.get(v) ?? null;
    return t;
  }

  /** The value of `key` (left encoded in `scratch`), or -1. */
  private find(key: string): number {
    this.encode(key);
    const hash = this.hashOfScratch();
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const v = this.slots[slot]! - 1;
      if (v < 0) return -1;
      if (this.hashes[v] === hash && this.texts.byteLength(v) === this.scratchLength && this.startsWithScratch(v)) return v;
    }
  }

  /** A new value of the `length` bytes of `bytes` from `at` (and their hash); its number. */
  private append(bytes: Uint8Array, at: number, length: number, hash: number): number {
    const v = this.count;
    if (v === this.hashes.length) this.growValues(roomFor(v, v + 1));
    if (this.texts.addBytes(bytes, length, at) !== v) throw new Error('BUG: a dictionary\'s texts and values are numbered apart');
    this.hashes[v] = hash;
    this.count = v + 1;
    if (this.count * 2 > this.slots.length) this.slots = slotsFor(this.slots.length * 2, this.hashes, this.count);
    else placeEntry(this.slots, this.hashes, v);
    return v;
  }

  private growValues(n: number): void {
    this.hashes = grown(this.hashes, n);
    this.single = grown(this.single, n);
    this.sorted = grown(this.sorted, n);
  }

  private encode(text: string): void {
    if (text.length * 3 > this.scratch.length) this.scratch = new Uint8Array(text.length * 3);
    this.scratchLength = ENCODER.encodeInto(text, this.scratch).written;
  }

  private hashOfScratch(): number {
    return hashBytes(this.scratch, 0, this.scratchLength);
  }

  /** True when value `v`'s bytes start with the scratch bytes. */
  private startsWithScratch(v: number): boolean {
    return this.texts.startsWith(v, this.scratch, this.scratchLength);
  }

  /** The first sorted position whose value is not below the scratch bytes. */
  private lowerBound(): number {
    let lo = 0;
    let hi = this.merged;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.texts.compareBytes(this.sorted[mid]!, this.scratch, this.scratchLength) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private mergeUnsorted(): void {
    const fresh = this.texts.sortedRange(this.merged, this.count);
    this.texts.mergeSorted(this.sorted.slice(0, this.merged), fresh, this.sorted);
    this.merged = this.count;
  }
}

const ENCODER = new TextEncoder();

/** FNV-1a over `length` bytes of `bytes` from `at`. */
function hashBytes(bytes: Uint8Array, at: number, length: number): number {
  let h = 0x811c9dc5;
  for (let i = at; i < at + length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}
