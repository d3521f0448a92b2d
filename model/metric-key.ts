import { hash } from 'node:crypto';
import type { MetricKey } from './types.js';

/** IRONdb's placement key: `lower(uuid) + "-" + canonical name` (DESIGN.md, irondb-reference §8.1). */
export function metricKey(uuid: string, canonical: string): MetricKey {
  return `${uuid.toLowerCase()}-${canonical}` as MetricKey;
}

/** Where a metric lives on this node: its storage id and its partition. */
export interface Placement {
  /** 16 bytes of SHA-256(key): the metric's id in every storage key. 128 bits make a collision negligible. */
  id: Buffer;
  partition: number;
}

export function placeMetric(key: MetricKey, partitions: number): Placement {
  // The one-shot hash: a Hash object per call was most of a new metric's placement cost.
  const digest = hash('sha256', key, 'buffer');
  return { id: digest.subarray(0, 16), partition: digest.readUInt32BE(16) % partitions };
}
