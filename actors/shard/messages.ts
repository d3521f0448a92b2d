// The whole contract between the node (main thread) and a shard worker (actors/shard/main.ts).
// Everything here is structured-clone safe: plain objects, typed arrays, bigints. Metrics
// cross as WireMetric; the shard resolves them to its own MetricInfo.
import type { ActivityWindow } from '../../model/activity.js';
import type { FerriteConfig } from '../../model/config.js';
import type { DataKind } from '../../model/ingest-record.js';
import type { RollupAccumulator } from '../../model/rollup/accumulator.js';
import type { RollupField, RollupType } from '../../model/rollup/types.js';
import type { Series } from '../../model/series.js';
import type { TextReadOptions, TextRow } from '../../model/text-read.js';
import type { Topology } from '../../model/topology/index.js';
import type { Declarations, WirePart } from '../ingest/wire.js';
import type { ReadMetric, WireMetric } from '../../model/metric-info.js';
import type { FindPart, ShardFindRequest, ShardSearch, FoundMetric } from './find.js';
import type { DeleteOutcome, DeleteTarget } from '../../model/delete.js';
import type { RollupEngine } from '../../storage/rollups.js';
import type { ShardFigures } from '../../storage/figures.js';
import type { SeriesReport } from '../../storage/metric-index/metric-index.js';
import type { BufferValue } from './window-buffer.js';

/** What a shard worker is started with (workerData). */
export interface ShardSetup {
  shard: number;
  /** The shard's own RocksDB directory. */
  dir: string;
  /** The partitions this shard owns. */
  partitions: number[];
  config: FerriteConfig;
  identity: string;
  /** The topology, so finds can tell which metrics this node answers for. */
  topology: Topology;
}

/** How an apply's samples name their metrics. */
export type SampleNames =
  /** Sids of a parse worker's lane, declared earlier (`declare`). */
  | { lane: number; epoch: number }
  /** Indexes into this list. */
  | { list: WireMetric[] };

/** Messages without a reply. */
export type ShardNotice =
  /** Metrics a parse lane names for the first time (sent before any apply that uses them). */
  | { type: 'declare'; lane: number; epoch: number; fresh: Declarations }
  /** Journaled samples of the shard's partitions (`parts[i].sids` index into `names`). */
  | { type: 'apply'; seq: number; names: SampleNames; parts: WirePart[] };

/** A numeric read's slot geometry. */
export interface SlotGeometry {
  startMs: number;
  periodMs: number;
  count: number;
}

/** A numeric stream to read: its metric and the transform its slots get. */
/** When `settledEpoch` reads the epoch: see there. */
export type EpochTaken = 'arrival' | 'settled';

export interface NumericStream {
  metric: ReadMetric;
  transform: string;
}

/** A numeric stream a shard folds into partial sums (`group` of a sum, mean or groupby reduce). */
export interface FoldStream extends NumericStream {
  group: number;
}

/** Partial sums and counts per group and slot (model/fetch/reduce.ts CellSums). */
export interface WireSums {
  sum: Float64Array;
  n: Uint32Array;
}

/** A histogram row as it crosses threads: [period start ms, serialized circllhist]. */
export type WireHistogramRow = [number, Uint8Array];

/** What series limits ask a shard: its metrics among `ids` (hex storage ids), its series of accounts and checks. */
export interface SeriesQuestion {
  ids: string[];
  accounts: number[];
  /** Check uuids. */
  checks: string[];
}

export interface SeriesAnswer {
  /** Per id: staged or stored here already. */
  known: boolean[];
  accounts: number[];
  checks: number[];
}

/** A metric a shard holds, as a rebalance walks them (`listMetrics`). */
export interface ListedMetric {
  accountId: number;
  uuid: string;
  checkName: string;
  canonical: string;
  /** Data types stored: numeric, histogram, text. */
  types: string[];
}

/** Rollup periods per level: [level period s, [period start ms, accumulator][]][]. */
export type RollupLevels = [number, [number, RollupAccumulator][]][];

