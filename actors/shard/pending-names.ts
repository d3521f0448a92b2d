// The canonical names of a series table's newest rows until the index holds them (series-table.ts).
// Rows are taken in increasing order and the index stages each batch's new metrics right after
// they are adopted, so the names pending at any time are a short run of recent rows: they sit in
// an array from the first of them, started afresh whenever none is left. (A Map of them grew to a
// batch's size and shrank again, batch after batch, each growth a backing store in fresh pages —
// ≈ 15 µs a page fault on our machines — 0.2 s of a million new series.)

/** A pending name: its text, or its UTF-8 bytes as a parse lane declared it (decoded only if asked). */
export type PendingName = string | Uint8Array;

export class PendingNames {
  private names: (PendingName | undefined)[] = [];
  /** The row of `names[0]`. */
  private base = 0;
  private count = 0;

  get(row: number): PendingName | undefined {
    // Below the run is undefined, as past its end; a negative index would be looked up as a
    // property name (a string made and hashed per call).
    const i = row - this.base;
    return i >= 0 ? this.names[i] : undefined;
  }

  /** `row`: at least every row set before (rows are taken in order). */
  set(row: number, name: PendingName): void {
    if (this.count === 0) {
      this.names = [];
      this.base = row;
    }
    if (row < this.base) throw new Error(`BUG: pending name of row ${row}, below the newest rows (${this.base})`);
    if (this.names[row - this.base] === undefined) this.count++;
    this.names[row - this.base] = name;
  }

  delete(row: number): void {
    if (this.get(row) === undefined) return;
    this.names[row - this.base] = undefined;
    this.count--;
  }

  get size(): number {
    return this.count;
  }
}
