// A rollup chunk (format v3, docs/format/rollup-chunk.md; v2 chunks still read): every period of one metric and
// rollup level within one chunk span (1440 periods: a day at 60 s), stored as one RocksDB
// record per column (each accumulator part), so a metric-day is a multi-get of the columns a
// read needs (an average: value n and Σ, about a tenth of the chunk) and one decode each.
import { ByteReader, ByteWriter } from '../codec/bytes.js';
import type { Moments, RollupAccumulator } from './accumulator.js';
import { BlockFormatError } from '../codec/errors.js';
import { codeColumnV3, ColumnScheme, decodeColumn, isPredicted } from './column-codec.js';

export const CHUNK_FORMAT_VERSION = 3;
/** Chunks of format v2 (deflate, no near-decimal columns) still read; they are rewritten as v3 when next written. */
export const READABLE_VERSIONS: readonly number[] = [2, 3];
/** Periods per chunk at every level: a day at 60 s, 5 days at 300 s, 30 days at 1800 s... */
export const CHUNK_PERIODS = 1440;

/** The five accumulated quantities, in their order on disk. */
export const QUANTITIES = ['value', 'derivative', 'counter', 'derivative2', 'counter2'] as const;
export type Quantity = (typeof QUANTITIES)[number];
export const PARTS = ['n', 'sum', 'sumsq'] as const;
export type Part = keyof Moments;

/** Columns of a chunk; column c is part c % 3 of quantity ⌊c / 3⌋. */
export const COLUMNS = QUANTITIES.length * PARTS.length;
export const ALL_COLUMNS: readonly number[] = Array.from({ length: COLUMNS }, (_, c) => c);
/** Column ids by quantity and part, made once: a read asks for a column per source it adds up. */
const COLUMN_IDS = Object.fromEntries(QUANTITIES.map((q, k) => [q, Object.fromEntries(PARTS.map((part, j) => [part, k * PARTS.length + j]))])) as Record<Quantity, Record<Part, number>>;
export const columnId = (q: Quantity, part: Part): number => COLUMN_IDS[q][part];

/** Span in ms of the chunks of a level of `periodS` seconds. */
export const chunkSpanMs = (periodS: number): number => periodS * 1000 * CHUNK_PERIODS;
/** Start of the chunk holding `ts` at a level of `periodS` seconds. */
export function chunkStartOf(ts: number, periodS: number): number {
  const span = chunkSpanMs(periodS);
  return Math.floor(ts / span) * span;
}

/** Accumulators of a chunk's periods, by slot (0 ≤ slot < CHUNK_PERIODS). */
export type ChunkPeriods = Map<number, RollupAccumulator>;

/** The chunk's records, one per column (index = column id). */
export function encodeChunk(periods: ChunkPeriods): Uint8Array[] {
  const slots = [...periods.keys()].sort((a, b) => a - b);
  return encodeChunkColumns(slots, columnsOf(slots.map((s) => periods.get(s)!)));
}

/** The chunk's records from its periods as columns: `columns[c][i]` is column c of the period in `slots[i]` (ascending). */
export function encodeChunkColumns(slots: readonly number[], columns: readonly Float64Array[]): Uint8Array[] {
  const head = new ByteWriter(16);
  head.byte(CHUNK_FORMAT_VERSION);
  head.varint(CHUNK_PERIODS);
  head.varint(slots.length);
  writeSlotRuns(head, slots);
  const header = head.finish();
  const words = columns.map((column) => new Uint32Array(column.buffer, column.byteOffset, column.length * 2));
  // Counters' columns often equal the derivative's (no resets): those are stored as copies.
  return columns.map((column, c) => {
    const same = words.findIndex((earlier, e) => e < c && sameWords(earlier, words[c]!));
    // A view the next column's coding reuses: copied into the record at once.
    const coded = same >= 0 ? Uint8Array.of(ColumnScheme.copy, same) : codeColumnV3(column, c % 3 === 2 ? squaresPrediction(columns[c - 2]!, columns[c - 1]!, predictionScratch(column.length)) : null);
    const record = new Uint8Array(header.length + coded.length);
    record.set(header);
    record.set(coded, header.length);
    return record;
  });
}