/** Every question a shard answers: method → (arguments) => answer. */
export interface ShardMethods {
  knows(metric: WireMetric): boolean;
  read(metric: WireMetric, kind: DataKind, start: number, end: number): Series<BufferValue>;
  readText(metric: WireMetric, options: TextReadOptions): TextRow[];
  /** `/rollup`'s JSON tuples for periods starting in [start, end). */
  rollupJson(metric: WireMetric, spanMs: number, start: number, end: number, engine: RollupEngine, type: RollupType): string;
  rollupValues(metric: WireMetric, spanMs: number, start: number, end: number, engine: RollupEngine, type: RollupField): Float64Array;
  /** One numeric stream read into slots and transformed (NaN: no value); null when never stored here. */
  numericCells(metric: WireMetric, slots: SlotGeometry, transform: string): Float64Array | null;
  /**
   * `numericCells` of each stream, in one question (a fetch's streams on this shard), in one
   * array: stream k's cells are [k·count, (k + 1)·count), NaN where it has no value or was never
   * stored here (a fetch renders both as null). One buffer crosses the thread, not one a stream.
   */
  numericCellsMany(streams: NumericStream[], slots: SlotGeometry): Float64Array;
  /** Its streams read, transformed and folded into partial sums per group (a sum, mean or groupby reduce pushed down). */
  foldNumeric(streams: FoldStream[], slots: SlotGeometry, groups: number): WireSums;
  /**
   * The epoch a whole-fetch answer over the metrics up to `end` is current at; null while one has
   * an open buffer before `end`. Taken as the question arrives (`arrival`: to stamp an answer about
   * to be read) or once the questions before it are answered (`settled`: to check a kept one).
   */
  settledEpoch(metrics: ReadMetric[], end: number, taken: EpochTaken): string | null;
  histograms(metric: WireMetric, period: number, start: number, end: number): WireHistogramRow[];
  /** Stores rollup records (/write/nnt), indexing the metric first. */
  writeRollups(metric: WireMetric, records: [number, RollupAccumulator][]): void;
  /** Every stored rollup period of each level (a relocation's copy): [level period s, [start ms, accumulator][]][]. */
  rollupLevels(metric: WireMetric): RollupLevels;
  /** Sets the given periods of each level as they are (a relocation's copy), indexing the metric first. */
  setRollupLevels(metric: WireMetric, levels: RollupLevels): void;
  deleteData(metric: WireMetric, target: DeleteTarget, before: number, seq: number, confirm: boolean, periods: number[] | null): DeleteOutcome;
  /** Every data type at every time, rollups, name record, postings, types, activity, latest flag. */
  fullDelete(metric: WireMetric, seq: number, confirm: boolean): DeleteOutcome;
  rebuildActivity(metric: WireMetric): ActivityWindow[];
  seriesAdmission(question: SeriesQuestion): SeriesAnswer;
  seriesReport(top: number): SeriesReport;
  find(request: ShardFindRequest): FindPart;
  search(request: ShardSearch): FoundMetric[];
  /** The node switched topology (a rebalance): finds answer by the new owners from now on. */
  adoptTopology(topology: Topology): void;
  /** Up to `limit` live metrics from dense id `from` on, and where the next page starts (null: done). */
  listMetrics(from: number, limit: number): { metrics: ListedMetric[]; next: number | null };
  /** Seals what is due and rolls up what is quiet; the lowest journal sequence still needed. */
  checkpoint(journalCut: number): number;
  sealAll(): number;
  /** Copies the shard's store as of now under the backup directory `root` (bytes copied). */
  backup(root: string): number;
  sweepRetention(now: number): void;
  figures(): ShardFigures;
  /** Seals everything, flushes and closes the store. */
  stop(): void;
}

export type ShardMethod = keyof ShardMethods;

export interface ShardRequest {
  id: number;
  method: ShardMethod;
  args: unknown[];
}

/** An error as it crosses threads; a FerriteError keeps its code. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
}

/** What a shard sends back: answers, and events of its own. */
export type ShardReply =
  | { type: 'answer'; id: number; ok: true; value: unknown }
  | { type: 'answer'; id: number; ok: false; error: WireError }
  /** Samples handed to partitions (load shedding counts what waits). */
  | { type: 'applied'; records: number }
  /** Every second: the worker's V8 heap in use as a share of its limit (memory pressure, actors/node/admission.ts). */
  | { type: 'heap'; share: number }
  /** A partition failed to store data: the node stops acknowledging writes. */
  | { type: 'fault'; partition: number; error: WireError }
  | { type: 'ready' }
  | { type: 'failed'; error: WireError };
