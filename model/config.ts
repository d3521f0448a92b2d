import { availableParallelism } from 'node:os';
// ferrite's options: one typed interface, defaults from one function, validated once
// (the habit of nats.js core/src/options.ts). A bad option names the property.
import { CONFLICT_RESOLVERS, type ConflictResolverName } from './conflict.js';

export interface FerriteConfig {
  /** Address the HTTP edge listens on. */
  host: string;
  port: number;
  /** RocksDB directory. */
  dataDir: string;
  /** This node's uuid; chosen and remembered at first start when unset. */
  nodeId: string | null;
  /** Topology file (JSON or IRONdb XML); null = a standalone node, a topology of one. */
  topology: string | null;
  /** NATS server URL; required when the topology has more than one node. */
  nats: string | null;
  /**
   * The longest this node waits for another party in the cluster to answer one request:
   * JetStream's acknowledgement of a write's journal message (else 503 FER_ERR_NOT_REPLICATED),
   * an owner's answer to a proxied read or remote fetch stream (else the next owner), a peer's
   * part of a find, and the NATS connection at start.
   */
  peerTimeoutMs: number;
  /** Metric partitions, each one actor (DESIGN.md). Fixed for the life of a data dir. */
  partitions: number;
  conflictResolver: ConflictResolverName;
  /** Samples stamped further ahead of the node clock than this are rejected (IRONdb max_clock_skew: 1 week). */
  maxClockSkewMs: number;
  /** Text values longer than this are truncated at ingest (IRONdb text_size_limit: 512). */
  textSizeLimit: number;
  /** Samples of one metric are sealed in blocks that each cover one window of this span. */
  blockSpanMs: number;
  /** A block is sealed early when its buffer holds this many samples. */
  maxBlockSamples: number;
  /** A buffer whose window has ended is sealed once it has been quiet this long. */
  sealQuietMs: number;
  /** Any buffer older than this is sealed, which bounds how much journal replays after a crash. */
  maxBufferAgeMs: number;
  /** How often partitions seal what is due and the journal is truncated. */
  checkpointIntervalMs: number;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  /** Worker threads that parse write bodies (0: parse on the main thread). */
  ingestWorkers: number;
  /** Tests only: the node's gossip clock can be moved forward with `POST /admin/test-clock` (never in production). */
  testClock: boolean;
  /**
   * Shard worker threads; each owns the partitions p with p % shards = its number, in its own
   * RocksDB directory (dataDir/shards/<n>). Changing it re-splits the data at the next start.
   */
  shards: number;
  /** Writes are refused (503, Retry-After) while this many bytes of write bodies are in flight. */
  maxWriteBytesInFlight: number;
  /**
   * While this many records handed to shards wait to be applied, a new write waits (before its
   * body is read) up to `writeQueueMs` for them to drop below it, then is refused (503, Retry-After).
   */
  maxPendingRecords: number;
  /** How long a write waits for room under `maxPendingRecords` before it is refused; 0 = refused at once. */
  writeQueueMs: number;
  /**
   * Writes are refused (503, Retry-After) while a shard worker's or the main thread's V8 heap is
   * above this share of its limit, or the process's resident memory above this share of
   * `memoryLimitMb`: a node holding more series than its memory allows sheds writes
   * instead of ending out of memory (issue 30). 0 = off.
   */
  memoryPressureShare: number;
  /**
   * The memory the node's process may use, in MiB, against which its resident set is judged for
   * memory pressure (0 = the container's cgroup limit, else the machine's memory).
   */
  memoryLimitMb: number;
  /** A shard worker's V8 heap limit in MiB (0 = V8's default for the machine, ≈ 4 GiB at 16 GiB and more). */
  shardHeapMb: number;
  /**
   * Writes are refused (503) while the p99 of recently acknowledged writes is above this many ms
   * and other writes are in flight: the acknowledged p99 stays near it under any load. 0 = off.
   */
  writeLatencyBudgetMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Numeric rollup levels, finest first; each period divides the next; retention 0 = forever. */
  rollups: RollupLevel[];
  /** Raw numeric samples older than this (seconds; 0 = forever) are deleted; rollups keep the history. */
  rawRetention: number;
  /** How long a sealed raw window must be quiet before it is rolled up. */
  rollupQuietMs: number;
  /**
   * Heap bytes each shard may keep of rollup periods for reads (computed from raw data not yet
   * aged, and decoded stored chunks); 0 = none: every read computes and decodes anew.
   */
  rollupCacheBytes: number;
  /**
   * Bytes the node keeps of whole `/fetch` answers (a dashboard asking the same again gets the
   * same bytes while none of its streams changed); 0 = none.
   */
  fetchCacheBytes: number;
  /**
   * Histogram rollup levels, finest first; each period divides the next. The finest is the
   * period submitted histograms are filed under. retention 0 keeps a level forever.
   */
  histogramRollups: RollupLevel[];
  /** How long a histogram period must be closed before its submissions are merged and rolled up. */
  histogramRollupQuietMs: number;
  /** Track latest values for every metric, not only those a find with latest=2 turned on. */
  implicitLatest: boolean;
  /**
   * Acknowledge a write only once RocksDB's WAL holding it is fsynced (group commit: writes
   * waiting at the same time share one fsync), in the node's store and every shard's. Off: a
   * machine crash (not a process crash) can lose the last moments of acknowledged writes.
   */
  syncWrites: boolean;
  /**
   * Start by fetching from the peers everything this node owns, serving only once done
   * (actors/cluster/rebuild.ts); for a node whose data directory was lost. A data directory
   * that finished a rebuild is not rebuilt again.
   */
  rebuild: boolean;
  /**
   * This node joins a cluster in a rebalance (started under the new topology): until every node of
   * its topology runs under it, client requests are forwarded to one that does not yet
   * (actors/cluster/joining.ts). Once done, not again.
   */
  join: boolean;
  /** How often data past its retention is dropped. */
  retentionSweepIntervalMs: number;
  /** Directory of `.lua` extensions served under /extension/lua (null = none). */
  extensionsDir: string | null;
  /** Wall-clock limit of one extension call. */
  luaTimeoutMs: number;
  /** Memory limit of one extension call's Lua VM. */
  luaMemoryBytes: number;
  /**
   * Account for requests that name none: the Prometheus query API (`/api/v1/*`), OpenTSDB's
   * `/api/put` and the carbon listener, when no `x-svc-account-id` header says otherwise.
   */
  defaultAccount: number | null;
  /** Check uuid that `/api/put` and the carbon listener file samples under. */
  defaultCheckUuid: string | null;
  /** TCP port of the carbon plaintext listener (0 = any free port); null = no listener. */
  carbonPort: number | null;
  /**
   * Series one account may hold on this node (0 = no limit). A sample that would create a
   * series past it is rejected per line; samples of existing series keep flowing.
   */
  maxSeriesPerAccount: number;
  /** Series one check (uuid) may hold on this node (0 = no limit); as maxSeriesPerAccount. */
  maxSeriesPerCheck: number;
}

