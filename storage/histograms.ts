// One partition's histograms: submissions buffered per (metric, base period, journal seq),
// sealed as one key each, then merged into one base-level record once the period is closed
// and the journal can no longer replay them (CF.histogram in storage/keys.ts).
//
// Coarser levels are aged, as numeric rollups are (storage/rollups.ts): while a coarse period
// is within the raw retention it is not stored but merged from the base level when read; the
// retention sweep writes the periods that ended before the raw retention's horizon (`age`),
// and the partition's cut (`hageing/<partition>`) says which are stored. The base level is the
// histograms' finest resolution, so nothing is deleted when a period ages: a crash mid-way
// leaves the cut where it was and the next sweep writes the same periods again. When the base
// level's own retention is too short to wait for that (see `deferredLevels`), every level is
// written as soon as its base period is merged, as before ageing.
// Only the partition actor calls this, one message at a time.
import type { FerriteConfig, RollupLevel } from '../model/config.js';
import { ferr } from '../model/errors.js';
import { cumulativeDelta, deserializeHistogram, Histogram, histogramFromBase64, serializeHistogram } from '../model/histogram/index.js';
import { CF, decodeU64, encodeU64, histogramAgeingKey, histogramCumulativeKey, histogramCumulativePrefix, histogramDirtyKey, histogramDirtyPrefix, histogramKey, histogramKeyParts, METRIC_ID_BYTES, prefixEnd } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';
import { loadMarkers } from './markers.js';
import type { MetricInfo } from '../model/metric-info.js';
import { maxOf, minOf } from '../model/extremes.js';
import { MetricCache } from './metric-cache.js';

/** Sealing is forced once this many submissions wait in memory. */
const MAX_PENDING = 20_000;
const SECOND = 1000;
/** Most time one checkpoint spends rolling up before yielding the actor to reads and writes. */
const ROLLUP_BUDGET_MS = 50;
/** Base-level time one ageing read covers (a metric's backlog of months is aged a week at a time). */
const AGEING_STEP_MS = 7 * 86_400_000;
/** Levels a merged-period cache slot can name (slot = period start in seconds × this + level index). */
const CACHE_LEVELS = 8;
/** Most coarse periods one read looks up in the cache (a month at 300 s); wider reads merge without it. */
const MAX_CACHED_PERIODS = 10_000;

/**
 * Coarse periods merged from the base level for reads (null: the period holds nothing), one
 * cache per shard; a period is cached only while no submission to it is pending or unmerged.
 */
export class MergedHistograms extends MetricCache<Histogram | null> {
  constructor(maxBytes: number) {
    // Estimated heap of a histogram: its bins (a key and a count each) and the object around them.
    super(maxBytes, (h) => 64 + (h?.bucketCount ?? 0) * 24);
  }
}

interface Pending {
  id: Buffer;
  idHex: string;
  start: number;
  seq: number;
  hist: Histogram;
}

/** Base periods of one metric with unmerged submissions on disk: start → highest seq. */
interface Dirty {
  id: Buffer;
  starts: Map<number, number>;
}

/** A cumulative series' last submission: what its next one is measured against. */
interface Baseline {
  id: Buffer;
  ts: number;
  hist: Histogram;
  /** The stored key's ts (null: not stored yet); it is replaced when the buffer is sealed. */
  storedTs: number | null;
}

/** [period start ms, histogram], in time order. */
export type HistogramRow = [number, Histogram];

export class HistogramStore {
  private readonly pending = new Map<string, Pending>();
  private readonly dirty = new Map<string, Dirty>();
  /** Cumulative series by metric id hex; `unsealed`: those whose baseline moved since the last seal. */
  private readonly baselines = new Map<string, Baseline>();
  private readonly unsealed = new Set<string>();
  private readonly levels: readonly RollupLevel[];
  /**
   * Base periods set (not added to) by a relocation or rebuild copy and not sealed yet:
   * `idHex/start` → the journal seq of the latest set. Everything the period got from earlier
   * seqs is superseded: skipped by reads, dropped from disk when the set is sealed.
   */
  private readonly sets = new Map<string, { id: Buffer; start: number; seq: number }>();
  /** Coarse levels wait for ageing (else they are written with their base periods). */
  private readonly deferred: boolean;
  /** Coarse periods ending at or before this are stored (persisted: `hageing/<partition>`). */
  private agedCut = 0;
  /** The cut an ageing walk in progress is writing up to: rollups write those periods too. */
  private ageingTo = 0;

