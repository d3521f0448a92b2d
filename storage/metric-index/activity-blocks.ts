// Activity windows packed in blocks (issue 31: one `a` key per metric cost ≈ 40 bytes a series on
// disk, a random storage id and two epoch seconds that RocksDB, uncompressed here, kept as they
// were; issue 30: a put per metric every 5-minute slice). The shard's index holds every metric's
// windows in memory (activity-columns.ts); at each checkpoint the ranges of ACTIVITY_BLOCK_IDS
// dense ids in which a window changed are written whole, one zstd block each (CF.index,
// `A | range`). Metrics scraped together have the same windows, so a block of 1024 of them is
// ≈ 1.2 kB (about a byte a metric, its id offset). Blocks are only read all at once (an index
// rebuild, a shard split).
//
// Block: 0x01 | zstd( entries ), entry = id − range start (varint) | window count (varint) |
// per window start, end (epoch seconds, varints). Ids of dead metrics may linger in a block
// written before their delete: dense ids are never reused, and a load keeps only live ids.
import type { ActivityWindow } from '../../model/activity.js';
import { ByteWriter } from '../../model/codec/bytes.js';
import { packBlock, unpackBlock } from './packed-block.js';

/** Dense ids per block. */
export const ACTIVITY_BLOCK_IDS = 1024;
const VERSION = 0x01;

export const activityRangeOf = (denseId: number): number => Math.floor(denseId / ACTIVITY_BLOCK_IDS);

export interface ActivityEntry {
  id: number;
  windows: readonly ActivityWindow[];
}

/** The block of range `range`; entries in id order, all in the range. */
export function encodeActivityBlock(range: number, entries: readonly ActivityEntry[]): Buffer {
  const w = new ByteWriter(entries.length * 12 + 16);
  const base = range * ACTIVITY_BLOCK_IDS;
  for (const { id, windows } of entries) {
    w.varint(id - base);
    w.varint(windows.length);
    for (const [start, end] of windows) {
      w.varint(start);
      w.varint(end);
    }
  }
  return packBlock(VERSION, w.finish());
}

/** The block's entries (throws naming the problem when damaged). */
export function decodeActivityBlock(range: number, value: Uint8Array): ActivityEntry[] {
  const r = unpackBlock(VERSION, value, `activity block ${range}`);
  const base = range * ACTIVITY_BLOCK_IDS;
  const out: ActivityEntry[] = [];
  while (r.pos < r.buf.length) {
    const id = base + r.varint();
    const windows: ActivityWindow[] = [];
    for (let n = r.varint(); n > 0; n--) windows.push([r.varint(), r.varint()]);
    out.push({ id, windows });
  }
  return out;
}
