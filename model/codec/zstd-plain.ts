// The plain bytes of zstd frames through one reused decompression context. node:zlib's
// zstdDecompressSync builds a Transform stream, a native context and a 16 KiB output buffer for
// every call: a cold 30-day read of 100 streams decompresses a few thousand rollup chunk columns,
// and building those was ≈ 7 % of its time and most of its garbage (issue 31's profile). This
// drives the native handle of one zstd decompression stream as zlib's own synchronous path does
// (`writeSync` with ZSTD_e_end), into one output buffer reused call after call; zstd-frames.ts
// does the same for compression.
//
// Only frames whose header states their content size, without a checksum, go this way (what
// zstdCompressSync writes): the output must be exactly that size with every input byte taken, or
// the context is thrown away (a truncated frame would leave it waiting for the rest) and the
// frame goes to zstdDecompressSync, which decodes it or names what is wrong. Anything else, and
// any Node whose handle is not as expected, takes zstdDecompressSync every time.
import { createZstdDecompress, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { NativeZstd } from './zstd-frames.js';

const MAGIC = 0xfd2fb528;
/** Larger frames are rare (a zstd'd index section): they take zstdDecompressSync, which sizes its own output. */
const MAX_REUSED_BYTES = 1 << 20;

export class ZstdPlain {
  private stream: NativeZstd | null = null;
  private out = new Uint8Array(16 * 1024);
  /** False once this Node's handle proved not as expected: no context is made again. */
  private usable = true;

  constructor() {
    this.open();
  }

  /** Frames decoded on the reused context, for tests. */
  reused = 0;

  /**
   * The plain bytes of one zstd frame, as zstdDecompressSync gives them (and its errors; more than
   * `maxOutputLength` bytes is one). A view of memory the next call reuses: read it before
   * decompressing anything else, and keep nothing that points into it.
   */
  plain(frame: Uint8Array, maxOutputLength?: number): Uint8Array {
    const size = contentSize(frame);
    const sync = () => zstdDecompressSync(frame, maxOutputLength === undefined ? {} : { maxOutputLength });
    if (size === null || size > MAX_REUSED_BYTES || size > (maxOutputLength ?? Infinity)) return sync();
    if (this.stream === null && this.usable) this.open();
    return (this.stream === null ? null : this.native(frame, size)) ?? sync();
  }

  private native(frame: Uint8Array, size: number): Uint8Array | null {
    // One byte of room past the stated size: a frame that says less than it holds is caught.
    if (this.out.length < size + 1) this.out = new Uint8Array(Math.max(size + 1, this.out.length * 2));
    const stream = this.stream!;
    stream.write(frame, 0, frame.length, this.out, 0, size + 1);
    const produced = size + 1 - stream.state[0]!;
    if (stream.failed || produced !== size || stream.state[1] !== 0) {
      this.drop(); // the next frame starts on a fresh context
      return null;
    }
    this.reused++;
    return this.out.subarray(0, size);
  }

  private drop(): void {
    this.stream?.close();
    this.stream = null;
  }

  /** A fresh context, kept only if it decodes a sample as zstdDecompressSync does. */
  private open(): void {
    this.stream = NativeZstd.of(createZstdDecompress());
    const sample = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) % 13);
    const frame = zstdCompressSync(sample);
    const size = contentSize(frame);
    for (let k = 0; k < 2 && this.stream !== null; k++) {
      const got = size === null ? null : this.native(frame, size);
      if (got === null || !Buffer.from(sample).equals(got)) this.drop();
    }
    if (this.stream === null) this.usable = false;
  }
}

/**
 * The content size a frame's header states (RFC 8878 §3.1.1), or null: not one whole zstd frame
 * and nothing after it, the size not stated, a checksum to follow, or a dictionary named. (After
 * a frame the context would go on into whatever follows: only zstdDecompressSync takes that.)
 */
export function contentSize(frame: Uint8Array): number | null {
  if (frame.length < 6) return null;
  const magic = (frame[0]! | (frame[1]! << 8) | (frame[2]! << 16) | (frame[3]! << 24)) >>> 0;
  if (magic !== MAGIC) return null;
  const descriptor = frame[4]!;
  const fcsFlag = descriptor >>> 6;
  const singleSegment = (descriptor >>> 5) & 1;
  const checksum = (descriptor >>> 2) & 1;
  const dictionary = descriptor & 3;
  if (checksum !== 0 || dictionary !== 0 || (fcsFlag === 0 && singleSegment === 0)) return null;
  const at = 5 + (singleSegment === 0 ? 1 : 0); // the window descriptor, when not a single segment
  const width = [1, 2, 4, 8][fcsFlag]!;
  if (frame.length < at + width || blocksEnd(frame, at + width) !== frame.length) return null;
  let size = 0;
  for (let i = width - 1; i >= 0; i--) size = size * 256 + frame[at + i]!;
  return width === 2 ? size + 256 : size;
}

/** Where a frame's blocks end, from the first block header at `at` (§3.1.1.2); -1 when they run past the bytes. */
function blocksEnd(frame: Uint8Array, at: number): number {
  for (;;) {
    if (at + 3 > frame.length) return -1;
    const header = frame[at]! | (frame[at + 1]! << 8) | (frame[at + 2]! << 16);
    const type = (header >>> 1) & 3;
    if (type === 3) return -1; // reserved
    at += 3 + (type === 1 ? 1 : header >>> 3); // RLE: one byte; raw and compressed: the stated size
    if ((header & 1) === 1) return at;
  }
}

/** One per thread (each worker has its own module instance). */
export const zstdPlain = new ZstdPlain();
