// A real RocksDB store in a temporary directory for the storage modules' unit tests.
import { rmSync } from 'node:fs';
import { emptyAccumulator, type RollupAccumulator } from '../../model/rollup/accumulator.js';
import { PARTS, QUANTITIES } from '../../model/rollup/chunk.js';
import { newMetricInfo, type MetricInfo } from '../../model/metric-info.js';
import { canonicalizeMetricName } from '../../model/metric-name.js';
import type { AccountId, MetricKey } from '../../model/types.js';
import { readChunks } from '../../storage/rollup-chunks.js';
import { Store } from '../../storage/rocks.js';
import { tempDir } from '../helpers/node.js';

export interface OpenStore {
  store: Store;
  /** Closes the store and opens the same directory again (what a restart sees). */
  reopen(): Promise<Store>;
}

export async function withStore(run: (s: OpenStore) => Promise<void>): Promise<void> {
  const dir = tempDir('ferrite-storage-');
  const open: OpenStore = {
    store: await Store.open(dir),
    async reopen() {
      await open.store.close();
      open.store = await Store.open(dir);
      return open.store;
    },
  };
  try {
    await run(open);
  } finally {
    await open.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A 16-byte metric id from a small number. */
export function metricId(n: number): Buffer {
  const id = Buffer.alloc(16);
  id.writeUInt32BE(n, 12);
  return id;
}

/** Every stored rollup period of one level in [from, to) as [start ms, accumulator], read through storage/rollup-chunks. */
export async function storedPeriods(store: Store, metric: { id: Buffer; idHex: string }, periodS: number, from: number, to: number): Promise<[number, RollupAccumulator][]> {
  const out: [number, RollupAccumulator][] = [];
  for (const { start, chunk } of await readChunks(store, metric, periodS, from, to)) {
    chunk.slots.forEach((slot, i) => {
      const acc = emptyAccumulator();
      for (const q of QUANTITIES) for (const part of PARTS) acc[q][part] = chunk.column(q, part)[i]!;
      const at = start + slot * periodS * 1000;
      if (at >= from && at < to) out.push([at, acc]);
    });
  }
  return out;
}

/** A MetricInfo for metric id `n` (what partitions hand the stores). */
export function metricInfo(n: number, partition = 0): MetricInfo {
  const name = canonicalizeMetricName(`m${n}`);
  if (!name.ok) throw new Error(name.reason);
  const id = metricId(n);
  return newMetricInfo({ key: `u-m${n}` as MetricKey, accountId: 1 as AccountId, uuid: 'u', checkName: 'c', name: name.value }, id, id.toString('hex'), partition);
}
