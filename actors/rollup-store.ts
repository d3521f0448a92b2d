// One partition's numeric rollups (CF.rollup): sealed raw windows are rolled up into the
// finest level once quiet, and every coarser period containing them is rebuilt from the
// next finer level; /rollup reads merge rolled records with raw recalculation.
// Only the partition actor calls this, one message at a time.
import type { FerriteConfig, RollupLevel } from '../model/config.js';
import { ferr } from '../model/errors.js';
import { accumulate, decodeAccumulator, periodStart, emptyAccumulator, encodeAccumulator, mergeAccumulators, type RollupAccumulator, type RollupCarry } from '../model/rollup/accumulator.js';
import type { Series } from '../model/series.js';
import type { NumericValue } from '../model/types.js';
import { CF, rollupDirtyKey, rollupDirtyPrefix, rollupKey, rollupStartOf } from '../storage/keys.js';
import type { Store, StoreBatch } from '../storage/rocks.js';
import { loadMarkers } from './markers.js';
import type { MetricRef } from './metric-info.js';

const SECOND = 1000;
/** Most time one checkpoint spends rolling up before yielding the actor. */
const ROLLUP_BUDGET_MS = 50;
/** Samples before a window that give a rollup its carry (last sample, last rates). */
const CARRY_SAMPLES = 4;
/** Most rollup records one iterator call fetches. */
const MAX_SCAN_CAPACITY = 2048;

export type RollupEngine = 'dispatch' | 'nnt' | 'recalc';

/** Raw numeric data as the partition reads it (blocks plus open buffers). */
export interface RawSource {
  read(metric: MetricRef, start: number, end: number): Promise<Series<NumericValue>>;
  /** At least `n` non-null samples before `before` when that many exist. */
  before(metric: MetricRef, before: number, n: number): Promise<Series<NumericValue>>;
  /** Windows of open buffers (not yet sealed, so not rolled up). */
  openWindows(metric: MetricRef): number[];
}

/** [period start ms, accumulator or null when the period has no data]. */
export type RollupRow = [number, RollupAccumulator | null];

export class RollupStore {
  /** Sealed raw windows not yet rolled up: idHex → window starts. */
  private readonly dirty = new Map<string, Set<number>>();
  private readonly levels: readonly RollupLevel[];
  private readonly spanMs: number;
  private readonly quietMs: number;

  private constructor(
    private readonly partition: number,
    private readonly store: Store,
    config: FerriteConfig,
  ) {
    this.levels = config.rollups;
    this.spanMs = config.blockSpanMs;
    this.quietMs = config.rollupQuietMs;
  }

  static async open(partition: number, store: Store, config: FerriteConfig): Promise<RollupStore> {
    const rs = new RollupStore(partition, store, config);
    for (const m of await loadMarkers(store, rollupDirtyPrefix(partition))) rs.note(m.idHex, m.start);
    return rs;
  }

  private get baseMs(): number {
    return this.levels[0]!.period * SECOND;
  }

  /** Adds a dirty marker for a numeric window being sealed (in the seal's batch). */
  markSealed(batch: StoreBatch, idHex: string, windowStart: number): void {
    batch.put(CF.state, rollupDirtyKey(this.partition, idHex, windowStart), Buffer.alloc(0));
  }

  /** Call once the seal's batch is written. */
  note(idHex: string, windowStart: number): void {
    let starts = this.dirty.get(idHex);
    if (starts === undefined) this.dirty.set(idHex, (starts = new Set()));
    starts.add(windowStart);
  }

