// One partition's histograms: submissions buffered per (metric, base period, journal seq),
// sealed as one key each, then merged and rolled up to every coarser level once the period
// is closed and the journal can no longer replay them (CF.histogram in storage/keys.ts).
// Only the partition actor calls this, one message at a time.
import type { FerriteConfig, RollupLevel } from '../model/config.js';
import { ferr } from '../model/errors.js';
import { cumulativeDelta, deserializeHistogram, Histogram, histogramFromBase64, serializeHistogram } from '../model/histogram/index.js';
import { CF, decodeU64, encodeU64, histogramCumulativeKey, histogramCumulativePrefix, histogramDirtyKey, histogramDirtyPrefix, histogramKey, histogramKeyParts, METRIC_ID_BYTES, prefixEnd } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';
import { loadMarkers } from './markers.js';
import type { MetricInfo } from '../model/metric-info.js';
import { maxOf, minOf } from '../model/extremes.js';

/** Sealing is forced once this many submissions wait in memory. */
const MAX_PENDING = 20_000;
const SECOND = 1000;
/** Most time one checkpoint spends rolling up before yielding the actor to reads and writes. */
const ROLLUP_BUDGET_MS = 50;

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

  private constructor(
    private readonly partition: number,
    private readonly store: Store,
    config: FerriteConfig,
    private readonly quietMs: number,
  ) {
    this.levels = config.histogramRollups;
  }

  /** Loads the dirty markers a previous run left, so their rollups resume. */
  static async open(partition: number, store: Store, config: FerriteConfig): Promise<HistogramStore> {
    const hs = new HistogramStore(partition, store, config, config.histogramRollupQuietMs);
    for (const m of await loadMarkers(store, histogramDirtyPrefix(partition))) {
      hs.markDirty(Buffer.from(m.idHex, 'hex'), m.idHex, m.start, decodeU64(m.value));
    }
    for (const m of await loadMarkers(store, histogramCumulativePrefix(partition))) {
      hs.baselines.set(m.idHex, { id: Buffer.from(m.idHex, 'hex'), ts: m.start, hist: deserializeHistogram(m.value), storedTs: m.start });
    }
    return hs;
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
    for (const p of this.pending.values()) this.markDirty(p.id, p.idHex, p.start, p.seq);
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
    const rolled = await this.stored(metric.id, levelMs / SECOND, from - (from % levelMs), to);
    // Periods with unmerged submissions are not rolled up yet: build them from the base level.
    for (const p of this.stalePeriods(metric.idHex, levelMs, from, to)) {
      const fresh = new Map<number, Histogram>();
      for (const h of (await baseRows(p, p + levelMs)).values()) mergeInto(fresh, p, h);
      rolled.delete(p);
      for (const [s, h] of fresh) rolled.set(s, h);
    }
    return sortRows(rolled);
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
   * Merges the submissions of each base period in `starts`, then rebuilds every coarser
   * period containing one of them from the next finer level, all in one batch.
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
    let finerLevel = base;
    for (const level of this.levels.slice(1)) {
      const levelMs = level.period * SECOND;
      const periods = new Set([...finer.keys()].map((s) => s - (s % levelMs)));
      const next = new Map<number, Histogram>();
      for (const p of periods) {
        // Rebuilding from a finer level that retention has already thinned would lose data.
        if (finerLevel.retention > 0 && p < now - finerLevel.retention * SECOND) continue;
        const parts = await this.stored(id, finerLevel.period, p, p + levelMs);
        for (const [s, h] of finer) if (s >= p && s < p + levelMs) parts.set(s, h);
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
