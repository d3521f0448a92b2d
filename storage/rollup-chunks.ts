// Reading and rewriting rollup chunks (CF.rollup, format v2) of one metric: reads fetch the
// columns they need of every chunk of a range in one multi-get; an edit loads the chunks it
// touches once, changes periods in memory and writes each changed chunk back once, in the
// caller's batch.
import type { RollupAccumulator } from '../model/rollup/accumulator.js';
import { ALL_COLUMNS, CHUNK_PERIODS, chunkSpanMs, chunkStartOf, COLUMNS, encodeChunk, encodeChunkColumns, RollupChunk, type ChunkPeriods } from '../model/rollup/chunk.js';
import type { PeriodColumns } from '../model/rollup/period-columns.js';
import { CF, rollupColumnOf, rollupKey, rollupStartOf } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';
import type { MetricRef } from '../model/metric-info.js';

const SECOND = 1000;

/** Past this many chunks a read first finds where its stored chunks lie (two seeks) instead of asking for every chunk of its range. */
const WIDE_READ_CHUNKS = 64;

/** The first and last chunk starts the level stores in [from, to), or null: two seeks. */
async function storedChunkRange(store: Store, metric: MetricRef, periodS: number, from: number, to: number): Promise<[number, number] | null> {
  const bounds = await store.keyBounds(CF.rollup, { gte: rollupKey(metric.id, periodS, from), lt: rollupKey(metric.id, periodS, to) });
  return bounds === null ? null : [rollupStartOf(bounds[0]), rollupStartOf(bounds[1])];
}

/** Chunk starts of a level covering [from, to). */
export function chunkStartsCovering(periodS: number, from: number, to: number): number[] {
  const out: number[] = [];
  if (to <= from) return out;
  const span = chunkSpanMs(periodS);
  for (let c = chunkStartOf(Math.max(0, from), periodS); c < to; c += span) out.push(c);
  return out;
}

/**
 * Chunk reads issued in the same turn of the event loop (a /fetch of many streams asks every
 * partition at once) share one native multi-get instead of one round trip each.
 */
class ChunkReads {
  private queue: { key: Buffer; settle: (v: Buffer | null) => void; fail: (e: unknown) => void }[] = [];

  constructor(private readonly store: Store) {}

  get(keys: readonly Buffer[]): Promise<(Buffer | null)[]> {
    if (this.queue.length === 0) setImmediate(() => this.flush());
    return Promise.all(keys.map((key) => new Promise<Buffer | null>((settle, fail) => this.queue.push({ key, settle, fail }))));
  }

  private flush(): void {
    const queue = this.queue;
    this.queue = [];
    this.store.getMany(CF.rollup, queue.map((q) => q.key)).then(
      (values) => queue.forEach((q, i) => q.settle(values[i] ?? null)),
      (error: unknown) => queue.forEach((q) => q.fail(error)),
    );
  }
}

const chunkReads = new WeakMap<Store, ChunkReads>();

/**
 * Decoded chunks of recent reads (dashboards ask for the same ranges again every refresh), for
 * as long as no batch has written rollups since they were read: `RollupChunk` keeps the columns
 * it decoded, so a hit skips the multi-get, the inflate and the column decoding. Bounded by
 * entries; the oldest used goes first.
 */
class ChunkCache {
  static readonly MAX_ENTRIES = 2048;
  private readonly entries = new Map<string, RollupChunk | null>();
  private generation = -1;

  constructor(private readonly store: Store) {}

  /** The generation a read must start at for its chunks to be kept. */
  now(): number {
    return this.store.generation(CF.rollup);
  }

  get(key: string): RollupChunk | null | undefined {
    this.expire();
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    this.entries.delete(key); // re-inserted: most recently used last
    this.entries.set(key, hit);
    return hit;
  }

  /** Keeps a chunk read when the store was at `readAt` (not if rollups were written since). */
  set(key: string, chunk: RollupChunk | null, readAt: number): void {
    this.expire();
    if (readAt !== this.generation) return;
    if (this.entries.size >= ChunkCache.MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, chunk);
  }

  private expire(): void {
    const now = this.now();
    if (now === this.generation) return;
    this.entries.clear();
    this.generation = now;
  }
}

const chunkCaches = new WeakMap<Store, ChunkCache>();

function cacheOf(store: Store): ChunkCache {
  let cache = chunkCaches.get(store);
  if (cache === undefined) chunkCaches.set(store, (cache = new ChunkCache(store)));
  return cache;
}

