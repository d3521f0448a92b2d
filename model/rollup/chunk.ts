// A rollup chunk (format v2, docs/format/rollup-chunk.md): every period of one metric and
// rollup level within one chunk span (1440 periods: a day at 60 s), stored column by
// column, so a metric-day is one RocksDB point read and a read decodes only the columns
// it needs (an average needs value n and Σ; nothing else is touched).
import { ByteReader, ByteWriter } from '../codec/bytes.js';
import { emptyAccumulator, type Moments, type RollupAccumulator } from './accumulator.js';
import { BlockFormatError } from '../codec/errors.js';
import { ColumnScheme, decodeColumn, encodeColumn } from './column-codec.js';

export const CHUNK_FORMAT_VERSION = 2;
/** Periods per chunk at every level: a day at 60 s, 5 days at 300 s, 30 days at 1800 s... */
export const CHUNK_PERIODS = 1440;

/** The five accumulated quantities, in their order on disk. */
export const QUANTITIES = ['value', 'derivative', 'counter', 'derivative2', 'counter2'] as const;
export type Quantity = (typeof QUANTITIES)[number];
export const PARTS = ['n', 'sum', 'sumsq'] as const;
export type Part = keyof Moments;

const COLUMNS = QUANTITIES.length * PARTS.length;
const columnIndex = (q: Quantity, part: Part): number => QUANTITIES.indexOf(q) * PARTS.length + PARTS.indexOf(part);

/** Span in ms of the chunks of a level of `periodS` seconds. */
export const chunkSpanMs = (periodS: number): number => periodS * 1000 * CHUNK_PERIODS;
/** Start of the chunk holding `ts` at a level of `periodS` seconds. */
export function chunkStartOf(ts: number, periodS: number): number {
  const span = chunkSpanMs(periodS);
  return Math.floor(ts / span) * span;
}

/** Accumulators of a chunk's periods, by slot (0 ≤ slot < CHUNK_PERIODS). */
export type ChunkPeriods = Map<number, RollupAccumulator>;

export function encodeChunk(periods: ChunkPeriods): Uint8Array {
  const slots = [...periods.keys()].sort((a, b) => a - b);
  const w = new ByteWriter(64 + slots.length * 16);
  w.byte(CHUNK_FORMAT_VERSION);
  w.varint(CHUNK_PERIODS);
  w.varint(slots.length);
  const slotBytes = new ByteWriter(slots.length + 4);
  slots.forEach((s, i) => slotBytes.varint(i === 0 ? s : s - slots[i - 1]! - 1));
  w.varint(slotBytes.length);
  w.bytes(slotBytes.finish());
  const accs = slots.map((s) => periods.get(s)!);
  // Counters' columns often equal the derivative's (no resets): those are stored as copies.
  const written: Buffer[] = [];
  for (const q of QUANTITIES) {
    for (const part of PARTS) {
      const column = new Float64Array(slots.length);
      accs.forEach((a, i) => (column[i] = a[q][part]));
      const bytes = Buffer.from(column.buffer);
      const same = written.findIndex((b) => b.equals(bytes));
      const coded = same >= 0 ? Uint8Array.of(ColumnScheme.copy, same) : encodeColumn(column);
      written.push(bytes);
      w.varint(coded.length);
      w.bytes(coded);
    }
  }
  return w.finish().slice();
}

/** A stored chunk, decoded column by column on first use. */
export class RollupChunk {
  /** Slots that hold a period, ascending. */
  readonly slots: Int32Array;
  /** Byte range [starts[c], ends[c]) of column c. */
  private readonly starts = new Int32Array(COLUMNS);
  private readonly ends = new Int32Array(COLUMNS);
  private readonly columns: (Float64Array | undefined)[] = new Array(COLUMNS);

  constructor(private readonly bytes: Uint8Array) {
    const r = new ByteReader(bytes);
    const version = r.byte();
    if (version !== CHUNK_FORMAT_VERSION) r.fail(`rollup chunk of version ${version}`);
    if (r.varint() !== CHUNK_PERIODS) r.fail('rollup chunk of an unknown number of periods');
    const count = r.varint();
    if (count > CHUNK_PERIODS) r.fail(`${count} periods in a chunk of ${CHUNK_PERIODS}`);
    const slotReader = new ByteReader(r.bytes(r.varint()));
    this.slots = new Int32Array(count);
    for (let i = 0, s = -1; i < count; i++) this.slots[i] = s += slotReader.varint() + 1;
    if (count > 0 && this.slots[count - 1]! >= CHUNK_PERIODS) r.fail('rollup chunk slot out of range');
    for (let c = 0; c < COLUMNS; c++) {
      const length = r.varint();
      this.starts[c] = r.pos;
      r.bytes(length);
      this.ends[c] = r.pos;
    }
  }

  /** One column, aligned with `slots`. */
  column(q: Quantity, part: Part): Float64Array {
    return this.columnAt(columnIndex(q, part));
  }

  private columnAt(c: number): Float64Array {
    const cached = this.columns[c];
    if (cached !== undefined) return cached;
    const bytes = this.bytes.subarray(this.starts[c]!, this.ends[c]!);
    let values: Float64Array;
    if (bytes[0] === ColumnScheme.copy) {
      const of = bytes[1] ?? COLUMNS;
      if (of >= c || bytes.length !== 2) throw new BlockFormatError(this.starts[c]!, `column ${c} copies column ${of}`);
      values = this.columnAt(of);
    } else {
      values = decodeColumn(bytes, this.slots.length);
    }
    this.columns[c] = values;
    return values;
  }

  /** Every period as an accumulator (the write path rebuilds whole chunks). */
  periods(): ChunkPeriods {
    const out: ChunkPeriods = new Map();
    this.slots.forEach((s) => out.set(s, emptyAccumulator()));
    for (const q of QUANTITIES) {
      for (const part of PARTS) {
        const values = this.column(q, part);
        this.slots.forEach((s, i) => (out.get(s)![q][part] = values[i]!));
      }
    }
    return out;
  }
}
