// Name records packed in blocks (issue 31: a short-lived series' name record was a quarter of
// its bytes on disk). A metric's name record is written alone (CF.metrics, keyed by its storage
// id) in the batch that first names it. Once every dense id of a range of NAME_BLOCK_IDS is
// written, the range's records are packed into one zstd-compressed block (CF.index, `N | range`)
// and their own records deleted, in one batch: ≈ 27 bytes a series instead of ≈ 122. Dense ids
// are never reused, so a metric named later never falls in a packed range; a metric of a packed
// range that is deleted leaves its block rewritten without it. Name records are only ever read
// all at once (an index rebuild, a shard split), so no point read needs the block.
//
// Block: 0x01 | zstd( entries ), entry = storage id (16 bytes) | record length (varint) | record
// (storage/metric-index/name-record.ts, v3).
import { ByteWriter } from '../../model/codec/bytes.js';
import { packBlock, unpackBlock } from './packed-block.js';
import { METRIC_ID_BYTES } from '../keys.js';

/** Dense ids per block. */
export const NAME_BLOCK_IDS = 1024;
const VERSION = 0x01;

export interface NameEntry {
  storageId: Uint8Array;
  /** The metric's name record (name-record.ts). */
  record: Uint8Array;
}

export const nameRangeOf = (denseId: number): number => Math.floor(denseId / NAME_BLOCK_IDS);

export function encodeNameBlock(entries: readonly NameEntry[]): Buffer {
  const w = new ByteWriter(entries.length * 128 + 16);
  for (const e of entries) {
    w.bytes(e.storageId.subarray(0, METRIC_ID_BYTES));
    w.varint(e.record.length);
    w.bytes(e.record);
  }
  return packBlock(VERSION, w.finish());
}

/** The block's entries (throws BlockFormatError, or a plain Error naming the block, when damaged). */
export function decodeNameBlock(value: Uint8Array): NameEntry[] {
  const r = unpackBlock(VERSION, value, 'name block');
  const out: NameEntry[] = [];
  while (r.pos < r.buf.length) {
    const storageId = r.bytes(METRIC_ID_BYTES);
    out.push({ storageId, record: r.bytes(r.varint()) });
  }
  return out;
}
