// One partition's numeric rollups (CF.rollup, columnar chunks: model/rollup/chunk.ts). Raw
// data is aged into rollups when it leaves the raw retention (interface: "stored as received
// for a configurable time and then aged into rollups"): the oldest raw windows are rolled up
// and deleted in one atomic batch, so a sample is always either raw or in the stored rollups,
// never both. Rollup reads (`dispatch`) therefore add the periods computed from raw to the
// stored ones; `nnt` reads only what is stored (aged data and /write/nnt records).
//
// A data directory from before ageing rolled raw windows up a minute after they sealed while
// keeping the raw data: raw stamped before its partition's legacy cut is already in the stored
// rollups, and windows sealed below the cut are still rolled up that way (per-window dirty
// markers), until ageing has passed the cut. Only the partition actor calls this, one message
// at a time.
import type { FerriteConfig, RollupLevel } from '../model/config.js';
import { ferr } from '../model/errors.js';
import { maxOf, minOf } from '../model/extremes.js';
import { accumulate, addInto, emptyAccumulator, mergeAccumulators, type RollupAccumulator, type RollupCarry } from '../model/rollup/accumulator.js';
import { ALL_COLUMNS } from '../model/rollup/chunk.js';
import { RollupSlots } from '../model/rollup/slots.js';
import { lowerBound } from '../model/series.js';
import { denseSlice, emptyDense, releaseDense, type DenseSeries } from '../model/dense-series.js';
import { agedCarryKey, CF, rollupAgeingKey, rollupDirtyKey, rollupDirtyPrefix, rollupFloorKey, rollupFloorPrefix, rollupKey } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';
import { loadMarkers } from './markers.js';
import type { MetricRef } from '../model/metric-info.js';
import { ChunkEdit, hasPeriodBefore, readChunks, stageAddedPeriods, storedPeriodStarts } from './rollup-chunks.js';
import { CHUNK_PERIODS, chunkSpanMs, chunkStartOf } from '../model/rollup/chunk.js';
import { accumulateColumns, accumulateValues, carryAfter, COARSEN_MIN, CompactPeriods, PeriodColumns, valueStatInto, valuesOnly } from '../model/rollup/period-columns.js';
import { fieldColumns, fieldInto, type FieldSpec } from '../model/rollup/fields.js';
import { ComputedRollups } from './metric-cache.js';
import { migrateRollups } from './rollup-migration.js';

const SECOND = 1000;
/**
 * Most time one checkpoint spends rolling up before yielding the actor. Partitions roll up
 * side by side (their awaits interleave), so this is about how much of each checkpoint
 * interval goes to a backlog: 50 ms left a restart's backlog 60-90% idle; reads and applies
 * of a partition wait at most this long (plus one metric's pass) behind its rollups.
 */
const ROLLUP_BUDGET_MS = 200;
/** Samples before a window that give a rollup its carry (last sample, last rates). */
const CARRY_SAMPLES = 4;
/** Chunk spans (a day each at 60 s) a rollup read computes from raw without first seeking the windows that hold raw data (two months). */
const NARROW_READ_SPANS = 64;
/** Metrics whose rollups share one RocksDB batch. */
const METRICS_PER_BATCH = 64;
/**
 * Most raw time one metric rolls up per pass: a backfill of months goes a week at a time,
 * so a pass is bounded, while coarse chunks (30 days at 1800 s) are not rewritten per day.
 */
const MAX_PASS_MS = 7 * 86_400_000;

export type RollupEngine = 'dispatch' | 'nnt' | 'recalc';

/** Raw numeric data as the partition reads it (blocks plus open buffers). */
export interface RawSource {
  /** The samples with a number stamped in [start, end) (model/dense-series.ts). */
  read(metric: MetricRef, start: number, end: number): Promise<DenseSeries>;
  /** Like `read`, of sealed blocks only (what ageing deletes). */
  readSealed(metric: MetricRef, start: number, end: number): Promise<DenseSeries>;
  /** At least `n` samples with a number before `before` when that many exist. */
  before(metric: MetricRef, before: number, n: number): Promise<DenseSeries>;
  /** Windows of open buffers (not yet sealed, so not rolled up). */
  openWindows(metric: MetricRef): number[];
  /** The first and last windows (starts) with sealed raw data among those overlapping [start, end); null: none. */
  sealedWindows(metric: MetricRef, start: number, end: number): Promise<[number, number] | null>;
}

export { RollupSlots };

/** A metric as the rollup store keys it; `idHex` may be computed when read. */
interface HexNamed {
  readonly idHex: string;
}

