// Rollup format v1 → v2 at open. v1 kept one 101-byte accumulator per period under
// `metric id | period s | period start`; v2 keeps one columnar chunk per chunk span under
// `metric id | period s | chunk start`. A data dir whose `state` lacks `rollup_format`
// may hold v1 records: each chunk's records are gathered, written as one v2 chunk (15
// column records) in the batch that range-deletes them, then `rollup_format` is set. A
// migration cut short resumes: a chunk's v1 records and its v2 records never coexist. Runs
// once per data dir; an empty or migrated one costs one get.
import { decodeAccumulator } from '../model/rollup/accumulator.js';
import { CHUNK_FORMAT_VERSION, chunkSpanMs, chunkStartOf, encodeChunk, type ChunkPeriods } from '../model/rollup/chunk.js';
import { CF, METRIC_ID_BYTES, rollupColumnOf, rollupKey, rollupStartOf, STATE_KEY } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';

const V1_RECORD_BYTES = 101;
const V1_VERSION = 1;
/** Chunks rewritten per batch. */
const CHUNKS_PER_BATCH = 256;

interface Pending {
  id: Buffer;
  periodS: number;
  start: number;
  periods: ChunkPeriods;
}

export async function migrateRollups(store: Store): Promise<void> {
  if ((await store.get(CF.state, STATE_KEY.rollupFormat)) !== null) return;
  let batch = store.batch();
  let chunks = 0;
  let current: Pending | null = null;
  const finish = async (p: Pending | null) => {
    if (p === null) return;
    writeChunk(batch, p);
    if (++chunks % CHUNKS_PER_BATCH === 0) {
      await batch.write();
      batch = store.batch();
    }
  };
  try {
    // The iterator reads a snapshot taken when it opens, so the rewrites behind it are not seen.
    for await (const { key, value } of store.scan(CF.rollup, { capacity: 1024 })) {
      if (rollupColumnOf(key) !== null) continue; // a v2 column record
      if (!isV1(value)) throw new Error(`BUG: rollup record of version ${value[0]} and ${value.length} bytes at ${key.toString('hex')}`);
      const id = key.subarray(0, METRIC_ID_BYTES);
      const periodS = key.readUInt32BE(METRIC_ID_BYTES);
      const ts = rollupStartOf(key);
      const start = chunkStartOf(ts, periodS);
      if (current === null || !current.id.equals(id) || current.periodS !== periodS || current.start !== start) {
        await finish(current);
        current = { id: Buffer.from(id), periodS, start, periods: new Map() };
      }
      current.periods.set((ts - start) / (periodS * 1000), decodeAccumulator(value));
    }
    await finish(current);
    batch.put(CF.state, STATE_KEY.rollupFormat, Uint8Array.of(CHUNK_FORMAT_VERSION));
    await batch.write();
  } catch (error) {
    // A batch left unwritten (a bad record stopped the scan) must release its handle, or the store's close() waits for it.
    batch.discard();
    throw error;
  }
}

const isV1 = (value: Buffer): boolean => value.length === V1_RECORD_BYTES && value[0] === V1_VERSION;

function writeChunk(batch: StoreBatch, p: Pending): void {
  // The range delete drops the chunk's v1 records; the puts after it in the same batch survive it.
  batch.deleteRange(CF.rollup, rollupKey(p.id, p.periodS, p.start), rollupKey(p.id, p.periodS, p.start + chunkSpanMs(p.periodS)));
  encodeChunk(p.periods).forEach((record, column) => batch.put(CF.rollup, rollupKey(p.id, p.periodS, p.start, column), record));
}
