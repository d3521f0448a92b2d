// The framing a name block and an activity block share (name-blocks.ts, activity-blocks.ts):
// a version byte, then the entries compressed as one zstd frame.
import { zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { ByteReader } from '../../model/codec/bytes.js';

export function packBlock(version: number, entries: Uint8Array): Buffer {
  const packed = zstdCompressSync(entries);
  const out = Buffer.allocUnsafe(packed.length + 1);
  out[0] = version;
  packed.copy(out, 1);
  return out;
}

/** A reader of the block's entries; throws naming `what` when its version is not `version`. */
export function unpackBlock(version: number, value: Uint8Array, what: string): ByteReader {
  if (value[0] !== version) throw new Error(`${what} of version ${value[0]}`);
  return new ByteReader(zstdDecompressSync(value.subarray(1)));
}