export class RollupStore {
  /** Sealed raw windows below the legacy cut not yet rolled up: idHex → window starts. */
  private readonly dirty = new Map<string, Set<number>>();
  /** Per metric, the time before which an /nnt delete hid its raw data from rollup reads. */
  private readonly floors = new Map<string, number>();
  private readonly levels: readonly RollupLevel[];
  private readonly spanMs: number;
  private readonly quietMs: number;
  /** Reads keep what they decode and compute (config.rollupCacheBytes > 0). */
  private readonly cached: boolean;

  private constructor(
    private readonly partition: number,
    private readonly store: Store,
    config: FerriteConfig,
    /** Raw stamped before this is in the stored rollups already (0: a data dir that always aged). */
    private readonly legacyCut: number,
    private readonly computed: ComputedRollups,
  ) {
    this.levels = config.rollups;
    this.spanMs = config.blockSpanMs;
    this.quietMs = config.rollupQuietMs;
    this.cached = config.rollupCacheBytes > 0;
  }

  /** Opens a partition's rollups; the first open of a data dir with v1 records migrates them. */
  static async open(partition: number, store: Store, config: FerriteConfig, computed = new ComputedRollups()): Promise<RollupStore> {
    await migrateRollups(store);
    const rs = new RollupStore(partition, store, config, await legacyCutOf(store, partition, config), computed);
    for (const m of await loadMarkers(store, rollupDirtyPrefix(partition))) rs.note(m, m.start);
    for (const m of await loadMarkers(store, rollupFloorPrefix(partition))) rs.floors.set(m.idHex, Math.max(m.start, rs.floors.get(m.idHex) ?? 0));
    return rs;
  }

  private get baseMs(): number {
    return this.levels[0]!.period * SECOND;
  }

  /**
   * A numeric window being sealed: below the legacy cut it gets a dirty marker (in the seal's batch).
   * The metric's hex id is asked for only then: a stop seals a million windows, each above the cut.
   */
  markSealed(batch: StoreBatch, metric: HexNamed, windowStart: number): void {
    if (windowStart < this.legacyCut) batch.put(CF.state, rollupDirtyKey(this.partition, metric.idHex, windowStart), Buffer.alloc(0));
  }

  /** Call once the seal's batch is written (the hex id, again, only when something is kept by it). */
  note(metric: HexNamed, windowStart: number): void {
    if (this.computed.size === 0 && windowStart >= this.legacyCut) return;
    const idHex = metric.idHex;
    this.computed.dropFrom(idHex, chunkStartOf(windowStart, this.levels[0]?.period ?? 60));
    if (windowStart >= this.legacyCut) return;
    let starts = this.dirty.get(idHex);
    if (starts === undefined) this.dirty.set(idHex, (starts = new Set()));
    starts.add(windowStart);
  }

  /** Raw data of the metric before this is not part of its rollups as reads see them (already stored, or hidden by an /nnt delete). */
  private viewFloor(idHex: string): number {
    return Math.max(this.legacyCut, this.floors.get(idHex) ?? 0);
  }

  /**
   * Ages the metric's sealed raw data stamped before `to` into rollups, in `batch`, which must
   * also delete that raw data (the caller's: raw blocks are not ours). Windows below the legacy
   * cut that still await their rollup are rolled up first, in a batch of their own.
   */
  async stageAgeing(batch: StoreBatch, raw: RawSource, metric: MetricRef, to: number): Promise<number> {
    await this.rollLegacyBefore(raw, metric, to);
    this.computed.dropMetric(metric.idHex);
    const floor = this.viewFloor(metric.idHex);
    const samples = floor < to && this.levels.length > 0 ? await raw.readSealed(metric, floor, to) : emptyDense();
    const aged = samples.ts.length;
    // With no open buffer before `to` (a window boundary), the aged samples are every sealed
    // sample with a number from `floor` on: the reads back for the carries (one per carry,
    // each a reverse seek and a window decoded) would find them again (`knownBefore`).
    const quiet = to % this.spanMs === 0 && raw.openWindows(metric).every((w) => w >= to);
    let sums: PeriodColumns | null = null;
    let tail: DenseSeries | null = null;
    try {
      if (aged > 0) {
        const first = samples.ts[0]!;
        const from = first - (first % this.baseMs);
        sums = PeriodColumns.pooled(from, this.baseMs, Math.floor((samples.ts[aged - 1]! - from) / this.baseMs) + 1);
        // Floor 0: no sealed sample with a number lies before the first aged one.
        accumulateColumns(samples, sums, await this.carryBefore(raw, metric, first, quiet && floor === 0 ? emptyDense() : null));
        if (quiet) tail = knownBefore(samples, floor, this.spanMs);
      }
    } finally {
      releaseDense(samples);
    }
    if (sums !== null) {
      // Each level's periods of the aged samples summed from the next finer one's (periods
      // divide), then added to what is stored (aged earlier, /write/nnt), which stays whole.
      const levels = [{ periodS: this.levels[0]!.period, added: sums }];
      for (const level of this.levels.slice(1)) levels.push({ periodS: level.period, added: levels[levels.length - 1]!.added.coarser(level.period * SECOND) });
      await stageAddedPeriods(this.store, batch, metric, levels);
      for (const { added } of levels) added.release(); // staged: their memory serves the next metric
    }
    const carry = await this.carryBefore(raw, metric, to, tail);
    if (carry !== null) batch.put(CF.state, agedCarryKey(this.partition, metric.idHex), Buffer.from(JSON.stringify({ to, carry })));
    return aged;
  }