/** `getChunks` through the cache of decoded chunks. */
async function getCachedChunks(store: Store, metric: MetricRef, periodS: number, starts: readonly number[], columns: readonly number[]): Promise<(RollupChunk | null)[]> {
  const cache = cacheOf(store);
  const keyOf = (start: number) => `${metric.idHex}/${periodS}/${start}/${columns.join(',')}`;
  const out = starts.map((s) => cache.get(keyOf(s)));
  const missing = starts.flatMap((_, i) => (out[i] === undefined ? [i] : []));
  if (missing.length === 0) return out as (RollupChunk | null)[];
  const readAt = cache.now();
  const read = await getChunks(store, metric, periodS, missing.map((i) => starts[i]!), columns);
  missing.forEach((i, k) => {
    cache.set(keyOf(starts[i]!), read[k]!, readAt);
    out[i] = read[k]!;
  });
  return out as (RollupChunk | null)[];
}

/** Reads the given columns of the chunks starting at `starts` (one coalesced multi-get); null where a chunk has no record. */
async function getChunks(store: Store, metric: MetricRef, periodS: number, starts: readonly number[], columns: readonly number[]): Promise<(RollupChunk | null)[]> {
  let reads = chunkReads.get(store);
  if (reads === undefined) chunkReads.set(store, (reads = new ChunkReads(store)));
  const values = await reads.get(starts.flatMap((s) => columns.map((c) => rollupKey(metric.id, periodS, s, c))));
  const chunks = starts.map((_, i) => {
    const records: (Buffer | null)[] = new Array(COLUMNS).fill(null);
    columns.forEach((c, k) => (records[c] = values[i * columns.length + k]!));
    return records.some((r) => r !== null) ? new RollupChunk(records) : null;
  });
  // A column stored as a copy of one not asked for: read that one too (rare: counters' columns).
  const more = new Set(chunks.flatMap((c) => c?.copiedColumns() ?? []));
  if (more.size === 0) return chunks;
  const extra = await getChunks(store, metric, periodS, starts, [...more]);
  return chunks.map((c, i) => (c === null ? null : c.with(extra[i]?.recordsOf([...more]) ?? [])));
}

/** The stored chunks of one level covering [from, to), with their starts, holding at least `columns` (through the cache of decoded chunks when `cached`). */
export async function readChunks(store: Store, metric: MetricRef, periodS: number, from: number, to: number, columns: readonly number[] = ALL_COLUMNS, cached = true): Promise<{ start: number; chunk: RollupChunk }[]> {
  const first = chunkStartOf(Math.max(0, from), periodS);
  let starts: number[];
  if ((to - first) / chunkSpanMs(periodS) > WIDE_READ_CHUNKS) {
    // A range of years or centuries (or millennia: its chunks would not fit an array): ask only for the chunks between the first and last stored.
    const stored = await storedChunkRange(store, metric, periodS, first, to);
    starts = stored === null ? [] : chunkStartsCovering(periodS, stored[0], stored[1] + 1);
  } else {
    starts = chunkStartsCovering(periodS, from, to);
  }
  const chunks = cached ? await getCachedChunks(store, metric, periodS, starts, columns) : await getChunks(store, metric, periodS, starts, columns);
  const out: { start: number; chunk: RollupChunk }[] = [];
  chunks.forEach((chunk, i) => {
    if (chunk !== null) out.push({ start: starts[i]!, chunk });
  });
  return out;
}

/**
 * The stored chunks at `starts`, whole (every column), null where none is stored. Column 0 of
 * each is asked for first, and only the chunks that have it are read whole: every chunk is
 * written and deleted whole (so `storedPeriodStarts` lists chunks by their column 0 too), and an
 * ageing pass mostly writes chunks nothing is stored in yet, whose 15 absent keys each cost a
 * lookup (issue 31: 9 µs a key, a twentieth of the main thread's time to age a week).
 */
async function getWholeChunks(store: Store, metric: MetricRef, periodS: number, starts: readonly number[]): Promise<(RollupChunk | null)[]> {
  const probed = await getChunks(store, metric, periodS, starts, FIRST_COLUMN);
  const held = starts.filter((_, k) => probed[k] !== null);
  if (held.length === 0) return probed;
  const whole = await getChunks(store, metric, periodS, held, ALL_COLUMNS);
  let at = 0;
  return probed.map((chunk) => (chunk === null ? null : whole[at++]!));
}

const FIRST_COLUMN: readonly number[] = [0];

/**
 * Stages, in `batch`, each level's periods `added` (periods of that level) added to what its
 * chunks store: each touched chunk read once and written once, as columns, with no object per
 * period (ageing a week: issue 31). A stored period and an added one sum as `addInto(added,
 * stored)` does. Every level's chunks are asked for in the same turn, so one multi-get serves them.
 */
