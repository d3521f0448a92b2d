// The answer to a rollup read: per slot i, covering [first + i·span, first + (i+1)·span),
// the sum of the stored periods starting in it (from chunks, read column by column) and of
// the periods computed from raw data not yet aged into rollups, except where a slot was
// recalculated from raw as a whole. Readers ask for the columns they
// need as Float64Arrays; nothing builds an object per period unless asked (`row`).
import { emptyAccumulator, type RollupAccumulator } from './accumulator.js';
import { columnId, PARTS, QUANTITIES, type Part, type Quantity } from './chunk.js';
import { scratchFloat64, scratchInt32, scratchUint8 } from '../scratch.js';

/** Periods as columns aligned with their slots: a stored chunk (RollupChunk), or periods computed from raw (CompactPeriods). */
export interface PeriodSource {
  /** Index of each period holding data, from the source's start, ascending. */
  readonly slots: Int32Array;
  column(q: Quantity, part: Part): Float64Array;
  /** Made for one read (scratch memory): its slot map is not kept for the next. */
  readonly transient?: boolean;
}

interface Source extends SlotMap {
  chunk: PeriodSource;
}

interface SlotMap {
  /** Slot of each of the chunk's present periods (-1: outside the read). */
  slotOf: Int32Array;
  /** Period j is slot j, for every slot: the source's columns are the slots' columns. */
  aligned: boolean;
}

/** The last slot map computed for each source (RollupSlots.slotsOf); read only, so shared by reads. */
const slotMaps = new WeakMap<PeriodSource, SlotMap & Geometry>();

/** What a slot map depends on: the read's slots and the source's periods. */
interface Geometry {
  first: number;
  spanMs: number;
  count: number;
  chunkStart: number;
  periodMs: number;
}

export class RollupSlots {
  /** 1 where the slot has data (a stored period or a recalculated one). */
  readonly present: Uint8Array;
  private readonly sources: Source[] = [];
  /**
   * Periods computed from raw data not yet aged, added to what is stored (storage/rollups.ts:
   * the two never hold the same samples). Summed among themselves first, then added to the
   * stored sum: the order the answers have always been summed in.
   */
  private readonly computed: Source[] = [];
  /** Slots replaced by a recalculation from raw (null: no data). */
  private readonly replaced = new Map<number, RollupAccumulator | null>();
  /** Columns summed so far, by chunk column id. */
  private readonly cache = new Map<number, Float64Array>();

  constructor(
    readonly first: number,
    readonly spanMs: number,
    readonly count: number,
  ) {
    this.present = scratchUint8(count);
  }

  /** Adds a stored chunk starting at `chunkStart` whose periods are `periodMs` long. */
  addChunk(chunk: PeriodSource, chunkStart: number, periodMs: number): void {
    this.sources.push(this.source(chunk, chunkStart, periodMs));
  }

  /** Adds periods computed from raw data (not replacing slots recalculated as a whole). */
  addComputed(periods: PeriodSource, first: number, periodMs: number): void {
    this.computed.push(this.source(periods, first, periodMs));
  }

  private source(chunk: PeriodSource, chunkStart: number, periodMs: number): Source {
    const { slotOf, aligned } = this.slotsOf(chunk, chunkStart, periodMs);
    const present = this.present;
    const replaced = this.replaced.size > 0 ? this.replaced : null;
    for (let j = 0; j < slotOf.length; j++) {
      const i = slotOf[j]!;
      if (i >= 0 && (replaced === null || !replaced.has(i))) present[i] = 1;
    }
    this.cache.clear();
    return { chunk, slotOf, aligned };
  }