/** The same bits in every place (-0 and NaN payloads too: a copy reads back as written), as 32-bit words. */
function sameWords(x: Uint32Array, y: Uint32Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** The prediction a Σx² column is coded against, reused: the coding reads it and is done with it. */
let predicted: Float64Array = new Float64Array(CHUNK_PERIODS);
function predictionScratch(n: number): Float64Array {
  if (predicted.length < n) predicted = new Float64Array(n);
  return predicted.subarray(0, n);
}

const SUMSQ = 2;

/**
 * The prediction a Σx² column is coded against: (Σx)²/n per period, from the n and Σx columns
 * of the same quantity (Σx² − (Σx)²/n is n times the variance, small beside Σx² for most data).
 * Reader and writer compute it alike, so the column decodes to its exact bits.
 */
function squaresPrediction(n: Float64Array, sum: Float64Array, out: Float64Array = new Float64Array(n.length)): Float64Array {
  for (let i = 0; i < n.length; i++) out[i] = n[i]! > 0 ? (sum[i]! * sum[i]!) / n[i]! : 0;
  return out;
}

/** Slots (ascending) as runs: count, then per run the gap before it and its length. */
function writeSlotRuns(w: ByteWriter, slots: readonly number[]): void {
  const runs: [number, number][] = [];
  for (const s of slots) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[0] + last[1] === s) last[1]++;
    else runs.push([s, 1]);
  }
  w.varint(runs.length);
  let next = 0;
  for (const [start, length] of runs) {
    w.varint(start - next);
    w.varint(length);
    next = start + length;
  }
}

function readSlotRuns(r: ByteReader, count: number): Int32Array {
  const slots = new Int32Array(count);
  const runs = r.varint();
  let next = 0;
  let i = 0;
  for (let k = 0; k < runs; k++) {
    const start = next + r.varint();
    const length = r.varint();
    if (i + length > count || start + length > CHUNK_PERIODS) r.fail('rollup chunk slots out of range');
    for (let j = 0; j < length; j++) slots[i++] = start + j;
    next = start + length;
  }
  if (i !== count) r.fail(`rollup chunk lists ${i} slots of ${count}`);
  return slots;
}

/** The 15 columns of the accumulators, in their order on disk (QUANTITIES × PARTS). */
function columnsOf(accs: readonly RollupAccumulator[]): Float64Array[] {
  const columns = Array.from({ length: COLUMNS }, () => new Float64Array(accs.length));
  for (let i = 0; i < accs.length; i++) {
    const a = accs[i]!;
    let c = 0;
    for (const m of [a.value, a.derivative, a.counter, a.derivative2, a.counter2]) {
      columns[c++]![i] = m.n;
      columns[c++]![i] = m.sum;
      columns[c++]![i] = m.sumsq;
    }
  }
  return columns;
}

/** A stored chunk from some of its column records (index = column id), each decoded on first use. */
export class RollupChunk {
  /** Slots that hold a period, ascending. */
  readonly slots: Int32Array;
  /** Length of the header every record of the chunk starts with (version, periods, slots). */
  private headerLength = 0;
  private readonly records: (Uint8Array | undefined)[] = new Array(COLUMNS);
  private readonly columns: (Float64Array | undefined)[] = new Array(COLUMNS);

  constructor(records: readonly (Uint8Array | null | undefined)[]) {
    let slots: Int32Array | null = null;
    let header: Buffer | null = null;
    records.forEach((record, c) => {
      if (record === null || record === undefined) return;
      if (c >= COLUMNS) throw new Error(`BUG: rollup chunk column ${c}`);
      // The header parses to its end deterministically, so a record starting with the first one's
      // header bytes has that header: only the first is parsed (a slot list is ≈ 5 µs).
      if (header !== null && record.length >= header.length && header.equals(record.subarray(0, header.length))) {
        this.records[c] = record;
        return;
      }
      const r = new ByteReader(record);
      const version = r.byte();
      if (!READABLE_VERSIONS.includes(version)) r.fail(`rollup chunk of version ${version}`);
      if (r.varint() !== CHUNK_PERIODS) r.fail('rollup chunk of an unknown number of periods');
      const count = r.varint();
      if (count > CHUNK_PERIODS) r.fail(`${count} periods in a chunk of ${CHUNK_PERIODS}`);
      const these = readSlotRuns(r, count);
      if (header !== null) r.fail(`column ${c} lists other periods than the chunk's other columns`);
      slots = these;
      header = Buffer.from(record.subarray(0, r.pos));
      this.headerLength = r.pos;
      this.records[c] = record;
    });
    this.slots = slots ?? new Int32Array(0);
  }

