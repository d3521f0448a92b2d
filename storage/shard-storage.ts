// Everything a shard keeps on disk, in its own RocksDB store (dataDir/shards/<n>): its slice of
// the metric index, tombstones, latest flags, and per partition its blocks, histograms, rollups
// and activity. A shard (actors/shard/shard.ts) reaches RocksDB only through these.
import type { FerriteConfig } from '../model/config.js';
import { heapRoom } from '../model/heap.js';
import type { MetricRef } from '../model/metric-info.js';
import { ActivityTracker, type IndexedActivity } from './activity.js';
import { BlockStore } from './blocks.js';
import { diskUse, rollupBacklog, type DiskUse, type RollupBacklog } from './figures.js';
import { HistogramStore, MergedHistograms, storedHistogramStarts } from './histograms.js';
import { LatestFlags } from './latest.js';
import { MetricIndex } from './metric-index/metric-index.js';
import { snapshotFile, takeSnapshot, writeSnapshot } from './metric-index/snapshot.js';
import { sweepRetention } from './retention.js';
import { CF } from './keys.js';
import { storedPeriodStarts } from './rollup-chunks.js';
import { ComputedRollups } from './metric-cache.js';
import { RollupStore } from './rollups.js';
import { Store, type StoreBatch } from './rocks.js';
import { Tombstones } from './tombstones.js';

/** One partition's stores. */
export interface PartitionStores {
  blocks: BlockStore;
  histograms: HistogramStore;
  rollups: RollupStore;
  activity: ActivityTracker;
}

/** An atomic write across the shard's stores (passed to their `stage…` methods, then written). */
export type ShardBatch = StoreBatch;

export class ShardStorage {
  private constructor(
    /** The store's directory (the index snapshot lives beside it). */
    private readonly dir: string,
    private readonly store: Store,
    private readonly config: FerriteConfig,
    readonly index: MetricIndex,
    readonly tombstones: Tombstones,
    readonly latest: LatestFlags,
    readonly partitions: ReadonlyMap<number, PartitionStores>,
  ) {}

  /** A point-in-time copy of the shard's store into a new store at `dest` (bytes copied). */
  copySnapshotTo(dest: string): Promise<number> {
    return this.store.copySnapshotTo(dest);
  }

  static async open(dir: string, partitions: readonly number[], config: FerriteConfig): Promise<ShardStorage> {
    const store = await Store.open(dir, { syncWrites: config.syncWrites });
    try {
      // Before anything is written: the snapshot holds only until the store changes.
      const image = await takeSnapshot(store, snapshotFile(dir));
      const tombstones = await Tombstones.load(store);
      const index = image !== null ? MetricIndex.fromImage(store, image) : (await MetricIndex.load(store)).index;
      if (image !== null) await index.notePackedNames();
      await index.packLegacyActivity();
      const stores = new Map<number, PartitionStores>();
      const computed = new ComputedRollups(config.rollupCacheBytes);
      const merged = new MergedHistograms(config.rollupCacheBytes / 4);
      for (const p of partitions) {
        stores.set(p, {
          blocks: await BlockStore.open(store, p, Date.now() + config.maxClockSkewMs),
          histograms: await HistogramStore.open(p, store, config, merged),
          rollups: await RollupStore.open(p, store, config, computed),
          activity: new ActivityTracker(store, indexedActivity(index)),
        });
      }
      return new ShardStorage(dir, store, config, index, tombstones, new LatestFlags(store), stores);
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  batch(): ShardBatch {
    return this.store.batch();
  }

  /**
   * Changes after every written batch that touched what a numeric read answers from: sealed
   * blocks, rollups, or the index (its tombstones hide samples; a full delete removes the metric).
   */
  numericReadGeneration(): string {
    return `${this.store.generation(CF.numeric)}.${this.store.generation(CF.rollup)}.${this.store.generation(CF.index)}`;
  }

  /** Start times of a metric's stored periods: of the finest numeric rollup level, and of the base histogram level. */
  async *storedPeriodStarts(metric: MetricRef): AsyncGenerator<number> {
    const finestRollup = this.config.rollups[0]?.period;
    if (finestRollup !== undefined) yield* storedPeriodStarts(this.store, metric, finestRollup);
    const baseHistogram = this.config.histogramRollups[0]?.period;
    if (baseHistogram !== undefined) yield* storedHistogramStarts(this.store, metric, baseHistogram);
  }

  /** Drops data past its retention (range deletes). */
  sweepRetention(now: number): Promise<void> {
    return sweepRetention(this.store, this.config, now);
  }

  async figures(partitions: readonly number[]): Promise<{ disk: DiskUse; backlog: RollupBacklog }> {
    return { disk: await diskUse(this.store), backlog: await rollupBacklog(this.store, partitions) };
  }

  /**
   * Leaves only SST files behind (no WAL to replay) and closes the store. A clean stop
   * (`flush`) first writes the index snapshot, so the next open need not rebuild the index.
   */
  async close(flush: boolean): Promise<void> {
    try {
      if (flush) {
        // The snapshot is a cache: failing to write it, or skipping it when the heap has no room
        // for it (a worker out of memory would lose the stop's flush), costs the next start a
        // rebuild of the index from its records, nothing more.
        const image = snapshotFits(this.index, this.config.shardHeapMb) ? this.index.image() : null;
        if (image !== null) await writeSnapshot(this.store, snapshotFile(this.dir), image).catch(() => undefined);
        await this.store.flushAll();
      }
    } finally {
      await this.store.close();
    }
  }
}

/**
 * Whether this thread's heap has room for an image of `index`, with half of what is free to spare.
 * `limitMb`: the shard worker's heap limit (`shardHeapMb`; V8's own figure overstates it).
 */
function snapshotFits(index: MetricIndex, limitMb: number): boolean {
  return index.imageHeapBytes() < heapRoom(limitMb) / 2;
}

/** A partition's view of the shard index's activity. */
export function indexedActivity(index: MetricIndex): IndexedActivity {
  // A metric's dense id, once staged, is its own for good (ids are never reused): alive there is known.
  return { knows: (id) => index.has(id), knowsMetric: (m) => (m.indexId !== undefined && m.indexId >= 0 ? index.isAlive(m.indexId) : index.has(m.id)), windows: (id) => index.activityOf(id) };
}
