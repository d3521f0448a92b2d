// zstd frames from one reused compression context. node:zlib's zstdCompressSync builds a
// Transform stream, a native context and a 16 KiB output buffer for every call, and frees them
// after: ageing a week of 50 metrics makes ≈ 9 700 such calls (one per rollup chunk column), and
// the setup was a third of their time, the 16 KiB buffers most of the garbage of the pass (issue
// 31's profile). node:zlib has no synchronous API that keeps a context, so this drives the
// native handle of one zstd stream the way zlib's own synchronous path does (`processChunkSync`:
// `writeSync` with ZSTD_e_end and 16 KiB of output room at a time). After a frame ends, zstd
// starts the next one with the same parameters, and its output does not depend on the context
// having been used before: the frames are byte for byte those of zstdCompressSync (checked on a
// sample when the context is made, and on random inputs in test/codec/zstd-frames.test.ts).
// Where the handle is not as expected (another Node), every call falls back to zstdCompressSync.
import { constants, createZstdCompress, zstdCompressSync, type ZstdCompress, type ZstdDecompress, type ZstdOptions } from 'node:zlib';

/** Output room per native call, as zlib's synchronous path gives it (its default chunk size). */
const CHUNK = 16 * 1024;

/** The parts of a zlib stream's native handle that its synchronous path uses (node:zlib internals). */
interface NativeHandle {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
}
interface EngineInternals {
  _handle?: NativeHandle | null;
  /** [output room left, input left] after each write. */
  _writeState?: Uint32Array;
}

/** One zlib zstd stream written through its native handle (this and zstd-plain.ts's reader). */
export class NativeZstd {
  private constructor(
    private readonly engine: ZstdCompress | ZstdDecompress,
    private readonly handle: NativeHandle,
    /** [output room left, input left] after each write. */
    readonly state: Uint32Array,
  ) {}

  /** The stream's native side, or null (destroying it) where this Node's stream is not as expected. */
  static of(engine: ZstdCompress | ZstdDecompress): NativeZstd | null {
    engine.on('error', () => {}); // reported through `failed`
    const internals = engine as unknown as EngineInternals;
    if (typeof internals._handle?.writeSync === 'function' && internals._writeState instanceof Uint32Array) return new NativeZstd(engine, internals._handle, internals._writeState);
    engine.destroy();
    return null;
  }

  /** One synchronous write with ZSTD_e_end, as zlib's synchronous path makes them. */
  write(input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void {
    this.handle.writeSync(constants.ZSTD_e_end, input, inOff, inLen, out, outOff, outLen);
  }

  /** The handle reported an error (zlib then destroys the stream): it takes nothing more. */
  get failed(): boolean {
    return this.engine.destroyed;
  }

  close(): void {
    this.engine.destroy();
  }
}

export class ZstdFrames {
  private stream: NativeZstd | null = null;
  private out: Uint8Array = new Uint8Array(4 * CHUNK);
  private readonly options: ZstdOptions;

  constructor(level: number) {
    this.options = { params: { [constants.ZSTD_c_compressionLevel]: level } };
    this.open();
  }

  /**
   * `lead` bytes (for the caller to fill) followed by the zstd frame of `input`, the bytes
   * zstdCompressSync(input) gives with this level. A view into a buffer the next call reuses.
   */
  frameAfter(lead: number, input: Uint8Array): Uint8Array {
    if (this.stream !== null) {
      const framed = this.native(lead, input);
      if (framed !== null) return framed;
    }
    const packed = zstdCompressSync(input, this.options);
    this.room(lead + packed.length);
    this.out.set(packed, lead);
    return this.out.subarray(0, lead + packed.length);
  }

  private native(lead: number, input: Uint8Array): Uint8Array | null {
    const stream = this.stream!;
    const state = stream.state;
    let at = lead;
    let inOff = 0;
    let inLeft = input.length;
    for (;;) {
      this.room(at + CHUNK);
      stream.write(input, inOff, inLeft, this.out, at, CHUNK);
      if (stream.failed) {
        // The handle reported an error (zlib then destroys the stream): this frame and the rest the plain way.
        this.drop();
        return null;
      }
      const roomLeft = state[0]!;
      inOff += inLeft - state[1]!;
      inLeft = state[1]!;
      at += CHUNK - roomLeft;
      // No room left: zstd may have more to write (zlib's loop goes on for the same reason).
      if (roomLeft !== 0) return this.out.subarray(0, at);
    }
  }

  private room(n: number): void {
    if (this.out.length >= n) return;
    const bigger = new Uint8Array(Math.max(n, this.out.length * 2));
    bigger.set(this.out);
    this.out = bigger;
  }

  private drop(): void {
    this.stream?.close();
    this.stream = null;
  }

  /** The context, kept only if it frames a sample as zstdCompressSync does. */
  private open(): void {
    this.stream = NativeZstd.of(createZstdCompress(this.options));
    const sample = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) % 13);
    const expected = zstdCompressSync(sample, this.options);
    for (let k = 0; k < 2 && this.stream !== null; k++) {
      const got = this.native(1, sample);
      if (got === null || !expected.equals(got.subarray(1))) return this.drop();
    }
  }
}
