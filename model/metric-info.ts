import type { MetricIdentity } from './ingest-record.js';

/** A metric as this node knows it: its identity plus where its data lives. */
export interface MetricInfo extends MetricIdentity {
  /** 16-byte storage id (model/metric-key.ts). */
  id: Buffer;
  /** `id` as hex, for map keys. */
  idHex: string;
  partition: number;
  /**
   * The metric's dense id in its shard's slice of the metric index once its name and numeric
   * type are staged there, else -1 (kept by actors/shard/shard.ts): checked per sample, so a
   * known metric costs the write path one comparison, not an index lookup.
   */
  indexId: number;
  /**
   * True while this node holds no sealed block of the metric, so a read need not look for
   * one. Known only for metrics first indexed by this process (actors/shard/shard.ts sets it), and
   * cleared by the partition before it seals the first block.
   */
  unsealed: boolean;
  /**
   * The shard's first open buffer of the metric (actors/shard/open-buffers.ts), -1 when none:
   * its buffers are found without a map lookup.
   */
  openHead: number;
  /** Activity slice number of the last sample the shard noted for the metric (it notes each slice once). */
  lastSlice: number;
  /**
   * Start, in whole seconds, of the newest numeric window this process sealed a block of the
   * metric in (0: none): a later window's seal is its first block unless the partition sealed it
   * before this process started (actors/shard/block-merges.ts).
   */
  newestSealedS: number;
}

/** A metric not yet seen by the index; every MetricInfo is built here, so all share one shape. */
export function newMetricInfo(identity: MetricIdentity, id: Buffer, idHex: string, partition: number): MetricInfo {
  const { key, accountId, uuid, checkName, name } = identity;
  return { key, accountId, uuid, checkName, name, id, idHex, partition, indexId: -1, unsealed: false, openHead: -1, lastSlice: -1, newestSealedS: 0 };
}

/** Enough of a metric to find its data: what rollup markers on disk can rebuild. */
export type MetricRef = Pick<MetricInfo, 'id' | 'idHex'> & Partial<Pick<MetricInfo, 'unsealed' | 'openHead' | 'indexId'>>;

/** The fields that name a metric on every node (storage ids and partitions are node-local). */
export interface PortableIdentity {
  accountId: MetricInfo['accountId'];
  uuid: string;
  checkName: string;
  canonical: string;
}

export function portableIdentity(m: MetricInfo): PortableIdentity {
  return { accountId: m.accountId, uuid: m.uuid, checkName: m.checkName, canonical: m.name.canonical };
}

/**
 * A metric as it crosses between threads (to a shard worker): who it is and where it goes,
 * structured-clone safe. The receiving side builds its own MetricInfo from it.
 */
export type WireMetric = Pick<MetricInfo, 'key' | 'accountId' | 'uuid' | 'checkName' | 'name' | 'idHex' | 'partition'>;

/**
 * A metric a read names to its shard: its storage id and partition, all a read needs (the shard
 * knows the metric, or it has no data). A 100-stream fetch cloned each stream's whole name,
 * parsed tags and all, to its shard and back out of the message: ≈ 1 ms of the two threads' time.
 */
export type ReadMetric = Pick<WireMetric, 'idHex' | 'partition'>;

export const readMetric = (m: ReadMetric): ReadMetric => ({ idHex: m.idHex, partition: m.partition });

export function wireMetric(m: WireMetric): WireMetric {
  return { key: m.key, accountId: m.accountId, uuid: m.uuid, checkName: m.checkName, name: m.name, idHex: m.idHex, partition: m.partition };
}

/**
 * A metric's canonical name: `canonical` when the metric keeps it as text (a shard's declared
 * series, actors/ingest/wire.ts), else its parsed name's (asking a declared series for `name`
 * parses it).
 */
export function canonicalText(m: { readonly name: { readonly canonical: string }; readonly canonical?: string }): string {
  return m.canonical ?? m.name.canonical;
}