  /** Rolls up, the way of data dirs from before ageing, the metric's dirty windows before `to`. */
  private async rollLegacyBefore(raw: RawSource, metric: MetricRef, to: number): Promise<void> {
    const windows = [...(this.dirty.get(metric.idHex) ?? [])].filter((w) => w < to).sort((a, b) => a - b);
    if (windows.length === 0) return;
    const batch = this.store.batch();
    try {
      await this.rollWindows(batch, raw, metric, windows);
      await batch.write();
      this.forgetDirty(metric.idHex, windows);
    } finally {
      batch.discard();
    }
  }

  /**
   * Rolls up quiet dirty windows (below the legacy cut), within a time budget: each metric's quiet windows in one
   * pass (one raw read per run of adjacent windows, each chunk rewritten once), up to
   * METRICS_PER_BATCH metrics per RocksDB batch.
   */
  async rollUp(raw: RawSource, now: number): Promise<void> {
    const deadline = performance.now() + ROLLUP_BUDGET_MS;
    let batch = this.store.batch();
    let done: [string, number[]][] = [];
    const commit = async () => {
      await batch.write();
      for (const [idHex, windows] of done) this.forgetDirty(idHex, windows);
      batch = this.store.batch();
      done = [];
    };
    try {
      for (const [idHex, starts] of this.dirty) {
        const quiet = [...starts].filter((w) => w + this.spanMs + this.quietMs <= now).sort((a, b) => a - b);
        if (quiet.length === 0) continue;
        quiet.length = Math.min(quiet.length, Math.max(1, Math.floor(MAX_PASS_MS / this.spanMs)));
        const metric = { id: Buffer.from(idHex, 'hex'), idHex };
        try {
          await this.rollWindows(batch, raw, metric, quiet);
        } catch (error) {
          // rollWindows adds to the batch only once it cannot fail: keep the other metrics' work.
          await commit();
          const more = quiet.length > 1 ? ` (and ${quiet.length - 1} later)` : '';
          throw new Error(`rolling up metric ${idHex} window ${new Date(quiet[0]!).toISOString()}${more}: ${(error as Error).message}`, { cause: error });
        }
        done.push([idHex, quiet]);
        if (performance.now() > deadline) break;
        if (done.length >= METRICS_PER_BATCH) await commit();
      }
      await commit();
    } finally {
      batch.discard();
    }
  }

  private forgetDirty(idHex: string, windows: number[]): void {
    const starts = this.dirty.get(idHex);
    if (starts === undefined) return;
    for (const w of windows) starts.delete(w);
    if (starts.size === 0) this.dirty.delete(idHex);
  }

  /** Rolls up `windows` (ascending) of one metric into `batch`, with their dirty markers. */
  private async rollWindows(batch: StoreBatch, raw: RawSource, metric: MetricRef, windows: number[]): Promise<void> {
    const touched = new Map<number, RollupAccumulator | null>();
    for (const [from, to] of runsOf(windows, this.spanMs)) {
      const carry = await this.carryBefore(raw, metric, from);
      const fresh = accumulate(await raw.read(metric, from, to), this.baseMs, carry).periods;
      for (let s = from; s < to; s += this.baseMs) touched.set(s, fresh.get(s) ?? null);
    }
    const edit = new ChunkEdit(this.store, metric);
    await this.rebuild(edit, touched);
    edit.flush(batch);
    for (const w of windows) batch.delete(CF.state, rollupDirtyKey(this.partition, metric.idHex, w));
  }

