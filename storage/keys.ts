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
  /** Metric name records: metric id → who the metric is (account, uuid, check, canonical name). */
  metrics: 'metrics',
  /** Small node-wide values (identity, counters), keyed by name. */
  state: 'state',
} as const;

export type ColumnFamilyName = (typeof CF)[keyof typeof CF];
export const ALL_COLUMN_FAMILIES: readonly ColumnFamilyName[] = Object.values(CF);

/** Keys of the `state` column family. */
export const STATE_KEY = {
  /** This node's uuid, chosen at first start unless configured. */
  nodeId: Buffer.from('node_id'),
} as const;

/**
 * `seal_seq/<partition>`: the highest seal sequence a partition has used. Kept per
 * partition so each one's counter only moves forward, written in the same batch as the
 * blocks it numbers.
 */
export function sealSeqKey(partition: number): Buffer {
  return Buffer.from(`seal_seq/${partition}`);
}

/** An unsigned 64-bit big-endian integer, the encoding of every sequence we store. */
export function encodeU64(n: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

export function decodeU64(b: Buffer, offset = 0): number {
  return Number(b.readBigUInt64BE(offset));
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
  key.writeBigUInt64BE(BigInt(windowStart), METRIC_ID_BYTES);
  key.writeBigUInt64BE(BigInt(sealSeq), METRIC_ID_BYTES + 8);
  return key;
}

/** The first possible block key of `metricId` at or after `windowStart`. */
export function blockKeyFloor(metricId: Buffer, windowStart: number): Buffer {
  return blockKey(metricId, Math.max(0, windowStart), 0);
}

export const blockWindowOf = (key: Buffer): number => decodeU64(key, METRIC_ID_BYTES);