  /**
   * Columns that given ones need but that were not given: the columns they copy, and the n and
   * Σx columns a predicted Σx² column is coded against. Read them too (`with`).
   */
  copiedColumns(): number[] {
    const out = new Set<number>();
    const need = (c: number) => {
      if (this.records[c] === undefined) out.add(c);
    };
    for (let c = 0; c < COLUMNS; c++) {
      const body = this.body(c);
      if (body?.[0] === ColumnScheme.copy && body[1] !== undefined) need(body[1]);
      if (body !== undefined && body.length > 0 && c % 3 === SUMSQ && isPredicted(body[0]!)) {
        need(c - 2);
        need(c - 1);
      }
    }
    return [...out];
  }

  /** The records of these columns (undefined where not held), indexed by column id. */
  recordsOf(columns: readonly number[]): (Uint8Array | undefined)[] {
    const out: (Uint8Array | undefined)[] = new Array(COLUMNS);
    for (const c of columns) out[c] = this.records[c];
    return out;
  }

  /** This chunk with more of its records. */
  with(more: readonly (Uint8Array | null | undefined)[]): RollupChunk {
    return new RollupChunk(Array.from({ length: COLUMNS }, (_, c) => this.records[c] ?? more[c]));
  }

  private body(c: number): Uint8Array | undefined {
    return this.records[c]?.subarray(this.headerLength);
  }

  /** One column, aligned with `slots`. */
  column(q: Quantity, part: Part): Float64Array {
    return this.columnAt(columnId(q, part));
  }

  /** Column c (QUANTITIES × PARTS order), aligned with `slots`. */
  columnAt(c: number): Float64Array {
    const cached = this.columns[c];
    if (cached !== undefined) return cached;
    const bytes = this.body(c);
    // No record: the chunk has no periods (so every column is empty), or the read did not ask for it.
    if (bytes === undefined) {
      if (this.slots.length === 0) return new Float64Array(0);
      throw new Error(`BUG: rollup chunk column ${c} was not read`);
    }
    let values: Float64Array;
    if (bytes[0] === ColumnScheme.copy) {
      const of = bytes[1] ?? COLUMNS;
      if (of >= c || bytes.length !== 2) throw new BlockFormatError(this.headerLength, `column ${c} copies column ${of}`);
      values = this.columnAt(of);
    } else if (bytes.length > 0 && isPredicted(bytes[0]!)) {
      if (c % 3 !== SUMSQ) throw new BlockFormatError(this.headerLength, `column ${c} is coded against a prediction`);
      values = decodeColumn(bytes, this.slots.length, squaresPrediction(this.columnAt(c - 2), this.columnAt(c - 1)));
    } else {
      values = decodeColumn(bytes, this.slots.length);
    }
    this.columns[c] = values;
    return values;
  }

  /** Every period as an accumulator (the write path rebuilds whole chunks). */
  periods(): ChunkPeriods {
    const columns = Array.from({ length: COLUMNS }, (_, c) => this.columnAt(c));
    const out: ChunkPeriods = new Map();
    for (let i = 0; i < this.slots.length; i++) {
      const moments = (c: number): Moments => ({ n: columns[c]![i]!, sum: columns[c + 1]![i]!, sumsq: columns[c + 2]![i]! });
      out.set(this.slots[i]!, { value: moments(0), derivative: moments(3), counter: moments(6), derivative2: moments(9), counter2: moments(12) });
    }
    return out;
  }
}
