// A real RocksDB store in a temporary directory for the storage modules' unit tests.
import { rmSync } from 'node:fs';
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
