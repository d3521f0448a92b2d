// Background merging of a window's sealed numeric blocks (issue 31). A window gets a second block
// when it is sealed again: after a restart (a graceful stop seals every open buffer), for a late
// sample, or when a buffer filled before its window ended. Each costs a key, a header and a block
// read; the partition notes such windows at seal time and merges a few per checkpoint, in its own
// mailbox, so ingest never waits for more than that bounded step. Windows are the unit blocks,
// rollups, retention and deletes work in, so blocks are never merged across windows.
import type { Series } from '../../model/series.js';
import type { BufferValue } from '../../model/types.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { BlockOwner, BlockStore } from '../../storage/blocks.js';

/** Windows merged per checkpoint at most. */
const MERGES_PER_STEP = 32;
/** A merged block holds at most this many samples (VictoriaMetrics' block size). */
export const MERGED_BLOCK_SAMPLES = 8192;
/** Candidates remembered at most; past this new ones are dropped (they only cost bytes). */
const MAX_PENDING = 100_000;

export class BlockMerges {
  private readonly pending = new Map<string, { owner: BlockOwner; window: number }>();
  /** Windows merged since the process started (`/state` → shards[].blocks_merged). */
  total = 0;

  /**
   * Notes `window` of `owner` when a block is already sealed there; call before sealing the new
   * one. A window newer than any the partition sealed before this process started, and than any
   * this process sealed for the metric, has none: its seal costs no look (an iterator, ≈ 60–90 µs
   * a seal, ten times the rest of it, for every metric every window).
   */
  async noteSeal(blocks: BlockStore, owner: BlockOwner & Pick<MetricInfo, 'idHex' | 'newestSealedS'>, window: number, spanMs: number): Promise<void> {
    const seconds = Math.floor(window / 1000);
    const first = window > blocks.horizonAtOpen && seconds > owner.newestSealedS;
    owner.newestSealedS = Math.max(owner.newestSealedS, seconds);
    if (first) return;
    const key = `${owner.idHex}/${window}`;
    if (this.pending.has(key) || this.pending.size >= MAX_PENDING) return;
    if (await blocks.windowHasBlock(owner, 'numeric', window, spanMs)) this.pending.set(key, { owner, window });
  }

  /** Merges up to MERGES_PER_STEP noted windows; returns how many were merged. */
  async step(blocks: BlockStore, spanMs: number, normalize: (s: Series<BufferValue>) => Series<BufferValue>): Promise<number> {
    let merged = 0;
    let tried = 0;
    for (const [key, { owner, window }] of this.pending) {
      if (tried++ >= MERGES_PER_STEP) break;
      this.pending.delete(key);
      if (await blocks.mergeWindow(owner, 'numeric', window, spanMs, normalize, MERGED_BLOCK_SAMPLES)) merged++;
    }
    this.total += merged;
    return merged;
  }

  get size(): number {
    return this.pending.size;
  }
}