  private constructor(
    private readonly partition: number,
    private readonly store: Store,
    config: FerriteConfig,
    private readonly quietMs: number,
    private readonly merged: MergedHistograms,
  ) {
    this.levels = config.histogramRollups;
    this.deferred = deferredLevels(config);
  }

  /** Loads the dirty markers a previous run left, so their rollups resume. */
  static async open(partition: number, store: Store, config: FerriteConfig, merged = new MergedHistograms(config.rollupCacheBytes / 4)): Promise<HistogramStore> {
    const hs = new HistogramStore(partition, store, config, config.histogramRollupQuietMs, merged);
    for (const m of await loadMarkers(store, histogramDirtyPrefix(partition))) {
      hs.markDirty(Buffer.from(m.idHex, 'hex'), m.idHex, m.start, decodeU64(m.value));
    }
    for (const m of await loadMarkers(store, histogramCumulativePrefix(partition))) {
      hs.baselines.set(m.idHex, { id: Buffer.from(m.idHex, 'hex'), ts: m.start, hist: deserializeHistogram(m.value), storedTs: m.start });
    }
    const cut = await store.get(CF.state, histogramAgeingKey(partition));
    if (cut !== null) hs.agedCut = (JSON.parse(cut.toString('utf8')) as { cut: number }).cut;
    return hs;
  }

  /**
   * Coarse periods ending at or before this are stored: read from disk, rebuilt when a late
   * submission lands in them. `writing`: as a rollup writes (an ageing walk's target counts).
   */
  private storedCut(writing: boolean): number {
    if (!this.deferred) return Infinity;
    return writing ? Math.max(this.agedCut, this.ageingTo) : this.agedCut;
  }

  /**
   * Starts an ageing walk to `to` (ms): true when there is one to do. From now on rollups write
   * the coarse periods ending by `to`, so a metric the walk has passed stays complete.
   */
  beginAgeing(to: number): boolean {
    if (!this.deferred || to <= this.agedCut) return false;
    this.ageingTo = to;
    return true;
  }

  /**
   * Writes the metric's coarse periods that end after the cut and at or before the walk's
   * target, merged from its base level (each step of the walk in its own batch). Returns the
   * periods written.
   */
  async age(metric: { id: Buffer }): Promise<number> {
    const to = this.ageingTo;
    if (!this.deferred || to <= this.agedCut) return 0;
    const coarse = this.levels.slice(1);
    const coarsestMs = coarse[coarse.length - 1]!.period * SECOND;
    // Steps end on coarsest boundaries (or at `to`), so no period of any level spans two; an
    // empty stretch is skipped by seeking the next base record.
    const step = Math.max(1, Math.floor(AGEING_STEP_MS / coarsestMs)) * coarsestMs;
    let written = 0;
    let next = await this.firstBaseStart(metric.id, this.agedCut - (this.agedCut % coarsestMs));
    while (next !== null && next < to) {
      const from = next - (next % coarsestMs);
      const stepEnd = Math.min(to, from + step);
      const base = await this.stored(metric.id, this.levels[0]!.period, from, stepEnd);
      const batch = this.store.batch();
      try {
        for (const level of coarse) {
          const levelMs = level.period * SECOND;
          for (const [p, h] of regroup(sortRows(base), levelMs)) {
            if (p + levelMs <= this.agedCut || p + levelMs > to) continue;
            this.putRecord(batch, metric.id, level.period, p, h);
            written++;
          }
        }
        await batch.write();
      } finally {
        batch.discard();
      }
      next = await this.firstBaseStart(metric.id, stepEnd);
    }
    return written;
  }

  /** Ends the ageing walk: every metric aged, so reads take coarse periods ending by `to` from disk. */
  async finishAgeing(to: number): Promise<void> {
    if (to <= this.agedCut) return;
    await this.store.batch().put(CF.state, histogramAgeingKey(this.partition), Buffer.from(JSON.stringify({ cut: to }))).write();
    this.agedCut = to;
    this.ageingTo = 0;
  }

