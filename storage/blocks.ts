// One partition's sealed blocks of numeric and text samples (CF.numeric, CF.text; histograms as
// submitted in CF.histogram_raw): key metric id | window start | seal seq, so a metric's blocks
// are contiguous, in window order, and within a window in the order they were sealed (which
// decides text conflicts). The partition's seal sequence is kept beside them (`seal_seq/<p>`).
import { blockHeader, decodeNumericBlock, encodeNumericBlock } from '../model/codec/numeric-block.js';
import { BlockFormatError } from '../model/codec/errors.js';
import { decodeTextBlock, encodeTextBlock } from '../model/codec/text-block.js';
import type { DataKind } from '../model/ingest-record.js';
import { concatSeries, type Series } from '../model/series.js';
import type { BufferValue, NumericValue } from '../model/types.js';
import { blockKey, blockKeyFloor, blockWindowOf, CF, decodeU64, encodeU64, sealHorizonKey, sealSeqKey, type ColumnFamilyName } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';

export interface KindLayout {
  cf: ColumnFamilyName;
  encode(s: Series<BufferValue>): Uint8Array;
  decode(bytes: Uint8Array): Series<BufferValue>;
}

const numericLayout: KindLayout = {
  cf: CF.numeric,
  encode: (s) => encodeNumericBlock(s as Series<NumericValue>),
  decode: (bytes) => decodeNumericBlock(bytes) as Series<BufferValue>,
};

const textLayout = (cf: ColumnFamilyName): KindLayout => ({
  cf,
  encode: (s) => encodeTextBlock(s as Series<string | null>),
  decode: (bytes) => decodeTextBlock(bytes) as Series<BufferValue>,
});

/** How each data kind is laid out: which column family, which block codec. */
export const LAYOUT: Record<DataKind, KindLayout> = {
  numeric: numericLayout,
  text: textLayout(CF.text),
  // Histograms are kept as submitted (base64 text) until the histogram store decodes them.
  histogram: textLayout(CF.histogramRaw),
};

/** A metric as its blocks know it: its id, and whether this process knows it has none yet. */
export interface BlockOwner {
  id: Buffer;
  unsealed?: boolean;
}

/** No window is known to be sealed (a partition that never sealed a block). */
const NO_WINDOW = -1;

/** One window's blocks, in the order they were sealed. */
export interface SealedWindow {
  window: number;
  blocks: Series<BufferValue>[];
}

export class BlockStore {
  /** The newest window start of any block staged, recorded with the seal sequence (`seal_horizon/<p>`). */
  private horizon: number;

  private constructor(
    private readonly store: Store,
    private readonly partition: number,
    /** The highest seal sequence used (committed with the blocks it numbers). */
    private sealed: number,
    /**
     * Every block sealed before this process opened the partition is of a window starting at or
     * before this: a later window's first seal in this process is its first block (BlockMerges).
     */
    readonly horizonAtOpen: number,
  ) {
    this.horizon = horizonAtOpen;
  }

  /**
   * `unrecordedHorizon`: the horizon to assume for a data dir from before the horizon was
   * recorded (the node passes now + its clock-skew limit, beyond which no sample was accepted);
   * by default none is assumed (every window may hold blocks).
   */
  static async open(store: Store, partition: number, unrecordedHorizon = Number.MAX_SAFE_INTEGER): Promise<BlockStore> {
    const [seq, horizon] = await store.getMany(CF.state, [sealSeqKey(partition), sealHorizonKey(partition)]);
    if (seq == null) return new BlockStore(store, partition, 0, NO_WINDOW);
    return new BlockStore(store, partition, decodeU64(seq), horizon == null ? unrecordedHorizon : decodeU64(horizon));
  }

  /** A write of several blocks (and whatever else must be atomic with them). */
  batch(): StoreBatch {
    return this.store.batch();
  }