export async function stageAddedPeriods(store: Store, batch: StoreBatch, metric: MetricRef, levels: readonly { periodS: number; added: PeriodColumns }[]): Promise<void> {
  const starts = levels.map(({ periodS, added }) => chunkStartsCovering(periodS, added.first, added.startOf(added.count)));
  const stored = await Promise.all(levels.map(({ periodS }, l) => getWholeChunks(store, metric, periodS, starts[l]!)));
  levels.forEach(({ periodS, added }, l) =>
    starts[l]!.forEach((start, k) => {
      const merged = mergedPeriods(added, start, stored[l]![k] ?? null);
      if (merged.slots.length > 0) encodeChunkColumns(merged.slots, merged.columns).forEach((record, column) => batch.put(CF.rollup, rollupKey(metric.id, periodS, start, column), record));
    }),
  );
}

/**
 * Where a merged chunk's columns are built, reused: they live only until encodeChunkColumns has
 * coded them (synchronously, right after), and a week's ≈ 190 columns of 1440 doubles per metric
 * were most of what ageing allocated outside the heap (each megabyte of it brings a full GC nearer).
 */
const mergedColumns = Array.from({ length: COLUMNS }, () => new Float64Array(CHUNK_PERIODS));
/** Per merged slot, the index of its period in `added` and in the stored chunk (-1: not there). */
const fromAdded = new Int32Array(CHUNK_PERIODS);
const fromStored = new Int32Array(CHUNK_PERIODS);

/**
 * The chunk at `start`: the added periods in it plus the stored ones, as columns by slot. The
 * columns are views (into `added` or reused memory) to be coded before anything else runs.
 */
function mergedPeriods(added: PeriodColumns, start: number, stored: RollupChunk | null): { slots: number[]; columns: Float64Array[] } {
  const base = Math.round((start - added.first) / added.periodMs); // index in `added` of the chunk's slot 0
  const slots: number[] = [];
  const contiguous = mergeSlots(added, base, stored?.slots ?? new Int32Array(0), slots);
  const count = slots.length;
  if (stored === null && contiguous && count > 0) {
    // Only added periods, one run of them: the added columns themselves.
    const from = fromAdded[0]!;
    return { slots, columns: added.columns.map((column) => column.subarray(from, from + count)) };
  }
  return { slots, columns: ALL_COLUMNS.map((c) => mergeColumn(mergedColumns[c]!.subarray(0, count), added.columns[c]!, stored?.columnAt(c))) };
}

// The two loops of a merge are functions of their own with nothing after the loop but a return:
// V8 compiles a long loop while it runs (on-stack replacement), before the code after it has
// ever run, and throws that code away on reaching it (8 deoptimizations per ageing run when the
// loops sat inside mergedPeriods).

/**
 * The chunk's slots holding an added period (`added` from index `base`) or a stored one, into
 * `slots`, with where each comes from in `fromAdded` and `fromStored`. True when they are all
 * added periods, one run of them.
 */
function mergeSlots(added: PeriodColumns, base: number, storedSlots: Int32Array, slots: number[]): boolean {
  let contiguous = true;
  for (let slot = 0, j = 0; slot < CHUNK_PERIODS; slot++) {
    const i = base + slot;
    const fresh = i >= 0 && i < added.count && added.present[i] === 1;
    while (j < storedSlots.length && storedSlots[j]! < slot) j++;
    const held = j < storedSlots.length && storedSlots[j] === slot;
    if (!fresh && !held) continue;
    const k = slots.length;
    fromAdded[k] = fresh ? i : -1;
    fromStored[k] = held ? j : -1;
    if (!fresh || (k > 0 && fromAdded[k - 1] !== i - 1)) contiguous = false;
    slots.push(slot);
  }
  return contiguous;
}

/** One merged column into `out` (one value per merged slot): added first, then stored, the order addInto(added, stored) sums in. */
function mergeColumn(out: Float64Array, from: Float64Array, kept: Float64Array | undefined): Float64Array {
  for (let k = 0; k < out.length; k++) {
    const i = fromAdded[k]!;
    const j = fromStored[k]!;
    out[k] = i < 0 ? kept![j]! : j < 0 ? from[i]! : from[i]! + kept![j]!;
  }
  return out;
}

interface Loaded {
  periodS: number;
  start: number;
  periods: ChunkPeriods;
  changed: boolean;
}

/** Changes to one metric's chunks, applied with `flush`. */
export class ChunkEdit {
  private readonly loaded = new Map<string, Loaded>();

  constructor(
    private readonly store: Store,
    private readonly metric: MetricRef,
  ) {}