  /** Coarse periods ending by this (ms) are stored; 0 when none has aged (or levels are not deferred). */
  get agedTo(): number {
    return this.deferred ? this.agedCut : 0;
  }

  /** An ageing walk that failed: the cut stays, and the next sweep walks again. */
  abandonAgeing(): void {
    this.ageingTo = 0;
  }

  /** The start of the metric's first stored base record at or after `from`, or null. */
  private async firstBaseStart(id: Buffer, from: number): Promise<number | null> {
    const base = this.levels[0]!.period;
    for await (const { key } of this.store.scan(CF.histogram, { gte: histogramKey(id, base, from, 0), lt: histogramKey(id, base + 1, 0, 0), limit: 1 })) return histogramKeyParts(key).start;
    return null;
  }

  private get baseMs(): number {
    return this.levels[0]!.period * SECOND;
  }

  /**
   * Buffers one journaled submission; returns true when the buffer should be sealed. A
   * cumulative one adds its change since the series' previous one (the first: all of it); one
   * not newer than that is a repeat (journal replay) or late, and adds nothing. The baseline is
   * stored with the buffer, so replay after a crash measures against what it was then.
   */
  apply(metric: MetricInfo, ts: number, base64: string, seq: number, cumulative = false): boolean {
    let hist: Histogram;
    // Validated at ingest; a journal entry written by an older, laxer build is skipped.
    try {
      hist = histogramFromBase64(base64);
    } catch {
      return false;
    }
    if (cumulative) {
      const base = this.baselines.get(metric.idHex);
      if (base !== undefined && ts <= base.ts) return false;
      this.baselines.set(metric.idHex, { id: metric.id, ts, hist, storedTs: base?.storedTs ?? null });
      this.unsealed.add(metric.idHex);
      if (base !== undefined) hist = cumulativeDelta(hist, base.hist);
    }
    const start = ts - (ts % this.baseMs);
    const key = `${metric.idHex}/${start}/${seq}`;
    let entry = this.pending.get(key);
    if (entry === undefined) {
      entry = { id: metric.id, idHex: metric.idHex, start, seq, hist: Histogram.empty() };
      this.pending.set(key, entry);
    }
    entry.hist.merge(hist);
    return this.pending.size >= MAX_PENDING;
  }

  /**
   * Buffers a period set (a relocation or rebuild copy, model/ingest-record.ts): from journal
   * seq `seq` on, the base period starting at `ts` holds `base64` plus whatever later seqs add.
   * Being a replacement, a set sent again (a REHASH or rebuild that restarted) changes nothing,
   * and a journal replay re-applies it in order (earlier entries first, then the set, then later
   * ones), so the outcome is the same. Returns true when the buffer should be sealed.
   */
  setPeriod(metric: MetricInfo, ts: number, base64: string, seq: number): boolean {
    let hist: Histogram;
    try {
      hist = histogramFromBase64(base64);
    } catch {
      return false;
    }
    const start = ts - (ts % this.baseMs);
    const period = `${metric.idHex}/${start}`;
    const had = this.sets.get(period);
    if (had === undefined || had.seq <= seq) this.sets.set(period, { id: metric.id, start, seq });
    // Two sets of one period in one journal entry: the later one wins.
    this.pending.set(`${period}/${seq}`, { id: metric.id, idHex: metric.idHex, start, seq, hist });
    return this.pending.size >= MAX_PENDING;
  }

  /** True when a pending set of the period supersedes what seq `seq` put there. */
  private superseded(idHex: string, start: number, seq: number): boolean {
    const set = this.sets.get(`${idHex}/${start}`);
    return set !== undefined && seq < set.seq;
  }

  /** The oldest journal sequence still only in memory (Infinity when none). */
  lowWater(): number {
    let low = Infinity;
    for (const p of this.pending.values()) if (p.seq < low) low = p.seq;
    return low;
  }

