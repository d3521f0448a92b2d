// Every column family and key layout ferrite keeps in RocksDB, in one place
// (the habit of VictoriaMetrics' filenames.go and index_db.go prefixes).
// Layouts are documented in docs/format/storage.md.

/** Column families. Names are on disk: never rename one, only add. */
export const CF = {
  /** The ingest write-ahead journal: seq → one request's accepted records. Truncated once sealed. */
  journal: 'journal',
  /** Sealed numeric blocks: metric id | window start | seal seq → numeric block. */
  numeric: 'numeric',
  /** Sealed text blocks, same key layout as numeric. */
  text: 'text',
  /** Submitted histograms as received (base64), same key layout; decoded by the histogram store. */
  histogramRaw: 'histogram_raw',
  /**
   * Numeric rollups: metric id | level period s (u32) | chunk start ms (u64) | column (u8) → one
   * column of a chunk of the level's periods in that chunk's span (model/rollup/chunk.ts, format
   * v2). Format v1 (before `state` `rollup_format`): metric id | level period s | period start →
   * one 101-byte accumulator; migrated at open.
   */
  rollup: 'rollup',
  /**
   * Histograms by rollup level: metric id | level period s (4) | period start ms (8) |
   * journal seq (8) → serialized circllhist. seq > 0 is one request's submissions, not yet
   * merged (replaying the journal rewrites the same key, so replay never double counts);
   * seq 0 is the merged record of the period.
   */
  histogram: 'histogram',
  /**
   * The search index (docs/format/storage.md): postings `p`, data types `t`, activity
   * windows `a`, latest values `l` and latest-tracking flags `L`.
   */
  index: 'index',
  /** Metric name records: metric id → who the metric is (account, uuid, check, canonical name). */
  metrics: 'metrics',
  /** Small node-wide values (identity, counters), keyed by name. */
  state: 'state',
  /**
   * Cluster outbox: peer id | NUL | seq (8, BE) → one journal message for that peer, kept
   * until the peer confirms it applied it (actors/cluster/replication.ts). The sender's durability
   * point for records other nodes own.
   */
  outbox: 'outbox',
} as const;

export type ColumnFamilyName = (typeof CF)[keyof typeof CF];
export const ALL_COLUMN_FAMILIES: readonly ColumnFamilyName[] = Object.values(CF);

/** Keys of the `state` column family. */
export const STATE_KEY = {
  /** This node's uuid, chosen at first start unless configured. */
  nodeId: Buffer.from('node_id'),
  /**
   * Journal entries below this sequence are gone (truncated). Kept so sequences never
   * restart after the journal empties: histogram keys carry them and must not collide.
   */
  journalCut: Buffer.from('journal_cut'),
  /** Format of CF.rollup (u8): absent = v1 records may remain, 2 = every record is a v2 chunk. */
  rollupFormat: Buffer.from('rollup_format'),
  /** This node's outbox incarnation: peers track what they applied per incarnation. */
  outboxIncarnation: Buffer.from('outbox_incarnation'),
  /** The shard layout the data is split in (storage/shard-layout.ts), JSON `{shards, partitions}`; absent before shards. */
  shardLayout: Buffer.from('shard_layout'),
  /** A shard store's: the token of the index snapshot a clean stop wrote beside it (storage/metric-index/snapshot.ts). */
  indexSnapshot: Buffer.from('index_snapshot'),
  /** The rebalance this node is in (actors/cluster/rebalance.ts), JSON; absent when none ever ran. */
  rebalance: Buffer.from('rebalance'),
  /** This node's rebuild from its peers (actors/cluster/rebuild.ts), JSON; absent when none was ever asked for. */
  rebuild: Buffer.from('rebuild'),
  /** This node's join of a cluster in a rebalance (actors/cluster/joining.ts), JSON; absent when none was ever asked for. */
  join: Buffer.from('join'),
} as const;

/** `topology/<hash>`: a topology loaded with `POST /topology/<hash>`, as normalized JSON. */
export function topologyKey(hash: string): Buffer {
  return Buffer.from(`topology/${hash}`);
}

/** The key range of every loaded topology. */
export const TOPOLOGY_RANGE = { gte: Buffer.from('topology/'), lt: Buffer.from('topology0') };

/** `applied/<sender incarnation>`: which of that sender's journal messages this node applied. */
export function appliedKey(incarnation: string): Buffer {
  return Buffer.from(`applied/${incarnation}`);
}

/** `outbox_seq/<peer>`: the last outbox sequence used for a peer. */
export function outboxSeqKey(peer: string): Buffer {
  return Buffer.from(`outbox_seq/${peer}`);
}

