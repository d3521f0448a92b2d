// The values of one tag category in one account, each with its posting list, kept sorted
// so that a pattern enumerates only the values in its literal prefix's range. New values
// land in a small unsorted tail that is merged in when it grows (a search never sorts the
// whole dictionary while ingest adds values).
import { matches, type Matcher } from '../../model/tag-query/index.js';
import { literalPrefix } from '../../model/tag-query/index.js';
import { IdList } from './id-sets.js';

/** The key of a category-only tag (`host` without a value): searches see its value as ''. */
export const NO_VALUE = '\u0000';

/** Values added since the last merge, which a search tests one by one: at most this many, or an eighth of the sorted ones. */
const MIN_UNSORTED = 256;

/**
 * A value and its posting list. The term is its own list: most `__name` values name one metric,
 * and a million series would otherwise pay for two objects each (issue 30).
 */
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
  private readonly terms = new Map<string, Term>();
  private sorted: string[] = [];
  private unsorted: string[] = [];
  /** The category as the canonical name spells it, when that differs from the search text. */
  spelling: string | null = null;

  get size(): number {
    return this.terms.size;
  }

  /**
   * The term of `key` (search text, or NO_VALUE), created if new. `bulk`: the dictionary is
   * being loaded and nobody searches it until `settle()`, so new values are not merged one
   * eighth at a time (at a load of a million names, those merges were most of its CPU).
   */
  term(key: string, bulk = false): Term {
    let t = this.terms.get(key);
    if (t === undefined) {
      this.terms.set(key, (t = new Term(key)));
      this.unsorted.push(key);
      if (!bulk && this.unsorted.length > Math.max(MIN_UNSORTED, this.sorted.length >> 3)) this.mergeUnsorted();
    }
    return t;
  }

  /** The terms in search text order. */
  sortedTerms(): Term[] {
    this.settle();
    return this.sorted.map((key) => this.terms.get(key)!);
  }

  /** A dictionary of `terms`, given in search text order (an index snapshot's). */
  static of(terms: readonly Term[], spelling: string | null): TermDictionary {
    const d = new TermDictionary();
    d.spelling = spelling;
    for (const t of terms) d.terms.set(t.text, t);
    d.sorted = terms.map((t) => t.text);
    return d;
  }

  /** Sorts what a bulk load added. */
  settle(): void {
    if (this.unsorted.length > 0) this.mergeUnsorted();
  }

  get(key: string): Term | undefined {
    return this.terms.get(key);
  }

  all(): IterableIterator<Term> {
    return this.terms.values();
  }

  /** The terms whose value `m` accepts (null: every term). */
  matching(m: Matcher | null): Term[] {
    if (m === null) return [...this.terms.values()];
    if (m.kind === 'exact') {
      const hit = this.terms.get(m.value);
      const none = m.value === '' ? this.terms.get(NO_VALUE) : undefined;
      return [hit, none].filter((t): t is Term => t !== undefined);
    }
    const out: Term[] = [];
    const test = (key: string) => {
      if (matches(m, key === NO_VALUE ? '' : key)) out.push(this.terms.get(key)!);
    };
    const prefix = literalPrefix(m);
    if (prefix === '') {
      for (const key of this.terms.keys()) test(key);
      return out;
    }
    for (let i = lowerBound(this.sorted, prefix); i < this.sorted.length && this.sorted[i]!.startsWith(prefix); i++) test(this.sorted[i]!);
    for (const key of this.unsorted) if (key.startsWith(prefix)) test(key);
    return out;
  }

  /** Forgets terms whose posting list is empty. */
  dropEmpty(): void {
    let dropped = false;
    for (const [key, t] of this.terms) {
      if (t.ids.size > 0) continue;
      this.terms.delete(key);
      dropped = true;
    }
    if (!dropped) return;
    this.sorted = this.sorted.filter((k) => this.terms.has(k));
    this.unsorted = this.unsorted.filter((k) => this.terms.has(k));
  }

  private mergeUnsorted(): void {
    const fresh = this.unsorted.sort();
    this.unsorted = [];
    const merged = new Array<string>(this.sorted.length + fresh.length);
    let i = 0;
    let j = 0;
    let n = 0;
    while (i < this.sorted.length || j < fresh.length) {
      if (j >= fresh.length || (i < this.sorted.length && this.sorted[i]! < fresh[j]!)) merged[n++] = this.sorted[i++]!;
      else merged[n++] = fresh[j++]!;
    }
    this.sorted = merged;
  }
}

function lowerBound(a: readonly string[], key: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