  /** Writes every buffered submission (one key per metric, period and request) and its dirty marker. */
  async seal(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.store.batch();
    const base = this.levels[0]!.period;
    // A set replaces every record of its period from earlier seqs (the merged one at seq 0 too).
    for (const set of this.sets.values()) batch.deleteRange(CF.histogram, histogramKey(set.id, base, set.start, 0), histogramKey(set.id, base, set.start, set.seq));
    for (const p of this.pending.values()) {
      if (this.superseded(p.idHex, p.start, p.seq)) continue;
      batch.put(CF.histogram, histogramKey(p.id, base, p.start, p.seq), serializeHistogram(p.hist));
      const seq = Math.max(p.seq, this.dirty.get(p.idHex)?.starts.get(p.start) ?? 0);
      batch.put(CF.state, histogramDirtyKey(this.partition, p.idHex, p.start), encodeU64(seq));
    }
    const moved = [...this.unsealed].map((idHex) => [idHex, this.baselines.get(idHex)!] as const);
    for (const [idHex, b] of moved) {
      if (b.storedTs !== null) batch.delete(CF.state, histogramCumulativeKey(this.partition, idHex, b.storedTs));
      batch.put(CF.state, histogramCumulativeKey(this.partition, idHex, b.ts), serializeHistogram(b.hist));
    }
    await batch.write();
    for (const [, b] of moved) b.storedTs = b.ts;
    this.unsealed.clear();
    for (const p of this.pending.values()) {
      this.markDirty(p.id, p.idHex, p.start, p.seq);
      this.merged.dropMetric(p.idHex);
    }
    this.pending.clear();
    this.sets.clear();
  }

  /**
   * Merges each closed dirty base period whose submissions the journal can no longer
   * replay (all seqs below `journalCut`), and rebuilds the coarser periods containing it.
   */
  async rollUp(journalCut: number, now: number): Promise<void> {
    const deadline = performance.now() + ROLLUP_BUDGET_MS;
    for (const [idHex, d] of this.dirty) {
      const due = [...d.starts].filter(([start, maxSeq]) => maxSeq < journalCut && start + this.baseMs + this.quietMs <= now).map(([start]) => start);
      if (due.length > 0) await this.rollMetric(d.id, idHex, due, now);
      for (const start of due) d.starts.delete(start);
      if (d.starts.size === 0) this.dirty.delete(idHex);
      // Reads and writes queue behind this actor: leave the rest for the next checkpoint.
      if (performance.now() > deadline) return;
    }
  }

  /**
   * Histograms of `metric` per `periodSecs` for periods starting in [start, end] (ms,
   * both inclusive), built from the coarsest level whose period divides `periodSecs`.
   */
  async read(metric: MetricInfo, periodSecs: number, start: number, end: number): Promise<HistogramRow[]> {
    const level = [...this.levels].reverse().find((l) => periodSecs % l.period === 0);
    if (level === undefined) {
      const periods = this.levels.map((l) => l.period).join(', ');
      throw ferr('FER_ERR_BAD_PARAM', 'period', `${periodSecs} s is not served by any histogram rollup (${periods}) nor built from one`);
    }
    const periodMs = periodSecs * SECOND;
    const from = start - (start % periodMs);
    // Up to the end of the last period wanted (it starts at or before `end` but may hold data after it).
    const to = end - (end % periodMs) + periodMs;
    const rows = await this.levelRows(metric, level.period * SECOND, from, to);
    return regroup(rows, periodMs).filter(([s]) => s >= from && s <= end);
  }

  /** True when the metric has histogram data in a period starting before `before` (in the given levels). */
  async hasDataBefore(metric: MetricInfo, before: number, periods: readonly number[] | null): Promise<boolean> {
    for (const p of this.pending.values()) if (p.idHex === metric.idHex && p.start < before) return true;
    for (const level of this.selectLevels(periods)) {
      const scan = this.store.scan(CF.histogram, { gte: histogramKey(metric.id, level.period, 0, 0), lt: histogramKey(metric.id, level.period, before, 0), limit: 1 });
      for await (const _ of scan) return true;
    }
    return false;
  }