export function outboxKey(peer: string, seq: number): Buffer {
  return Buffer.concat([Buffer.from(`${peer}\u0000`), encodeU64(seq)]);
}

/** The outbox key range of one peer. */
export function outboxRange(peer: string): { gte: Buffer; lt: Buffer } {
  return { gte: Buffer.from(`${peer}\u0000`), lt: Buffer.from(`${peer}\u0001`) };
}

export function outboxSeqOf(key: Buffer): number {
  return decodeU64(key, key.length - 8);
}

/**
 * `seal_seq/<partition>`: the highest seal sequence a partition has used. Kept per
 * partition so each one's counter only moves forward, written in the same batch as the
 * blocks it numbers.
 */
export function sealSeqKey(partition: number): Buffer {
  return Buffer.from(`seal_seq/${partition}`);
}

/**
 * `seal_horizon/<partition>`: the newest window start (ms) of any block the partition has sealed,
 * written with the seal sequence. Absent in data dirs of releases before it.
 */
export function sealHorizonKey(partition: number): Buffer {
  return Buffer.from(`seal_horizon/${partition}`);
}

/** An unsigned 64-bit big-endian integer, the encoding of every sequence we store. */
export function encodeU64(n: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  writeU64(b, n, 0);
  return b;
}

const TWO32 = 2 ** 32;

/**
 * Writes n at `offset` as 8 big-endian bytes, the bytes `writeBigUInt64BE(BigInt(n))` writes:
 * a whole number in [0, 2^53) as two 32-bit halves (a BigInt per key was a tenth of a graceful
 * stop's sealing at 300k series), anything else that way (which refuses what it always refused).
 */
export function writeU64(b: Buffer, n: number, offset: number): void {
  if (Number.isSafeInteger(n) && n >= 0) {
    b.writeUInt32BE(Math.floor(n / TWO32), offset);
    b.writeUInt32BE(n >>> 0, offset + 4);
  } else b.writeBigUInt64BE(BigInt(n), offset);
}

/** The number 8 big-endian bytes at `offset` hold (above 2^53 rounded to the nearest double, as `Number(readBigUInt64BE())` rounds). */
export function decodeU64(b: Buffer, offset = 0): number {
  // hi · 2^32 is exact; the one addition rounds as the BigInt's conversion does.
  return b.readUInt32BE(offset) * TWO32 + b.readUInt32BE(offset + 4);
}

export const METRIC_ID_BYTES = 16;

/** journal key: 8-byte big-endian sequence, so keys sort in write order. */
export const journalKey = encodeU64;
export const journalSeqOf = (key: Buffer): number => decodeU64(key);

/**
 * Block key: metric id (16) | window start ms (8, BE) | seal seq (8, BE). Blocks of one
 * metric are contiguous and ordered by time window, then by the order they were sealed
 * (which decides text conflicts: the later seal holds the later write).
 */
export function blockKey(metricId: Buffer, windowStart: number, sealSeq: number): Buffer {
  const key = Buffer.allocUnsafe(METRIC_ID_BYTES + 16);
  metricId.copy(key, 0, 0, METRIC_ID_BYTES);
  writeU64(key, windowStart, METRIC_ID_BYTES);
  writeU64(key, sealSeq, METRIC_ID_BYTES + 8);
  return key;
}

/** The first possible block key of `metricId` at or after `windowStart`. */
export function blockKeyFloor(metricId: Buffer, windowStart: number): Buffer {
  return blockKey(metricId, Math.max(0, windowStart), 0);
}

export const blockWindowOf = (key: Buffer): number => decodeU64(key, METRIC_ID_BYTES);

/** Histogram key; see CF.histogram. */
export function histogramKey(metricId: Buffer, period: number, start: number, seq: number): Buffer {
  const key = Buffer.allocUnsafe(METRIC_ID_BYTES + 20);
  metricId.copy(key, 0, 0, METRIC_ID_BYTES);
  key.writeUInt32BE(period, METRIC_ID_BYTES);
  writeU64(key, Math.max(0, start), METRIC_ID_BYTES + 4);
  writeU64(key, seq, METRIC_ID_BYTES + 12);
  return key;
}

export function histogramKeyParts(key: Buffer): { period: number; start: number; seq: number } {
  return {
    period: key.readUInt32BE(METRIC_ID_BYTES),
    start: decodeU64(key, METRIC_ID_BYTES + 4),
    seq: decodeU64(key, METRIC_ID_BYTES + 12),
  };
}

/**
 * `hdirty/<partition>/<metric id hex>/<start>` in `state`: a base histogram period holding
 * unmerged submissions. Written with the submissions and removed by the rollup that merges
 * them, so a restart resumes rolling up where it left off.
 */
