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
  /** `id` as lowercase hex. */
  idHex: string;
  partition: number;
}

export function placeMetric(key: MetricKey, partitions: number): Placement {
  // The one-shot hash as hex: a Buffer digest is a new ArrayBuffer per call (twice the cost of
  // the hex string and the pooled Buffer made from it), and every caller wants the hex too.
  const digest = hash('sha256', key, 'hex');
  const idHex = digest.slice(0, 32);
  return { id: Buffer.from(idHex, 'hex'), idHex, partition: parseInt(digest.slice(32, 40), 16) % partitions };
}