  /** The blocks of `kind` with a sample in [start, end), in key order. */
  async read(metric: BlockOwner, kind: DataKind, start: number, end: number, spanMs: number): Promise<Series<BufferValue>[]> {
    return (await this.readEncoded(metric, kind, start, end, spanMs)).map((b) => LAYOUT[kind].decode(b));
  }

  /** `read` without decoding: each block as stored (rollup reads decode numeric ones into typed arrays). */
  async readEncoded(metric: BlockOwner, kind: DataKind, start: number, end: number, spanMs: number): Promise<Uint8Array[]> {
    const blocks: Uint8Array[] = [];
    if (metric.unsealed === true) return blocks;
    const scan = this.store.scan(LAYOUT[kind].cf, { gte: blockKeyFloor(metric.id, start - (start % spanMs)), lt: blockKeyFloor(metric.id, Math.min(end, Number.MAX_SAFE_INTEGER)) });
    for await (const { value } of scan) {
      const head = blockHeader(value);
      if (head.lastTs < start || head.firstTs >= end) continue;
      blocks.push(value);
    }
    return blocks;
  }

  /** Windows before `limit`, newest first, each with its blocks in seal order (the caller stops when it has enough). */
  async *windowsBefore(metric: BlockOwner, kind: DataKind, limit: number): AsyncGenerator<SealedWindow> {
    if (metric.unsealed === true) return;
    const layout = LAYOUT[kind];
    let current: SealedWindow | null = null;
    for await (const { key, value } of this.store.scan(layout.cf, { gte: blockKeyFloor(metric.id, 0), lt: blockKeyFloor(metric.id, limit), reverse: true })) {
      const window = blockWindowOf(key);
      if (current !== null && current.window !== window) {
        yield current;
        current = null;
      }
      current ??= { window, blocks: [] };
      current.blocks.unshift(layout.decode(value));
    }
    if (current !== null) yield current;
  }

  /** True when the metric has a sealed block of a window starting before `window` (one seek). */
  async anyWindowBefore(metric: BlockOwner, kind: DataKind, window: number): Promise<boolean> {
    if (metric.unsealed === true) return false;
    for await (const _ of this.store.scan(LAYOUT[kind].cf, { gte: blockKeyFloor(metric.id, 0), lt: blockKeyFloor(metric.id, window), limit: 1 })) return true;
    return false;
  }

  /**
   * The first and last windows (starts) holding sealed blocks of the metric among the windows
   * overlapping [start, end), or null when none does: two seeks, however wide the range.
   */
  async windowRange(metric: BlockOwner, kind: DataKind, start: number, end: number, spanMs: number): Promise<[number, number] | null> {
    if (metric.unsealed === true || end <= start) return null;
    const bounds = await this.store.keyBounds(LAYOUT[kind].cf, { gte: blockKeyFloor(metric.id, Math.max(0, start - (start % spanMs))), lt: blockKeyFloor(metric.id, Math.max(0, end)) });
    return bounds === null ? null : [blockWindowOf(bounds[0]), blockWindowOf(bounds[1])];
  }

  /** True when a sealed block holds a sample before `before`, or cannot be read (so a delete can remove it). */
  async anyBefore(metric: BlockOwner, kind: DataKind, before: number, spanMs: number): Promise<boolean> {
    const scan = this.store.scan(LAYOUT[kind].cf, { gte: blockKeyFloor(metric.id, 0), lt: blockKeyFloor(metric.id, before - (before % spanMs) + spanMs) });
    for await (const { value } of scan) if (startsBefore(value, before)) return true;
    return false;
  }

  /**
   * Stages the delete of every block of the windows wholly before `cut`; when `cut` falls inside
   * a window, that window's blocks are deleted too and returned (the caller seals back what it
   * keeps of them).
   */
  async stageDeleteBefore(batch: StoreBatch, metric: BlockOwner, kind: DataKind, cut: number, spanMs: number): Promise<Series<BufferValue>[]> {
    const layout = LAYOUT[kind];
    const window = cut - (cut % spanMs);
    batch.deleteRange(layout.cf, blockKeyFloor(metric.id, 0), blockKeyFloor(metric.id, window));
    if (cut === window) return [];
    const range = { gte: blockKeyFloor(metric.id, window), lt: blockKeyFloor(metric.id, window + spanMs) };
    const parts: Series<BufferValue>[] = [];
    for await (const { value } of this.store.scan(layout.cf, range)) parts.push(layout.decode(value));
    if (parts.length > 0) batch.deleteRange(layout.cf, range.gte, range.lt);
    return parts;
  }