  /**
   * Sets the base periods of `touched` (start → accumulator, null = no data) and rebuilds
   * every coarser period containing one, each from the next finer level.
   */
  private async rebuild(edit: ChunkEdit, touched: Map<number, RollupAccumulator | null>): Promise<void> {
    let finer = touched;
    let finerLevel = this.levels[0]!;
    await edit.load(finerLevel.period, [...touched.keys()].map((s) => [s, s + this.baseMs] as const));
    for (const [s, acc] of touched) edit.set(finerLevel.period, s, acc);
    for (const level of this.levels.slice(1)) {
      const levelMs = level.period * SECOND;
      const coarse = [...new Set([...finer.keys()].map((s) => s - (s % levelMs)))].sort((a, b) => a - b);
      const ranges = coarse.map((p) => [p, p + levelMs] as const);
      await edit.load(finerLevel.period, ranges);
      await edit.load(level.period, ranges);
      const next = new Map<number, RollupAccumulator | null>();
      for (const p of coarse) {
        let sum: RollupAccumulator | null = null;
        for (const acc of edit.range(finerLevel.period, p, p + levelMs)) addInto((sum ??= emptyAccumulator()), acc);
        edit.set(level.period, p, sum);
        next.set(p, sum);
      }
      finer = next;
      finerLevel = level;
    }
  }

  /** Stores base-level records written by /write/nnt and rebuilds the coarser periods. */
  async write(metric: MetricRef, records: [number, RollupAccumulator][]): Promise<void> {
    const touched = new Map<number, RollupAccumulator | null>();
    for (const [start, acc] of records) {
      const s = start - (start % this.baseMs);
      const had = touched.get(s);
      touched.set(s, had === undefined || had === null ? acc : mergeAccumulators(had, acc));
    }
    const edit = new ChunkEdit(this.store, metric);
    await this.rebuild(edit, touched);
    const batch = this.store.batch();
    edit.flush(batch);
    await batch.write();
  }

  /** Every stored period of each level, finest first: [level period s, [start ms, accumulator][]][] (a relocation's copy). */
  async levelRecords(metric: MetricRef): Promise<[number, [number, RollupAccumulator][]][]> {
    const out: [number, [number, RollupAccumulator][]][] = [];
    for (const level of this.levels) {
      const starts: number[] = [];
      for await (const s of storedPeriodStarts(this.store, metric, level.period)) starts.push(s);
      if (starts.length === 0) continue;
      const periodMs = level.period * SECOND;
      const edit = new ChunkEdit(this.store, metric);
      await edit.load(level.period, starts.map((s) => [s, s + periodMs] as const));
      const records: [number, RollupAccumulator][] = [];
      for (const s of starts) for (const acc of edit.range(level.period, s, s + periodMs)) records.push([s, acc]);
      out.push([level.period, records]);
    }
    return out;
  }

  /**
   * Sets the given periods of each level as they are, rebuilding nothing from finer levels (a
   * relocation's copy of what the sender stored, coarse periods whose finer ones expired
   * included). A period sent again is set to the same value: a repeated copy changes nothing.
   */
  async setLevels(metric: MetricRef, levels: [number, [number, RollupAccumulator][]][]): Promise<void> {
    const edit = new ChunkEdit(this.store, metric);
    for (const [period, records] of levels) {
      if (!this.levels.some((l) => l.period === period)) continue; // a level this node does not keep
      await edit.load(period, records.map(([s]) => [s, s + period * SECOND] as const));
      for (const [s, acc] of records) edit.set(period, s - (s % (period * SECOND)), acc);
    }
    const batch = this.store.batch();
    edit.flush(batch);
    await batch.write();
  }

  /**
   * Rollups of `metric` per `spanMs` for the periods `first` + k·spanMs that start before
   * `end`. Stored levels serve when one divides both `spanMs` and `first`; otherwise
   * `dispatch` recalculates from raw and `nnt` fails.
   */
  async read(raw: RawSource, metric: MetricRef, spanMs: number, first: number, end: number, engine: RollupEngine, columns: readonly number[] = ALL_COLUMNS): Promise<RollupSlots> {
    const slots = new RollupSlots(first, spanMs, Math.max(0, Math.ceil((end - first) / spanMs)));
    const level = engine === 'recalc' ? undefined : this.levelServing(spanMs, first);
    if (level === undefined) {
      if (engine === 'nnt') throw ferr('FER_ERR_BAD_PARAM', 'rollup_span', `no rollup serves ${spanMs} ms (levels: ${this.levels.map((l) => `${l.period}s`).join(', ')}); use get_engine=recalc`);
      if (valuesOnly(columns)) await this.recalcValues(raw, metric, slots);
      else await this.recalc(raw, metric, slots, 0, slots.count);
      return slots;
    }
    // Stale windows first: a rollup finishing meanwhile is then either seen as stale or read as written.
    const stale = engine === 'dispatch' ? this.staleWindows(raw, metric) : [];
    for (const { start, chunk } of await readChunks(this.store, metric, level.period, first, end, columns, this.cached)) slots.addChunk(chunk, start, level.period * SECOND);
    if (engine !== 'dispatch') return slots;
    // Slots touching legacy windows not yet rolled up are recalculated from raw as a whole.
    for (const [lo, hi] of staleSlots(slots, stale, this.spanMs)) await this.recalc(raw, metric, slots, lo, hi);
    await this.addRaw(raw, metric, slots, valuesOnly(columns));
    return slots;
  }