  /**
   * The slot of each of a source's periods (-1: outside the read), kept on the source for the
   * next read of the same geometry: sources are cached (decoded chunks, computed spans) and a
   * dashboard asks the same range again (issue 31: a tenth of a cached 30-day read's time).
   */
  private slotsOf(chunk: PeriodSource, chunkStart: number, periodMs: number): SlotMap {
    const kept = chunk.transient === true ? undefined : slotMaps.get(chunk);
    if (kept?.first === this.first && kept.spanMs === this.spanMs && kept.count === this.count && kept.chunkStart === chunkStart && kept.periodMs === periodMs) return kept;
    const slotOf = chunk.transient === true ? scratchInt32(chunk.slots.length) : new Int32Array(chunk.slots.length);
    const end = this.first + this.count * this.spanMs;
    let aligned = slotOf.length === this.count;
    for (let j = 0; j < chunk.slots.length; j++) {
      const ts = chunkStart + chunk.slots[j]! * periodMs;
      slotOf[j] = ts >= this.first && ts < end ? Math.floor((ts - this.first) / this.spanMs) : -1;
      aligned &&= slotOf[j] === j && ts === this.first + j * this.spanMs;
    }
    const map = { first: this.first, spanMs: this.spanMs, count: this.count, chunkStart, periodMs, slotOf, aligned };
    if (chunk.transient !== true) slotMaps.set(chunk, map);
    return map;
  }

  /** Replaces slot i by a recalculated accumulator (null: the slot has no data). */
  replace(i: number, acc: RollupAccumulator | null): void {
    this.replaced.set(i, acc);
    this.present[i] = acc === null ? 0 : 1;
    this.cache.clear();
  }

  /** True when slot i was recalculated as a whole. */
  isReplaced(i: number): boolean {
    return this.replaced.has(i);
  }

  /**
   * One part of one quantity per slot (0 where the slot has no data): scratch memory
   * (model/scratch.ts) or a source's own column, to read while the read lasts, never to
   * change, keep or post.
   */
  column(q: Quantity, part: Part): Float64Array {
    const key = columnId(q, part);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const only = this.sources.length + this.computed.length === 1 && this.replaced.size === 0 ? (this.sources[0] ?? this.computed[0]!) : null;
    // A read of one source in its own periods (a day of a metric at its finest period, say): the
    // source's column is the answer, with nothing to add up.
    if (only?.aligned === true) return only.chunk.column(q, part);
    const out = scratchFloat64(this.count);
    sumInto(out, this.sources, q, part, null);
    if (this.computed.length > 0 && this.sources.length === 0) {
      // Nothing stored (a read within the raw retention): the computed sum is the answer.
      sumInto(out, this.computed, q, part, null);
    } else if (this.computed.length > 0) {
      const added = scratchFloat64(this.count);
      const has = scratchUint8(this.count);
      sumInto(added, this.computed, q, part, has);
      for (let i = 0; i < this.count; i++) if (has[i] === 1) out[i] += added[i]!;
    }
    for (const [i, acc] of this.replaced) out[i] = acc === null ? 0 : acc[q][part];
    this.cache.set(key, out);
    return out;
  }

  /** Slot i as an accumulator, or null when it has no data. */
  row(i: number): RollupAccumulator | null {
    if (this.replaced.has(i)) return this.replaced.get(i)!;
    if (this.present[i] === 0) return null;
    const acc = emptyAccumulator();
    for (const q of QUANTITIES) for (const part of PARTS) acc[q][part] = this.column(q, part)[i]!;
    return acc;
  }

  /** Start of slot i, ms. */
  startOf(i: number): number {
    return this.first + i * this.spanMs;
  }
}

/** Adds one column of every source into `out` by slot; `has` (if given) gets 1 per slot that got a value. */
function sumInto(out: Float64Array, sources: readonly Source[], q: Quantity, part: Part, has: Uint8Array | null): void {
  for (const { chunk, slotOf } of sources) {
    const values = chunk.column(q, part);
    for (let j = 0; j < slotOf.length; j++) {
      const i = slotOf[j]!;
      if (i < 0) continue;
      out[i] += values[j]!;
      if (has !== null) has[i] = 1;
    }
  }
}