export function histogramDirtyKey(partition: number, idHex: string, start: number): Buffer {
  return Buffer.from(`${histogramDirtyPrefix(partition)}${idHex}/${start}`);
}

export function histogramDirtyPrefix(partition: number): string {
  return `hdirty/${partition}/`;
}

/**
 * `hageing/<partition>` in `state`: JSON `{"cut": ms}`. Coarse histogram periods ending at or
 * before the cut are stored (aged); later ones are merged from the base level when read.
 */
export function histogramAgeingKey(partition: number): Buffer {
  return Buffer.from(`hageing/${partition}`);
}

/** `hcum/<partition>/<metric id hex>/<ts ms>`: a cumulative histogram series' last submission (its running totals). */
export function histogramCumulativeKey(partition: number, idHex: string, ts: number): Buffer {
  return Buffer.from(`${histogramCumulativePrefix(partition)}${idHex}/${ts}`);
}

export function histogramCumulativePrefix(partition: number): string {
  return `hcum/${partition}/`;
}

// Index keys. Strings are UTF-8 and end in 0x00, which legal tag text never contains.
const POSTING = 0x70; // 'p'
const TYPE = 0x74; // 't'
const ACTIVITY = 0x61; // 'a'
const LATEST_FLAG = 0x4c; // 'L'
const CHECK_TAGS = 0x63; // 'c'
const TOMBSTONE = 0x44; // 'D'
const NAME_BLOCK = 0x4e; // 'N'
const ACTIVITY_BLOCK = 0x41; // 'A'
const TOMBSTONE_KINDS = ['numeric', 'text', 'histogram'] as const;

/** `D | metric id | kind (u8)` → a delete tombstone of that kind of the metric's data (actors/shard/tombstones.ts). */
export function tombstoneKey(metricId: Buffer, kind: (typeof TOMBSTONE_KINDS)[number]): Buffer {
  return Buffer.concat([Buffer.from([TOMBSTONE]), metricId.subarray(0, METRIC_ID_BYTES), Buffer.from([TOMBSTONE_KINDS.indexOf(kind)])]);
}

/** Every tombstone key, and the kind a tombstone key names. */
export const TOMBSTONE_KEYS = { gte: Buffer.from([TOMBSTONE]), lt: Buffer.from([TOMBSTONE + 1]) };
export const tombstoneKindOf = (key: Buffer): (typeof TOMBSTONE_KINDS)[number] => TOMBSTONE_KINDS[key[1 + METRIC_ID_BYTES]!]!;

/**
 * `p | account (u32 BE) | category 0 value 0 | metric id`: a v1 posting. Postings now live in
 * memory, derived from the name records (storage/metric-index); loading a v1 data dir drops
 * these keys (V1_POSTINGS).
 */
export function postingKey(account: number, category: string, value: string, metricId: Buffer): Buffer {
  const head = Buffer.allocUnsafe(5);
  head[0] = POSTING;
  head.writeUInt32BE(account, 1);
  return Buffer.concat([head, Buffer.from(`${category}\0${value}\0`, 'utf8'), metricId.subarray(0, METRIC_ID_BYTES)]);
}

/** Every v1 posting key. */
export const V1_POSTINGS = { gte: Buffer.from([POSTING]), lt: Buffer.from([POSTING + 1]) };

/** Every type key (`t`) and every activity key (`a`). */
export const TYPE_KEYS = { gte: Buffer.from([TYPE]), lt: Buffer.from([TYPE + 1]) };
export const ACTIVITY_KEYS = { gte: Buffer.from([ACTIVITY]), lt: Buffer.from([ACTIVITY + 1]) };

/** `t | metric id | kind`: the metric holds data of this kind. */
export function typeKey(metricId: Buffer, kind: string): Buffer {
  return Buffer.concat([Buffer.from([TYPE]), metricId.subarray(0, METRIC_ID_BYTES), Buffer.from(kind, 'utf8')]);
}

/**
 * `a | metric id` → the metric's activity windows: (start s, end s) u64 BE pairs in time order.
 * Written only for a metric the shard's index does not know, and by a shard split; a shard's
 * open packs them into activity blocks (`A`) and deletes them.
 */
export function activityKey(metricId: Buffer): Buffer {
  return Buffer.concat([Buffer.from([ACTIVITY]), metricId.subarray(0, METRIC_ID_BYTES)]);
}

/** The exclusive upper bound of every key starting with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
}

/** `tag | range (u32 BE)`: a block of what belongs to a range of dense ids. */
function rangeKey(tag: number, range: number): Buffer {
  const key = Buffer.allocUnsafe(5);
  key[0] = tag;
  key.writeUInt32BE(range, 1);
  return key;
}

/** The range a name or activity block key names. */
const rangeOfKey = (key: Buffer): number => key.readUInt32BE(1);