  /**
   * One field per slot into `out` (NaN: none, and blank where a slot holds no measurement, as
   * fetch cells are): `read` and `fieldInto`. A field of the value quantity over slots no stored
   * level serves (a fetch at 10 s, say) is computed from raw straight into `out`, the same bits.
   */
  async readFieldInto(raw: RawSource, metric: MetricRef, spanMs: number, first: number, end: number, engine: RollupEngine, spec: FieldSpec, out: Float64Array): Promise<void> {
    const fromRaw = engine === 'recalc' || (engine === 'dispatch' && this.levelServing(spanMs, first) === undefined);
    if (spec.q === 'value' && fromRaw && out.length === Math.max(0, Math.ceil((end - first) / spanMs))) {
      const samples = await raw.read(metric, first, first + out.length * spanMs);
      try {
        valueStatInto(out, samples, first, spanMs, spec.stat);
      } finally {
        releaseDense(samples);
      }
      return;
    }
    fieldInto(out, await this.read(raw, metric, spanMs, first, end, engine, fieldColumns(spec, true)), spec, true);
  }

  /**
   * Adds to the slots the finest level's periods computed from the raw data not aged yet, chunk
   * span by chunk span (slots are whole periods of a level, so each finest period falls in one):
   * cached spans as they are, the others from one raw read. `values`: the read needs only the
   * value quantity's columns (an average, a count): the rates are not computed.
   */
  private async addRaw(raw: RawSource, metric: MetricRef, slots: RollupSlots, values: boolean): Promise<void> {
    const floor = this.viewFloor(metric.idHex);
    const from = Math.max(slots.first, floor);
    const end = slots.startOf(slots.count);
    if (from >= end) return;
    const periodS = this.levels[0]!.period;
    const open = raw.openWindows(metric);
    let lo = from;
    let hi = end;
    // A wide read first asks which windows hold raw data (two seeks), so a read decades wide
    // costs what its data does; a read of a few spans looks for their raw data in one scan.
    if (end - from > NARROW_READ_SPANS * chunkSpanMs(periodS)) {
      const sealed = await raw.sealedWindows(metric, from, end);
      const windows = [...open.filter((w) => w + this.spanMs > from && w < end), ...(sealed ?? [])];
      if (windows.length === 0) return;
      lo = Math.max(from, minOf(windows));
      hi = Math.min(end, maxOf(windows) + this.spanMs);
    }
    const missing: number[] = [];
    for (let cs = chunkStartOf(lo, periodS); cs < hi; cs += chunkSpanMs(periodS)) {
      // A span whose raw data is all sealed is cached; one with an open buffer in it, or before it, is computed for each read.
      const hit = open.every((w) => w >= cs + chunkSpanMs(periodS)) ? this.computed.get(metric.idHex, cs) : undefined;
      if (hit === undefined || (hit.valuesOnly && !values)) missing.push(cs);
      else if (hit.slots.length > 0) addSpan(slots, hit, chunkSpanMs(periodS));
    }
    if (missing.length === 0) return;
    const computed = values ? await this.computeValueSpans(raw, metric, missing, floor) : await this.computeSpans(raw, metric, missing, floor);
    for (const [cs, periods] of computed) {
      if (open.every((w) => w >= cs + chunkSpanMs(periodS))) this.computed.put(metric.idHex, cs, periods);
      if (periods.slots.length > 0) addSpan(slots, periods, chunkSpanMs(periodS));
    }
  }