/** One rollup level: a period and how long its records are kept, both in seconds. */
export interface RollupLevel {
  period: number;
  retention: number;
}

const DAY = 86400;

export function defaultConfig(): FerriteConfig {
  return {
    host: '127.0.0.1',
    port: 8112,
    dataDir: './data',
    nodeId: null,
    topology: null,
    nats: null,
    peerTimeoutMs: 5000,
    partitions: 16,
    conflictResolver: 'abs_biggest',
    maxClockSkewMs: 7 * 24 * 3600 * 1000,
    textSizeLimit: 512,
    blockSpanMs: 3600 * 1000,
    maxBlockSamples: 4096,
    sealQuietMs: 60 * 1000,
    maxBufferAgeMs: 2 * 3600 * 1000,
    checkpointIntervalMs: 1000,
    bodyLimitBytes: 256 * 1024 * 1024,
    ingestWorkers: Math.max(0, availableParallelism() - 1),
    shards: Math.max(1, availableParallelism() - 1),
    testClock: false,
    maxWriteBytesInFlight: 64 * 1024 * 1024,
    maxPendingRecords: 250_000,
    writeQueueMs: 10_000,
    memoryPressureShare: 0.85,
    memoryLimitMb: 0,
    shardHeapMb: 0,
    writeLatencyBudgetMs: 1000,
    logLevel: 'info',
    rollups: [
      { period: 60, retention: 52 * 7 * DAY },
      { period: 300, retention: 104 * 7 * DAY },
      { period: 1800, retention: 104 * 7 * DAY },
      { period: 10800, retention: 520 * 7 * DAY },
      { period: 86400, retention: 520 * 7 * DAY },
    ],
    rawRetention: 4 * 7 * DAY,
    rollupQuietMs: 60 * 1000,
    rollupCacheBytes: 64 * 1024 * 1024,
    fetchCacheBytes: 32 * 1024 * 1024,
    histogramRollups: [60, 300, 1800, 10800, 86400].map((period) => ({ period, retention: 0 })),
    histogramRollupQuietMs: 60 * 1000,
    retentionSweepIntervalMs: 3600 * 1000,
    implicitLatest: false,
    syncWrites: false,
    rebuild: false,
    join: false,
    extensionsDir: null,
    luaTimeoutMs: 5000,
    luaMemoryBytes: 64 * 1024 * 1024,
    defaultAccount: null,
    defaultCheckUuid: null,
    carbonPort: null,
    maxSeriesPerAccount: 0,
    maxSeriesPerCheck: 0,
  };
}