/** `N | range (u32 BE)` → the name records of a range of dense ids, packed (storage/metric-index/name-blocks.ts). */
export const nameBlockKey = (range: number): Buffer => rangeKey(NAME_BLOCK, range);
export const NAME_BLOCK_KEYS = { gte: Buffer.from([NAME_BLOCK]), lt: Buffer.from([NAME_BLOCK + 1]) };
export const nameBlockRangeOf = rangeOfKey;

/** `A | range (u32 BE)` → the activity windows of a range of dense ids, packed (storage/metric-index/activity-blocks.ts). */
export const activityBlockKey = (range: number): Buffer => rangeKey(ACTIVITY_BLOCK, range);
export const ACTIVITY_BLOCK_KEYS = { gte: Buffer.from([ACTIVITY_BLOCK]), lt: Buffer.from([ACTIVITY_BLOCK + 1]) };
export const activityBlockRangeOf = rangeOfKey;

/** `L | metric id`: latest values are tracked for this metric (turned on by find latest=2). */
export function latestFlagKey(metricId: Buffer): Buffer {
  return Buffer.concat([Buffer.from([LATEST_FLAG]), metricId.subarray(0, METRIC_ID_BYTES)]);
}

/**
 * `c | scope 0 | check uuid` → the check's tag state (model/check-tags, JSON). The scope is an
 * account id in decimal, or `*` for tags set without an account (they apply in every account).
 * A small, separate family of keys: check tags are few and change rarely.
 */
export function checkTagsKey(scope: string, uuid: string): Buffer {
  return Buffer.concat([checkTagsPrefix(scope), Buffer.from(uuid, 'utf8')]);
}

/** Every check tag key, of every scope. */
export const CHECK_TAGS_RANGE = { gte: Buffer.from([CHECK_TAGS]), lt: Buffer.from([CHECK_TAGS + 1]) };

export function checkTagsPrefix(scope: string): Buffer {
  return Buffer.concat([Buffer.from([CHECK_TAGS]), Buffer.from(`${scope}\0`, 'utf8')]);
}

/**
 * Numeric rollup key: `metric id | period s | chunk start` then, for a v2 column record, the
 * column id (u8); without it, the prefix of a chunk's records (and a v1 record's whole key).
 */
export function rollupKey(metricId: Buffer, period: number, start: number, column?: number): Buffer {
  const key = Buffer.allocUnsafe(METRIC_ID_BYTES + 12 + (column === undefined ? 0 : 1));
  metricId.copy(key, 0, 0, METRIC_ID_BYTES);
  key.writeUInt32BE(period, METRIC_ID_BYTES);
  writeU64(key, Math.max(0, start), METRIC_ID_BYTES + 4);
  if (column !== undefined) key[METRIC_ID_BYTES + 12] = column;
  return key;
}

/** The column id of a v2 rollup key, or null for a v1 key (which has none). */
export const rollupColumnOf = (key: Buffer): number | null => (key.length > METRIC_ID_BYTES + 12 ? key[METRIC_ID_BYTES + 12]! : null);

export const rollupStartOf = (key: Buffer): number => decodeU64(key, METRIC_ID_BYTES + 4);

/** `rdirty/<partition>/<metric id hex>/<window start>` in `state`: a sealed raw window not yet rolled up. */
export function rollupDirtyKey(partition: number, idHex: string, windowStart: number): Buffer {
  return Buffer.from(`${rollupDirtyPrefix(partition)}${idHex}/${windowStart}`);
}

export function rollupDirtyPrefix(partition: number): string {
  return `rdirty/${partition}/`;
}

/**
 * `rageing/<partition>` in `state`: JSON `{"legacyCut": ms}`. Raw numeric data stamped before
 * the cut is already in the stored rollups (a data dir from before ageing, storage/rollups.ts);
 * 0 for a data dir that never rolled raw up while keeping it.
 */
export function rollupAgeingKey(partition: number): Buffer {
  return Buffer.from(`rageing/${partition}`);
}

/** `rfloor/<partition>/<metric id hex>/<ms>` in `state`: an /nnt delete hid the metric's raw data before <ms> from rollup reads. */
export function rollupFloorKey(partition: number, idHex: string, floor: number): Buffer {
  return Buffer.from(`${rollupFloorPrefix(partition)}${idHex}/${floor}`);
}

export function rollupFloorPrefix(partition: number): string {
  return `rfloor/${partition}/`;
}

/** `rcarry/<partition>/<metric id hex>` in `state`: JSON state after the metric's last aged sample (its rates need it). */
export function agedCarryKey(partition: number, idHex: string): Buffer {
  return Buffer.from(`rcarry/${partition}/${idHex}`);
}