  /**
   * The finest level's periods of each chunk span in `spans` (ascending) from the raw data in it
   * (none before `floor`), read in one scan that starts a window early: each span's carry (the
   * samples before its first) comes from that read when it holds enough of them, else from
   * `carryBefore`, which gives the same carry either way.
   */
  private async computeSpans(raw: RawSource, metric: MetricRef, spans: readonly number[], floor: number): Promise<[number, CompactPeriods][]> {
    const spanMs = chunkSpanMs(this.levels[0]!.period);
    const lo = Math.max(spans[0]!, floor);
    const memStart = lo - (lo % this.spanMs) - this.spanMs;
    const samples = await raw.read(metric, Math.max(0, memStart), spans[spans.length - 1]! + spanMs);
    const out: [number, CompactPeriods][] = [];
    try {
      for (const cs of spans) {
        const a = lowerBound(samples.ts, Math.max(cs, floor));
        const b = lowerBound(samples.ts, cs + spanMs);
        // Most spans of a long read hold no raw data (aged): they cost no columns.
        if (a === b) {
          out.push([cs, NO_PERIODS(cs, this.baseMs)]);
          continue;
        }
        const columns = new PeriodColumns(cs, this.baseMs, CHUNK_PERIODS);
        const inMemory = samplesBefore(samples, a, CARRY_SAMPLES, this.spanMs, Math.max(0, memStart));
        const carry = inMemory === null ? await this.carryBefore(raw, metric, samples.ts[a]!) : carryAfter(denseSlice(samples, inMemory, a), null);
        accumulateColumns(samples, columns, carry, a, b);
        out.push([cs, columns.compact()]);
      }
    } finally {
      releaseDense(samples);
    }
    return out;
  }

  /** `computeSpans` of the value quantity alone: no rates, so no carry and no read before the first span. */
  private async computeValueSpans(raw: RawSource, metric: MetricRef, spans: readonly number[], floor: number): Promise<[number, CompactPeriods][]> {
    const spanMs = chunkSpanMs(this.levels[0]!.period);
    const samples = await raw.read(metric, Math.max(spans[0]!, floor), spans[spans.length - 1]! + spanMs);
    const out = spans.map((cs): [number, CompactPeriods] => {
      const a = lowerBound(samples.ts, Math.max(cs, floor));
      const b = lowerBound(samples.ts, cs + spanMs);
      if (a === b) return [cs, NO_PERIODS(cs, this.baseMs)];
      const columns = new PeriodColumns(cs, this.baseMs, CHUNK_PERIODS, true);
      accumulateValues(samples, columns, a, b);
      return [cs, columns.compact()];
    });
    releaseDense(samples);
    return out;
  }

  /** Raw data of the metric changed other than by a seal (a delete): what was computed from it goes. */
  rawChanged(idHex: string): void {
    this.computed.dropMetric(idHex);
  }

  /** The coarsest level whose period divides both the span and the first period start. */
  private levelServing(spanMs: number, first: number): RollupLevel | undefined {
    return [...this.levels].reverse().find((l) => spanMs % (l.period * SECOND) === 0 && first % (l.period * SECOND) === 0);
  }

  /** Legacy windows whose raw data is not (or not wholly) in the stored rollups yet. */
  private staleWindows(raw: RawSource, metric: MetricRef): number[] {
    if (this.legacyCut === 0) return [];
    return [...(this.dirty.get(metric.idHex) ?? []), ...raw.openWindows(metric).filter((w) => w < this.legacyCut)];
  }

  /** Replaces slots [lo, hi) by a recalculation from raw. */
  private async recalc(raw: RawSource, metric: MetricRef, slots: RollupSlots, lo: number, hi: number): Promise<void> {
    if (hi <= lo) return;
    const from = slots.startOf(lo);
    const carry = await this.carryBefore(raw, metric, from);
    const got = accumulate(await raw.read(metric, from, slots.startOf(hi)), slots.spanMs, carry, slots.first).periods;
    for (let i = lo; i < hi; i++) slots.replace(i, got.get(slots.startOf(i)) ?? null);
  }

  /**
   * `recalc` of every slot when the read needs only the value quantity (an average, a count):
   * no rates, so no carry and no read before the first slot, and the periods go to the slots as
   * columns instead of an accumulator per slot (the same additions in the same order).
   */
  private async recalcValues(raw: RawSource, metric: MetricRef, slots: RollupSlots): Promise<void> {
    if (slots.count === 0) return;
    const samples = await raw.read(metric, slots.first, slots.startOf(slots.count));
    try {
      const periods = PeriodColumns.scratchValues(slots.first, slots.spanMs, slots.count);
      accumulateValues(samples, periods);
      slots.addComputed(periods.compact(), slots.first, slots.spanMs);
    } finally {
      releaseDense(samples);
    }
  }

  /**
   * The carry (last sample, last rates) before `before`: from the raw samples before it, and
   * when raw has too few (they were aged), from the state ageing left after the last aged one.
   * `known`: what `raw.before(metric, before, CARRY_SAMPLES)` gives, when the caller has it already.
   */
  private async carryBefore(raw: RawSource, metric: MetricRef, before: number, known: DenseSeries | null = null): Promise<RollupCarry | null> {
    const s = known ?? (await raw.before(metric, before, CARRY_SAMPLES));
    if (s.ts.length >= CARRY_SAMPLES) return carryAfter(s, null);
    // Ageing reads sealed windows only: a metric with none (first named by this process, never sealed) has no aged state to read.
    const aged = metric.unsealed === true ? null : await this.agedCarry(metric);
    const usable = aged !== null && aged.to <= (s.ts[0] ?? before) ? aged.carry : null;
    return carryAfter(s, usable);
  }