  /** True when the window holds a sealed block of `kind` (a seal into it makes the window a merge candidate). */
  async windowHasBlock(metric: BlockOwner, kind: DataKind, window: number, spanMs: number): Promise<boolean> {
    if (metric.unsealed === true) return false;
    for await (const _ of this.store.scan(LAYOUT[kind].cf, { gte: blockKeyFloor(metric.id, window), lt: blockKeyFloor(metric.id, window + spanMs), limit: 1 })) return true;
    return false;
  }

  /**
   * Merges a window's sealed blocks into one: their samples in seal order, `normalize`d as a read
   * does, written under the newest part's key (so blocks sealed later still sort after it) with the
   * other parts deleted, in one batch: after a crash either the parts or the merged block exist,
   * and both read the same. False when the window has fewer than two blocks or more than
   * `maxSamples` samples (then it is left as it is).
   */
  async mergeWindow(metric: BlockOwner, kind: DataKind, window: number, spanMs: number, normalize: (s: Series<BufferValue>) => Series<BufferValue>, maxSamples: number): Promise<boolean> {
    if (metric.unsealed === true) return false;
    const layout = LAYOUT[kind];
    const keys: Buffer[] = [];
    const parts: Series<BufferValue>[] = [];
    let samples = 0;
    for await (const { key, value } of this.store.scan(layout.cf, { gte: blockKeyFloor(metric.id, window), lt: blockKeyFloor(metric.id, window + spanMs) })) {
      samples += blockHeader(value).count;
      if (samples > maxSamples) return false;
      keys.push(Buffer.from(key));
      parts.push(layout.decode(value));
    }
    if (parts.length < 2) return false;
    const merged = normalize(concatSeries(parts));
    const batch = this.store.batch();
    for (const key of keys.slice(0, -1)) batch.delete(layout.cf, key);
    batch.put(layout.cf, keys[keys.length - 1]!, layout.encode(merged));
    await batch.write();
    return true;
  }

  /** The sequences a seal of `count` blocks takes (committed with `stageSeal`'s batch by `sealed`). */
  nextSeqs(count: number): number[] {
    return Array.from({ length: count }, (_, i) => this.sealed + 1 + i);
  }

  /** Stages one block, numbered by a sequence from `nextSeqs` (stage the seal sequence too: `stageSealSeq`). */
  stageBlock(batch: StoreBatch, metric: BlockOwner, kind: DataKind, windowStart: number, seq: number, samples: Series<BufferValue>): void {
    const layout = LAYOUT[kind];
    batch.put(layout.cf, blockKey(metric.id, windowStart, seq), layout.encode(samples));
    // Raised before the write: a batch that fails leaves the horizon higher than needed, never lower.
    this.horizon = Math.max(this.horizon, windowStart);
  }

  /** Stages the partition's seal sequence (the highest `seq` staged) and horizon, once per batch of blocks. */
  stageSealSeq(batch: StoreBatch, seq: number): void {
    batch.put(CF.state, sealSeqKey(this.partition), encodeU64(seq));
    batch.put(CF.state, sealHorizonKey(this.partition), encodeU64(Math.max(0, this.horizon)));
  }

  /** Notes that a batch staging blocks up to `seq` was written. */
  committed(seq: number): void {
    this.sealed = Math.max(this.sealed, seq);
  }
}

function startsBefore(block: Uint8Array, before: number): boolean {
  try {
    return blockHeader(block).firstTs < before;
  } catch (error) {
    if (error instanceof BlockFormatError) return true;
    throw error;
  }
}
