// Every term of an index image as columns (storage/metric-index/snapshot.ts): a million-series
// shard has a million `__name` values, and an image holding one object, string and id array
// per value took ≈ 370 MiB of a shard's heap at each clean stop (and as much again at the next
// open). Here a value is its UTF-8 bytes in one buffer and three numbers in another, written
// straight from a dictionary's arena (storage/metric-index/term-dictionary.ts) and read back
// into one without a string or object per value.
import type { TextArena } from '../../model/text-arena.js';
import { withRoom } from '../../model/typed-arrays.js';

/** u32s per term in `spans`: posting list offset, its length, the text's UTF-8 length. */
export const SPAN = 3;

export interface TermColumns {
  /** UTF-8 bytes of every term, back to back. */
  texts: Uint8Array;
  /** Per term SPAN u32s (see SPAN). */
  spans: Uint32Array;
  /** Every posting list (and every account's all-ids list) back to back. */
  postings: Uint32Array;
  /** [term number, spelling] of the terms whose spelling in canonical names differs from their text. */
  spellings: [number, string][];
}

/** Walks the terms of TermColumns in order: each term's text bytes and ids. */
export class TermCursor {
  /** The current term's number, its text's first byte, its text's length. */
  term = -1;
  textAt = 0;
  textLength = 0;
  private nextTextAt = 0;
  private readonly spelled: Map<number, string>;

  constructor(readonly columns: TermColumns) {
    this.spelled = new Map(columns.spellings);
  }

  next(): void {
    this.term++;
    this.textAt = this.nextTextAt;
    this.textLength = this.columns.spans[this.term * SPAN + 2]!;
    this.nextTextAt += this.textLength;
  }

  /** UTF-8 bytes of the texts of the next `count` terms. */
  textBytesAhead(count: number): number {
    let bytes = 0;
    for (let t = this.term + 1; t <= this.term + count; t++) bytes += this.columns.spans[t * SPAN + 2]!;
    return bytes;
  }

  /** The current term's ids (a view of the postings). */
  ids(): Uint32Array {
    const at = this.columns.spans[this.term * SPAN]!;
    return this.columns.postings.subarray(at, at + this.columns.spans[this.term * SPAN + 1]!);
  }

  /** The current term's spelling in canonical names, when it differs from its text. */
  spelling(): string | null {
    return this.spelled.get(this.term) ?? null;
  }

  /** The current term's id when it has exactly one, else -1. */
  singleId(): number {
    return this.columns.spans[this.term * SPAN + 1] === 1 ? this.columns.postings[this.columns.spans[this.term * SPAN]!]! : -1;
  }
}

/** Builds TermColumns term by term; sized up front from the counts the index knows. */
export class TermColumnsBuilder {
  private texts: Uint8Array;
  private textsUsed = 0;
  private spans: Uint32Array;
  private terms = 0;
  private postings: Uint32Array;
  private posted = 0;
  private readonly spellings: [number, string][] = [];

  constructor(expected: { terms: number; textBytes: number; postings: number }) {
    this.texts = new Uint8Array(expected.textBytes);
    this.spans = new Uint32Array(expected.terms * SPAN);
    this.postings = new Uint32Array(expected.postings);
  }

  /** Terms added so far (the next one's number). */
  get count(): number {
    return this.terms;
  }

  /** Appends a list of ids that is not a term's (an account's all-ids list); its offset. */
  addList(ids: Uint32Array): number {
    const at = this.room(ids.length);
    this.postings.set(ids, at);
    return at;
  }

  /** Appends value `value` of `arena` as a term whose ids are `ids` (or the one id, as a number). */
  addTerm(arena: TextArena, value: number, ids: Uint32Array | number, spelling: string | null): void {
    const length = arena.byteLength(value);
    this.texts = withRoom(this.texts, this.textsUsed + length);
    arena.copyTo(value, this.texts, this.textsUsed);
    this.textsUsed += length;
    this.spans = withRoom(this.spans, (this.terms + 1) * SPAN);
    const n = typeof ids === 'number' ? 1 : ids.length;
    const at = this.room(n);
    if (typeof ids === 'number') this.postings[at] = ids;
    else this.postings.set(ids, at);
    this.spans[this.terms * SPAN] = at;
    this.spans[this.terms * SPAN + 1] = n;
    this.spans[this.terms * SPAN + 2] = length;
    if (spelling !== null) this.spellings.push([this.terms, spelling]);
    this.terms++;
  }

  finish(): TermColumns {
    return { texts: this.texts.subarray(0, this.textsUsed), spans: this.spans.subarray(0, this.terms * SPAN), postings: this.postings.subarray(0, this.posted), spellings: this.spellings };
  }

  /** Room for `n` more ids; where they go. */
  private room(n: number): number {
    this.postings = withRoom(this.postings, this.posted + n);
    this.posted += n;
    return this.posted - n;
  }
}