  private async agedCarry(metric: MetricRef): Promise<{ to: number; carry: RollupCarry } | null> {
    const raw = await this.store.get(CF.state, agedCarryKey(this.partition, metric.idHex));
    return raw === null ? null : (JSON.parse(raw.toString('utf8')) as { to: number; carry: RollupCarry });
  }

  /** True when one of the levels `periods` (null: every level) has a period starting before `before` ms, stored or from raw not yet aged. */
  async hasBefore(raw: RawSource, metric: MetricRef, before: number, periods: readonly number[] | null): Promise<boolean> {
    const levels = this.selectLevels(periods);
    for (const level of levels) if (await hasPeriodBefore(this.store, metric, level.period, before)) return true;
    if (levels.length === 0) return false;
    const last = await raw.before(metric, before, 1);
    const ts = last.ts[last.ts.length - 1];
    return ts !== undefined && ts >= this.viewFloor(metric.idHex);
  }

  /**
   * `/nnt` deletes: removes the periods starting before `before` ms from the levels `periods`
   * (null: every level) — whole chunks by a range delete, the chunk holding `before` rewritten.
   * When the finest level goes, raw data before `before` stops feeding rollup reads and ageing
   * (the metric's floor), so those periods do not come back. Raw samples stay (`/raw` deletes them).
   */
  async deleteBefore(metric: MetricRef, before: number, periods: readonly number[] | null): Promise<void> {
    const levels = this.selectLevels(periods);
    const edit = new ChunkEdit(this.store, metric);
    const batch = this.store.batch();
    try {
      for (const level of levels) {
        const holding = chunkStartOf(before, level.period);
        batch.deleteRange(CF.rollup, rollupKey(metric.id, level.period, 0), rollupKey(metric.id, level.period, holding));
        await edit.load(level.period, [[before, before + 1]]);
        edit.clearBefore(level.period, before);
      }
      edit.flush(batch);
      const finest = levels.includes(this.levels[0]!);
      const dropped = finest ? [...(this.dirty.get(metric.idHex) ?? [])].filter((w) => w + this.spanMs <= before) : [];
      for (const w of dropped) batch.delete(CF.state, rollupDirtyKey(this.partition, metric.idHex, w));
      // Raw data stays (only /raw deletes it) but no longer feeds the deleted periods.
      const floor = this.floors.get(metric.idHex);
      const raised = finest && before > (floor ?? 0);
      if (raised) {
        if (floor !== undefined) batch.delete(CF.state, rollupFloorKey(this.partition, metric.idHex, floor));
        batch.put(CF.state, rollupFloorKey(this.partition, metric.idHex, before), Buffer.alloc(0));
      }
      await batch.write();
      this.forgetDirty(metric.idHex, dropped);
      if (raised) this.floors.set(metric.idHex, before);
      this.computed.dropMetric(metric.idHex);
    } finally {
      batch.discard();
    }
  }

  private selectLevels(periods: readonly number[] | null): readonly RollupLevel[] {
    return periods === null ? this.levels : this.levels.filter((l) => periods.includes(l.period));
  }

  /** Deletes, in `batch`, every level's records before `before` (a raw delete keeps rollups; a full delete does not). */
  deleteAll(batch: StoreBatch, metric: MetricRef): void {
    for (const level of this.levels) batch.deleteRange(CF.rollup, rollupKey(metric.id, level.period, 0), rollupKey(metric.id, level.period, Number.MAX_SAFE_INTEGER));
    const starts = this.dirty.get(metric.idHex);
    for (const w of starts ?? []) batch.delete(CF.state, rollupDirtyKey(this.partition, metric.idHex, w));
    this.dirty.delete(metric.idHex);
    const floor = this.floors.get(metric.idHex);
    if (floor !== undefined) batch.delete(CF.state, rollupFloorKey(this.partition, metric.idHex, floor));
    this.floors.delete(metric.idHex);
    batch.delete(CF.state, agedCarryKey(this.partition, metric.idHex));
    this.computed.dropMetric(metric.idHex);
  }
}

/**
 * Adds one chunk span's computed periods (`spanMs` long) to a read's slots: summed per slot
 * first when each slot is a whole number of them, at least COARSEN_MIN, lying inside the span
 * (the same additions in the same order as the slots would take; a 30-day read at 1 h then adds
 * 24 periods a day of each metric, not 1440).
 */
