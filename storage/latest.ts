// Latest-value tracking flags (`L | metric id` in CF.index): set for a metric once a find with
// `latest=2` asks for its latest values, so later finds with `latest=1` show them.
import { CF, latestFlagKey } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';

const EMPTY = Buffer.alloc(0);

export class LatestFlags {
  constructor(private readonly store: Store) {}

  async tracked(metricId: Buffer): Promise<boolean> {
    return (await this.store.get(CF.index, latestFlagKey(metricId))) !== null;
  }

  async track(metricId: Buffer): Promise<void> {
    await this.store.batch().put(CF.index, latestFlagKey(metricId), EMPTY).write();
  }

  stageForget(batch: StoreBatch, metricId: Buffer): void {
    batch.delete(CF.index, latestFlagKey(metricId));
  }
}