export class ConfigError extends Error {
  constructor(
    readonly property: string,
    message: string,
  ) {
    super(`config ${property}: ${message}`);
    this.name = 'ConfigError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Merges `overrides` over the defaults and validates every property. */
export function resolveConfig(overrides: Partial<Record<keyof FerriteConfig, unknown>>): FerriteConfig {
  const known = new Set(Object.keys(defaultConfig()));
  for (const key of Object.keys(overrides)) {
    if (!known.has(key)) throw new ConfigError(key, 'unknown option');
  }
  const merged = { ...defaultConfig() } as Record<string, unknown>;
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) merged[key] = value;
  const c = merged as unknown as FerriteConfig;
  requireString(c, 'host');
  requireInt(c, 'port', 0, 65535);
  requireString(c, 'dataDir');
  if (c.nodeId !== null && (typeof c.nodeId !== 'string' || !UUID.test(c.nodeId))) {
    throw new ConfigError('nodeId', 'must be a lower-case uuid');
  }
  if (c.topology !== null && (typeof c.topology !== 'string' || c.topology.length === 0)) throw new ConfigError('topology', 'must be a file path');
  if (c.nats !== null && (typeof c.nats !== 'string' || c.nats.length === 0)) throw new ConfigError('nats', 'must be a NATS URL');
  requireInt(c, 'peerTimeoutMs', 100, 600_000);
  if (c.extensionsDir !== null && (typeof c.extensionsDir !== 'string' || c.extensionsDir.length === 0)) throw new ConfigError('extensionsDir', 'must be a directory path');
  requireInt(c, 'luaTimeoutMs', 1, 3600 * 1000);
  requireInt(c, 'luaMemoryBytes', 1024 * 1024, 2 ** 31 - 1);
  requireInt(c, 'partitions', 1, 4096);
  if (!(CONFLICT_RESOLVERS as readonly string[]).includes(c.conflictResolver)) {
    throw new ConfigError('conflictResolver', `must be one of ${CONFLICT_RESOLVERS.join(', ')}`);
  }
  requireInt(c, 'maxClockSkewMs', 0, Number.MAX_SAFE_INTEGER);
  requireInt(c, 'textSizeLimit', 1, 1 << 30);
  requireInt(c, 'blockSpanMs', 1000, 366 * 24 * 3600 * 1000);
  requireInt(c, 'maxBlockSamples', 1, 1 << 20);
  requireInt(c, 'sealQuietMs', 0, Number.MAX_SAFE_INTEGER);
  requireInt(c, 'maxBufferAgeMs', 0, Number.MAX_SAFE_INTEGER);
  requireInt(c, 'checkpointIntervalMs', 10, 3600 * 1000);
  requireInt(c, 'bodyLimitBytes', 1024, 2 ** 31 - 1);
  requireInt(c, 'maxWriteBytesInFlight', 1024, 2 ** 40);
  requireInt(c, 'ingestWorkers', 0, 64);
  requireInt(c, 'shards', 1, 64);
  if (typeof c.testClock !== 'boolean') throw new ConfigError('testClock', 'must be true or false');
  if (c.shards > c.partitions) throw new ConfigError('shards', `must be at most partitions (${c.partitions}): each shard owns whole partitions`);
  requireInt(c, 'maxPendingRecords', 1, 2 ** 40);
  requireInt(c, 'writeQueueMs', 0, 3600 * 1000);
  if (typeof c.memoryPressureShare !== 'number' || !(c.memoryPressureShare >= 0 && c.memoryPressureShare < 1)) throw new ConfigError('memoryPressureShare', 'must be a number in [0, 1) (0 = off)');
  requireInt(c, 'memoryLimitMb', 0, 1 << 30);
  requireInt(c, 'shardHeapMb', 0, 1 << 20);
  requireInt(c, 'writeLatencyBudgetMs', 0, 3600 * 1000);
  requireRollupLevels(c, 'histogramRollups');
  requireRollupLevels(c, 'rollups');
  requireInt(c, 'rawRetention', 0, Number.MAX_SAFE_INTEGER);
  requireInt(c, 'rollupQuietMs', 0, Number.MAX_SAFE_INTEGER);
  requireInt(c, 'rollupCacheBytes', 0, Number.MAX_SAFE_INTEGER);
  requireInt(c, 'fetchCacheBytes', 0, Number.MAX_SAFE_INTEGER);
  if (typeof c.implicitLatest !== 'boolean') throw new ConfigError('implicitLatest', 'must be true or false');
  if (typeof c.syncWrites !== 'boolean') throw new ConfigError('syncWrites', 'must be true or false');
  if (typeof c.rebuild !== 'boolean') throw new ConfigError('rebuild', 'must be true or false');
  if (typeof c.join !== 'boolean') throw new ConfigError('join', 'must be true or false');
  requireInt(c, 'histogramRollupQuietMs', 0, Number.MAX_SAFE_INTEGER);
  requireInt(c, 'retentionSweepIntervalMs', 10, 7 * DAY * 1000);
  requireEcosystemDefaults(c);
  requireInt(c, 'maxSeriesPerAccount', 0, 2 ** 32 - 1);
  requireInt(c, 'maxSeriesPerCheck', 0, 2 ** 32 - 1);
  if (!LOG_LEVELS.includes(c.logLevel)) throw new ConfigError('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
  return c;
}

/** The account, check and carbon port the ecosystem's protocols use (numbers may arrive as strings from the environment). */
function requireEcosystemDefaults(c: FerriteConfig): void {
  for (const key of ['defaultAccount', 'carbonPort'] as const) {
    const v = c[key] as unknown;
    if (typeof v === 'string' && /^\d+$/.test(v)) c[key] = Number(v);
  }
  if (c.defaultAccount !== null) requireInt(c, 'defaultAccount', 0, 2 ** 31 - 1);
  if (c.carbonPort !== null) requireInt(c, 'carbonPort', 0, 65535);
  if (c.defaultCheckUuid !== null) {
    if (typeof c.defaultCheckUuid !== 'string' || !UUID.test(c.defaultCheckUuid.toLowerCase())) throw new ConfigError('defaultCheckUuid', 'must be a uuid');
    c.defaultCheckUuid = c.defaultCheckUuid.toLowerCase();
  }
  if (c.carbonPort !== null && (c.defaultAccount === null || c.defaultCheckUuid === null)) {
    throw new ConfigError('carbonPort', 'the carbon listener files samples under defaultAccount and defaultCheckUuid; set both');
  }
}

function requireString(c: FerriteConfig, key: keyof FerriteConfig): void {
  if (typeof c[key] !== 'string' || (c[key] as string).length === 0) throw new ConfigError(key, 'must be a non-empty string');
}

function requireInt(c: FerriteConfig, key: keyof FerriteConfig, min: number, max: number): void {
  const v = c[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new ConfigError(key, `must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
}

function requireRollupLevels(c: FerriteConfig, key: 'histogramRollups' | 'rollups'): void {
  const levels = c[key] as unknown;
  if (!Array.isArray(levels) || levels.length === 0) throw new ConfigError(key, 'must be a non-empty array of {period, retention}');
  let previous = 0;
  for (const [i, level] of levels.entries()) {
    const { period, retention } = (level ?? {}) as Partial<RollupLevel>;
    const at = `${key}[${i}]`;
    if (!Number.isInteger(period) || period! <= 0 || period! > 366 * DAY) throw new ConfigError(at, `period must be a positive number of seconds, got ${JSON.stringify(period)}`);
    if (!Number.isInteger(retention) || retention! < 0) throw new ConfigError(at, `retention must be seconds >= 0 (0 = forever), got ${JSON.stringify(retention)}`);
    if (previous > 0 && (period! <= previous || period! % previous !== 0)) {
      throw new ConfigError(at, `period ${period} must be a multiple of the previous level's ${previous}`);
    }
    previous = period!;
  }
}