  /** Deletes, in `batch`, every record of the given levels (null = all) for periods starting before `before`. */
  deleteBefore(batch: StoreBatch, metric: MetricInfo, before: number, periods: readonly number[] | null): void {
    this.merged.dropMetric(metric.idHex);
    for (const level of this.selectLevels(periods)) {
      batch.deleteRange(CF.histogram, histogramKey(metric.id, level.period, 0, 0), histogramKey(metric.id, level.period, before, 0));
    }
    if (periods !== null && !periods.includes(this.levels[0]!.period)) return;
    for (const [key, p] of this.pending) if (p.idHex === metric.idHex && p.start < before) this.pending.delete(key);
    for (const [key, set] of this.sets) if (key.startsWith(`${metric.idHex}/`) && set.start < before) this.sets.delete(key);
    const d = this.dirty.get(metric.idHex);
    for (const start of d?.starts.keys() ?? []) {
      if (start >= before) continue;
      batch.delete(CF.state, histogramDirtyKey(this.partition, metric.idHex, start));
      d!.starts.delete(start);
    }
  }

  /** Forgets a cumulative series' baseline, in `batch` (full delete: its next submission starts afresh). */
  forgetCumulative(batch: StoreBatch, metric: MetricInfo): void {
    this.merged.dropMetric(metric.idHex);
    const b = this.baselines.get(metric.idHex);
    if (b === undefined) return;
    if (b.storedTs !== null) batch.delete(CF.state, histogramCumulativeKey(this.partition, metric.idHex, b.storedTs));
    this.baselines.delete(metric.idHex);
    this.unsealed.delete(metric.idHex);
  }

  private selectLevels(periods: readonly number[] | null): readonly RollupLevel[] {
    return periods === null ? this.levels : this.levels.filter((l) => periods.includes(l.period));
  }

  /** The configured level periods (seconds). */
  get periods(): number[] {
    return this.levels.map((l) => l.period);
  }

  private async levelRows(metric: MetricInfo, levelMs: number, from: number, to: number): Promise<HistogramRow[]> {
    const baseRows = async (a: number, b: number) => {
      const sealed = new Set<string>();
      const stored = await this.stored(metric.id, this.levels[0]!.period, a, b, sealed, (start, seq) => this.superseded(metric.idHex, start, seq));
      for (const p of this.pending.values()) {
        // A journal replay after a crash rebuilds submissions that were already sealed
        // (their entry was still needed by another buffer): count each submission once.
        if (p.idHex === metric.idHex && p.start >= a && p.start < b && !sealed.has(submissionTag(p.start, p.seq)) && !this.superseded(p.idHex, p.start, p.seq)) mergeInto(stored, p.start, p.hist);
      }
      return stored;
    };
    if (levelMs === this.baseMs) return sortRows(await baseRows(from, to));
    // Periods not aged yet (ending after the cut) are merged from the base level.
    const cut = this.storedCut(false);
    const agedEnd = Math.max(from, Math.min(to, cut === Infinity ? to : cut - (cut % levelMs)));
    const rolled = agedEnd > from ? await this.stored(metric.id, levelMs / SECOND, from - (from % levelMs), agedEnd) : new Map<number, Histogram>();
    // Periods with unmerged submissions are not rolled up yet: build them from the base level.
    for (const p of this.stalePeriods(metric.idHex, levelMs, from, agedEnd)) {
      const fresh = new Map<number, Histogram>();
      for (const h of (await baseRows(p, p + levelMs)).values()) mergeInto(fresh, p, h);
      rolled.delete(p);
      for (const [s, h] of fresh) rolled.set(s, h);
    }
    if (agedEnd < to) for (const [p, h] of await this.mergedPeriods(metric, levelMs, agedEnd, to, baseRows)) rolled.set(p, h);
    return sortRows(rolled);
  }