  /** Rolls up quiet dirty windows, within a time budget. */
  async rollUp(raw: RawSource, now: number): Promise<void> {
    const deadline = performance.now() + ROLLUP_BUDGET_MS;
    for (const [idHex, starts] of this.dirty) {
      const metric = { id: Buffer.from(idHex, 'hex'), idHex };
      for (const w of [...starts].sort((a, b) => a - b)) {
        if (w + this.spanMs + this.quietMs > now) continue;
        try {
          await this.rollWindow(raw, metric, w);
        } catch (error) {
          throw new Error(`rolling up metric ${idHex} window ${new Date(w).toISOString()}: ${(error as Error).message}`, { cause: error });
        }
        starts.delete(w);
        if (performance.now() > deadline) break;
      }
      if (starts.size === 0) this.dirty.delete(idHex);
      if (performance.now() > deadline) return;
    }
  }

  private async rollWindow(raw: RawSource, metric: MetricRef, w: number): Promise<void> {
    const carry = await this.carryBefore(raw, metric, w);
    const samples = await raw.read(metric, w, w + this.spanMs);
    const base = this.levels[0]!;
    const fresh = accumulate(samples, this.baseMs, carry).periods;
    const batch = this.store.batch();
    batch.deleteRange(CF.rollup, rollupKey(metric.id, base.period, w), rollupKey(metric.id, base.period, w + this.spanMs));
    for (const [start, acc] of fresh) batch.put(CF.rollup, rollupKey(metric.id, base.period, start), encodeAccumulator(acc));
    const touched = new Map<number, RollupAccumulator | null>();
    for (let s = w; s < w + this.spanMs; s += this.baseMs) touched.set(s, fresh.get(s) ?? null);
    await this.rebuildCoarser(batch, metric, touched);
    batch.delete(CF.state, rollupDirtyKey(this.partition, metric.idHex, w));
    await batch.write();
  }

  /**
   * Rebuilds, in `batch`, every coarser period containing a base period of `touched`
   * (start → its new accumulator, null = no data), each from the next finer level.
   */
  private async rebuildCoarser(batch: StoreBatch, metric: MetricRef, touched: Map<number, RollupAccumulator | null>): Promise<void> {
    let finer = touched;
    let finerLevel = this.levels[0]!;
    for (const level of this.levels.slice(1)) {
      const levelMs = level.period * SECOND;
      const next = new Map<number, RollupAccumulator | null>();
      for (const p of new Set([...finer.keys()].map((s) => s - (s % levelMs)))) {
        const parts = await this.stored(metric, finerLevel.period, p, p + levelMs);
        for (const [s, acc] of finer) {
          if (s < p || s >= p + levelMs) continue;
          if (acc === null) parts.delete(s);
          else parts.set(s, acc);
        }
        const sum = parts.size === 0 ? null : [...parts.values()].reduce(mergeAccumulators, emptyAccumulator());
        const key = rollupKey(metric.id, level.period, p);
        if (sum === null) batch.delete(CF.rollup, key);
        else batch.put(CF.rollup, key, encodeAccumulator(sum));
        next.set(p, sum);
      }
      finer = next;
      finerLevel = level;
    }
  }

  /** Stores base-level records written by /write/nnt and rebuilds the coarser periods. */
  async write(metric: MetricRef, records: [number, RollupAccumulator][]): Promise<void> {
    const base = this.levels[0]!;
    const batch = this.store.batch();
    const touched = new Map<number, RollupAccumulator | null>();
    for (const [start, acc] of records) {
      const s = start - (start % this.baseMs);
      const merged = touched.has(s) ? mergeAccumulators(touched.get(s)!, acc) : acc;
      touched.set(s, merged);
      batch.put(CF.rollup, rollupKey(metric.id, base.period, s), encodeAccumulator(merged));
    }
    await this.rebuildCoarser(batch, metric, touched);
    await batch.write();
  }