  /** Loads (once) the chunks of a level covering each [from, to) range. */
  async load(periodS: number, ranges: Iterable<readonly [number, number]>): Promise<void> {
    const wanted = new Set<number>();
    for (const [from, to] of ranges) for (const s of chunkStartsCovering(periodS, from, to)) wanted.add(s);
    const missing = [...wanted].filter((s) => !this.loaded.has(keyOf(periodS, s)));
    if (missing.length === 0) return;
    const chunks = await getChunks(this.store, this.metric, periodS, missing, ALL_COLUMNS);
    missing.forEach((start, i) => {
      const periods = chunks[i]?.periods() ?? new Map();
      this.loaded.set(keyOf(periodS, start), { periodS, start, periods, changed: false });
    });
  }

  /** Sets the period of a level starting at `ts` (null: no data). Its chunk must be loaded. */
  set(periodS: number, ts: number, acc: RollupAccumulator | null): void {
    const c = this.chunk(periodS, ts);
    const slot = (ts - c.start) / (periodS * SECOND);
    if (acc === null) {
      if (c.periods.delete(slot)) c.changed = true;
      return;
    }
    c.periods.set(slot, acc);
    c.changed = true;
  }

  /** The stored periods of a level starting in [from, to) (their chunks must be loaded). */
  *range(periodS: number, from: number, to: number): Generator<RollupAccumulator> {
    const periodMs = periodS * SECOND;
    for (const start of chunkStartsCovering(periodS, from, to)) {
      const c = this.chunk(periodS, start);
      const lo = Math.max(0, Math.ceil((from - start) / periodMs));
      const hi = Math.min(CHUNK_PERIODS, Math.ceil((to - start) / periodMs));
      // In slot order, so sums come out the same whatever order periods were set in.
      for (let slot = lo; slot < hi; slot++) {
        const acc = c.periods.get(slot);
        if (acc !== undefined) yield acc;
      }
    }
  }

  /** Removes a level's periods that start before `before` from the chunk holding `before` (it must be loaded). */
  clearBefore(periodS: number, before: number): void {
    const c = this.chunk(periodS, before);
    const periodMs = periodS * SECOND;
    for (const slot of [...c.periods.keys()]) {
      if (c.start + slot * periodMs >= before) continue;
      c.periods.delete(slot);
      c.changed = true;
    }
  }

  /** Writes every changed chunk into `batch` (an emptied chunk is deleted). */
  flush(batch: StoreBatch): void {
    for (const c of this.loaded.values()) {
      if (!c.changed) continue;
      if (c.periods.size === 0) batch.deleteRange(CF.rollup, rollupKey(this.metric.id, c.periodS, c.start, 0), rollupKey(this.metric.id, c.periodS, c.start, COLUMNS));
      else encodeChunk(c.periods).forEach((record, column) => batch.put(CF.rollup, rollupKey(this.metric.id, c.periodS, c.start, column), record));
      c.changed = false;
    }
  }

  private chunk(periodS: number, ts: number): Loaded {
    const c = this.loaded.get(keyOf(periodS, chunkStartOf(ts, periodS)));
    if (c === undefined) throw new Error(`BUG: rollup chunk of ${periodS} s at ${ts} used before it was loaded`);
    return c;
  }
}

const keyOf = (periodS: number, start: number): string => `${periodS}/${start}`;

/** True when a level of the metric has a stored period starting before `before`. */
export async function hasPeriodBefore(store: Store, metric: MetricRef, periodS: number, before: number): Promise<boolean> {
  // Chunks are keyed by start: the first one is the oldest; its first slot, the oldest period.
  const range = { gte: rollupKey(metric.id, periodS, 0), lt: rollupKey(metric.id, periodS, before), limit: 1 };
  for await (const { key, value } of store.scan(CF.rollup, range)) {
    const slots = new RollupChunk([value]).slots;
    return slots.length > 0 && rollupStartOf(key) + slots[0]! * periodS * SECOND < before;
  }
  return false;
}

/** Start of every stored period of one level of a metric, read from the chunks' slot lists. */
export async function* storedPeriodStarts(store: Store, metric: MetricRef, periodS: number): AsyncGenerator<number> {
  const range = { gte: rollupKey(metric.id, periodS, 0), lt: rollupKey(metric.id, periodS, Number.MAX_SAFE_INTEGER), capacity: 256 };
  for await (const { key, value } of store.scan(CF.rollup, range)) {
    if (rollupColumnOf(key) !== 0) continue; // every column record lists the same periods
    const start = rollupStartOf(key);
    for (const slot of new RollupChunk([value]).slots) yield start + slot * periodS * SECOND;
  }
}