  /**
   * The coarse periods in [from, to) merged from the base level (`baseRows`): from the cache, and
   * the others from one read of the base level across them; periods with pending or unmerged
   * submissions are merged afresh and not cached. Only the periods between the metric's first
   * and last base records in the range are looked up, and a range of more than
   * MAX_CACHED_PERIODS of them is merged in one read without the cache: the work follows the
   * data, not the width of the range asked.
   */
  private async mergedPeriods(metric: MetricInfo, levelMs: number, from: number, to: number, baseRows: (a: number, b: number) => Promise<Map<number, Histogram>>): Promise<Map<number, Histogram>> {
    const stale = this.stalePeriods(metric.idHex, levelMs, from, to);
    const extent = await this.baseExtent(metric.id, from, to);
    for (const p of stale) extent.push(p, p + levelMs);
    if (extent.length === 0) return new Map();
    const lo = Math.max(from, minOf(extent) - (minOf(extent) % levelMs));
    const hi = Math.min(to, maxOf(extent));
    const levelIndex = this.levels.findIndex((l) => l.period * SECOND === levelMs);
    const cacheable = this.levels.length <= CACHE_LEVELS && (hi - lo) / levelMs <= MAX_CACHED_PERIODS;
    if (!cacheable) return new Map(regroup(sortRows(await baseRows(lo, hi)), levelMs));
    const slot = (p: number) => (p / SECOND) * CACHE_LEVELS + levelIndex;
    const out = new Map<number, Histogram>();
    const misses: number[] = [];
    for (let p = lo; p < hi; p += levelMs) {
      const hit = stale.has(p) ? undefined : this.merged.get(metric.idHex, slot(p));
      if (hit === undefined) misses.push(p);
      else if (hit !== null) out.set(p, hit);
    }
    if (misses.length === 0) return out;
    const merged = new Map(regroup(sortRows(await baseRows(misses[0]!, misses[misses.length - 1]! + levelMs)), levelMs));
    for (const p of misses) {
      const h = merged.get(p) ?? null;
      if (h !== null) out.set(p, h);
      if (!stale.has(p)) this.merged.put(metric.idHex, slot(p), h);
    }
    return out;
  }

  /** The starts of the metric's first and last stored base records in [from, to) (none: empty). */
  private async baseExtent(id: Buffer, from: number, to: number): Promise<number[]> {
    const base = this.levels[0]!.period;
    const bounds = await this.store.keyBounds(CF.histogram, { gte: histogramKey(id, base, Math.max(0, from), 0), lt: histogramKey(id, base, Math.max(0, to), 0) });
    return bounds === null ? [] : [histogramKeyParts(bounds[0]).start, histogramKeyParts(bounds[1]).start + this.baseMs];
  }

  private stalePeriods(idHex: string, levelMs: number, from: number, to: number): Set<number> {
    const out = new Set<number>();
    const note = (s: number) => {
      if (s >= from - levelMs && s < to) out.add(s - (s % levelMs));
    };
    for (const s of this.dirty.get(idHex)?.starts.keys() ?? []) note(s);
    for (const p of this.pending.values()) if (p.idHex === idHex) note(p.start);
    return out;
  }

  /**
   * Every stored record of one level in [from, to), merged per period start; `seen` collects
   * each record's submission tag; records `skip` names (superseded by a pending set) are left out.
   */
  private async stored(id: Buffer, period: number, from: number, to: number, seen?: Set<string>, skip?: (start: number, seq: number) => boolean): Promise<Map<number, Histogram>> {
    const out = new Map<number, Histogram>();
    const scan = this.store.scan(CF.histogram, { gte: histogramKey(id, period, from, 0), lt: histogramKey(id, period, to, 0) });
    for await (const { key, value } of scan) {
      const { start, seq } = histogramKeyParts(key);
      seen?.add(submissionTag(start, seq));
      if (skip?.(start, seq) === true) continue;
      mergeInto(out, start, deserializeHistogram(value));
    }
    return out;
  }