  /**
   * Rollups of `metric` per `spanMs` for the periods `first` + k·spanMs that start before
   * `end`. Stored levels serve when one divides both `spanMs` and `first`; otherwise
   * `dispatch` recalculates from raw and `nnt` fails.
   */
  async read(raw: RawSource, metric: MetricRef, spanMs: number, first: number, end: number, engine: RollupEngine): Promise<RollupRow[]> {
    const periods: number[] = [];
    for (let p = first; p < end; p += spanMs) periods.push(p);
    const level = engine === 'recalc' ? undefined : this.levelServing(spanMs, first);
    if (level === undefined) {
      if (engine !== 'nnt') return this.recalc(raw, metric, spanMs, periods);
      throw ferr('FER_ERR_BAD_PARAM', 'rollup_span', `no rollup serves ${spanMs} ms (levels: ${this.levels.map((l) => `${l.period}s`).join(', ')}); use get_engine=recalc`);
    }
    const rolled = new Map<number, RollupAccumulator>();
    for (const [s, acc] of await this.stored(metric, level.period, first, end)) {
      const p = periodStart(s, spanMs, first);
      rolled.set(p, rolled.has(p) ? mergeAccumulators(rolled.get(p)!, acc) : acc);
    }
    if (engine === 'nnt') return periods.map((p) => [p, rolled.get(p) ?? null]);
    // dispatch: periods with no rolled data, or touching raw not yet rolled up, come from raw.
    const stale = this.staleWindows(raw, metric);
    const fromRaw = periods.filter((p) => !rolled.has(p) || stale.some((w) => w < p + spanMs && w + this.spanMs > p));
    const recalculated = new Map(await this.recalc(raw, metric, spanMs, fromRaw));
    return periods.map((p) => [p, recalculated.has(p) ? recalculated.get(p)! : rolled.get(p) ?? null]);
  }

  /** The coarsest level whose period divides both the span and the first period start. */
  private levelServing(spanMs: number, first: number): RollupLevel | undefined {
    return [...this.levels].reverse().find((l) => spanMs % (l.period * SECOND) === 0 && first % (l.period * SECOND) === 0);
  }

  private staleWindows(raw: RawSource, metric: MetricRef): number[] {
    return [...(this.dirty.get(metric.idHex) ?? []), ...raw.openWindows(metric)];
  }

  private async recalc(raw: RawSource, metric: MetricRef, spanMs: number, periods: number[]): Promise<RollupRow[]> {
    if (periods.length === 0) return [];
    const from = periods[0]!;
    const to = periods[periods.length - 1]! + spanMs;
    const carry = await this.carryBefore(raw, metric, from);
    const got = accumulate(await raw.read(metric, from, to), spanMs, carry, from).periods;
    return periods.map((p) => [p, got.get(p) ?? null]);
  }

  private async carryBefore(raw: RawSource, metric: MetricRef, before: number): Promise<RollupCarry | null> {
    return accumulate(await raw.before(metric, before, CARRY_SAMPLES), this.baseMs, null).carry;
  }

  private async stored(metric: MetricRef, period: number, from: number, to: number): Promise<Map<number, RollupAccumulator>> {
    const out = new Map<number, RollupAccumulator>();
    // Fetch as many records per native call as the range can hold: each call is a round trip.
    const capacity = Math.min(MAX_SCAN_CAPACITY, Math.max(16, Math.ceil((to - from) / (period * SECOND))));
    const scan = this.store.scan(CF.rollup, { gte: rollupKey(metric.id, period, from), lt: rollupKey(metric.id, period, to), capacity });
    for await (const { key, value } of scan) out.set(rollupStartOf(key), decodeAccumulator(value));
    return out;
  }

  /** Deletes, in `batch`, every level's records before `before` (a raw delete keeps rollups; a full delete does not). */
  deleteAll(batch: StoreBatch, metric: MetricRef): void {
    for (const level of this.levels) batch.deleteRange(CF.rollup, rollupKey(metric.id, level.period, 0), rollupKey(metric.id, level.period, Number.MAX_SAFE_INTEGER));
    const starts = this.dirty.get(metric.idHex);
    for (const w of starts ?? []) batch.delete(CF.state, rollupDirtyKey(this.partition, metric.idHex, w));
    this.dirty.delete(metric.idHex);
  }
}