function addSpan(slots: RollupSlots, periods: CompactPeriods, spanMs: number): void {
  const ratio = slots.spanMs / periods.periodMs;
  const inside = Number.isInteger(ratio) && ratio >= COARSEN_MIN && spanMs % slots.spanMs === 0 && (periods.first - slots.first) % slots.spanMs === 0;
  const source = inside ? periods.per(slots.spanMs) : periods;
  slots.addComputed(source, source.first, source.periodMs);
}

/**
 * The partition's legacy cut, decided at the first open by a release that ages: 0 for a new
 * data dir; otherwise past anything the old release can have rolled up while keeping it (now
 * plus the clock skew samples may have, window-aligned).
 */
async function legacyCutOf(store: Store, partition: number, config: FerriteConfig): Promise<number> {
  const key = rollupAgeingKey(partition);
  const kept = await store.get(CF.state, key);
  if (kept !== null) return (JSON.parse(kept.toString('utf8')) as { legacyCut: number }).legacyCut;
  const span = config.blockSpanMs;
  const legacyCut = (await rolledUpBefore(store, partition)) ? Math.ceil((Date.now() + config.maxClockSkewMs) / span) * span : 0;
  await store.batch().put(CF.state, key, Buffer.from(JSON.stringify({ legacyCut }))).write();
  return legacyCut;
}

/** True when the store holds rollups or pending rollup work of the release before ageing. */
async function rolledUpBefore(store: Store, partition: number): Promise<boolean> {
  for await (const _ of store.scan(CF.rollup, { limit: 1 })) return true;
  return (await loadMarkers(store, rollupDirtyPrefix(partition))).length > 0;
}

/** A chunk span without raw data: no periods (for every quantity). */
const NO_PERIODS = (cs: number, periodMs: number) => new CompactPeriods(cs, periodMs, new Int32Array(0), []);

/**
 * Index of the first sample that `RawSource.before(metric, s.ts[at], n)` would return, found in
 * `s` itself (which holds every sample from `memStart`, window-aligned): the samples of the
 * window of s.ts[at] before it, then whole earlier windows until there are n. Null
 * when that reaches back past `memStart` (the raw read must go on).
 */
function samplesBefore(s: DenseSeries, at: number, n: number, windowMs: number, memStart: number): number | null {
  const t = s.ts[at]!;
  let lo = t - (t % windowMs);
  let i = at;
  for (;;) {
    while (i > 0 && s.ts[i - 1]! >= lo) i--;
    if (at - i >= n) return i;
    lo -= windowMs;
    if (lo < memStart) return null;
  }
}

/** Runs of adjacent windows as [start, end) ranges (`windows` ascending). */
function runsOf(windows: readonly number[], spanMs: number): [number, number][] {
  const runs: [number, number][] = [];
  for (const w of windows) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] === w) last[1] = w + spanMs;
    else runs.push([w, w + spanMs]);
  }
  return runs;
}

/** Runs [lo, hi) of slots overlapping any stale window [w, w + windowMs). */
function staleSlots(slots: RollupSlots, stale: readonly number[], windowMs: number): [number, number][] {
  if (stale.length === 0 || slots.count === 0) return [];
  const hit = new Uint8Array(slots.count);
  for (const w of stale) {
    const lo = Math.max(0, Math.floor((w - slots.first) / slots.spanMs));
    const hi = Math.min(slots.count, Math.ceil((w + windowMs - slots.first) / slots.spanMs));
    for (let i = lo; i < hi; i++) hit[i] = 1;
  }
  const runs: [number, number][] = [];
  for (let i = 0; i < slots.count; i++) {
    if (hit[i] === 0) continue;
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] === i) last[1] = i + 1;
    else runs.push([i, i + 1]);
  }
  return runs;
}

/**
 * The samples `RawSource.before(metric, end, CARRY_SAMPLES)` gives, from `s`, every sealed sample
 * with a number in [floor, end) where no open buffer lies before `end` (a window boundary): the
 * whole windows before `end`, newest first, until they hold CARRY_SAMPLES samples; a copy (`s`
 * goes back to its pool). Null when those windows would reach below `floor`, where `s` does not
 * hold everything `before` reads.
 */
function knownBefore(s: DenseSeries, floor: number, spanMs: number): DenseSeries | null {
  const n = s.ts.length;
  if (n < CARRY_SAMPLES) return null;
  const t = s.ts[n - CARRY_SAMPLES]!;
  const from = t - (t % spanMs);
  if (from < floor) return null;
  const i = lowerBound(s.ts, from);
  return { ts: s.ts.slice(i), values: s.values.slice(i) };
}