  /**
   * Merges the submissions of each base period in `starts`, then rebuilds every stored coarser
   * period containing one of them (from the next finer level, or the base level when levels
   * are deferred), all in one batch.
   */
  private async rollMetric(id: Buffer, idHex: string, starts: number[], now: number): Promise<void> {
    const batch = this.store.batch();
    const base = this.levels[0]!;
    const lo = minOf(starts);
    const hi = maxOf(starts) + 1;
    const stored = await this.stored(id, base.period, lo, hi);
    let finer = new Map<number, Histogram>();
    for (const start of starts) {
      const merged = stored.get(start) ?? Histogram.empty();
      batch.deleteRange(CF.histogram, histogramKey(id, base.period, start, 0), histogramKey(id, base.period, start + 1, 0));
      this.putRecord(batch, id, base.period, start, merged);
      finer.set(start, merged);
      batch.delete(CF.state, histogramDirtyKey(this.partition, idHex, start));
    }
    const baseMerged = finer;
    const cut = this.storedCut(true);
    let finerLevel = base;
    for (const level of this.levels.slice(1)) {
      const levelMs = level.period * SECOND;
      const periods = new Set([...finer.keys()].map((s) => s - (s % levelMs)));
      const next = new Map<number, Histogram>();
      for (const p of periods) {
        // Not aged yet: reads merge it from the base level.
        if (p + levelMs > cut) continue;
        // Deferred levels are rebuilt from the base level (kept at least until they age), others from the next finer one.
        const [source, fresh] = this.deferred ? [base, baseMerged] : [finerLevel, finer];
        // Rebuilding from a level that retention has already thinned would lose data.
        if (source.retention > 0 && p < now - source.retention * SECOND) continue;
        const parts = await this.stored(id, source.period, p, p + levelMs);
        for (const [s, h] of fresh) if (s >= p && s < p + levelMs) parts.set(s, h);
        const sum = Histogram.empty();
        for (const h of parts.values()) sum.merge(h);
        this.putRecord(batch, id, level.period, p, sum);
        next.set(p, sum);
      }
      finer = next;
      finerLevel = level;
    }
    await batch.write();
  }

  private putRecord(batch: StoreBatch, id: Buffer, period: number, start: number, h: Histogram): void {
    const key = histogramKey(id, period, start, 0);
    if (h.isEmpty) batch.delete(CF.histogram, key);
    else batch.put(CF.histogram, key, serializeHistogram(h));
  }

  private markDirty(id: Buffer, idHex: string, start: number, seq: number): void {
    let d = this.dirty.get(idHex);
    if (d === undefined) this.dirty.set(idHex, (d = { id, starts: new Map() }));
    d.starts.set(start, Math.max(seq, d.starts.get(start) ?? 0));
  }
}

/** Names one sealed or pending submission: a base period and the journal entry it came from. */
const submissionTag = (start: number, seq: number): string => `${start}/${seq}`;

function mergeInto(rows: Map<number, Histogram>, start: number, h: Histogram): void {
  const have = rows.get(start);
  if (have === undefined) rows.set(start, h.clone());
  else have.merge(h);
}

function sortRows(rows: Map<number, Histogram>): HistogramRow[] {
  return [...rows].sort((a, b) => a[0] - b[0]);
}

/** Merges level rows into output periods of `periodMs`. */
function regroup(rows: HistogramRow[], periodMs: number): HistogramRow[] {
  const out = new Map<number, Histogram>();
  for (const [s, h] of rows) mergeInto(out, s - (s % periodMs), h);
  return sortRows(out);
}

/** Period starts of one histogram level of a metric, read from the keys alone. */
export async function* storedHistogramStarts(store: Store, metric: { id: Buffer }, period: number): AsyncGenerator<number> {
  const prefix = Buffer.allocUnsafe(METRIC_ID_BYTES + 4);
  metric.id.copy(prefix, 0, 0, METRIC_ID_BYTES);
  prefix.writeUInt32BE(period, METRIC_ID_BYTES);
  for await (const { key } of store.scan(CF.histogram, { gte: prefix, lt: prefixEnd(prefix), capacity: 4096 })) yield histogramKeyParts(key).start;
}

/**
 * Coarse levels wait for ageing when the base level outlives the wait: it must still hold a
 * coarsest period's data when that period ends past the raw retention's horizon and the next
 * sweep writes it. With raw kept forever (rawRetention 0) they are never written, as numeric
 * rollups are not.
 */
export function deferredLevels(config: FerriteConfig): boolean {
  const levels = config.histogramRollups;
  if (levels.length < 2) return false;
  const keep = levels[0]!.retention;
  if (keep === 0) return true;
  if (config.rawRetention === 0) return false;
  return keep * SECOND >= config.rawRetention * SECOND + levels[levels.length - 1]!.period * SECOND + config.retentionSweepIntervalMs;
}
