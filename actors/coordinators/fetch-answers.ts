// Whole `/fetch` answers kept for the next identical request: a dashboard asks the same streams
// over the same range at every refresh, and an answer over sealed data is the same bytes until
// one of its streams changes (VictoriaMetrics keeps query results the same way). An answer is
// kept only when every stream is numeric, read on this node, and settled up to the fetch's end
// (no open buffer there); it is served again only while each shard holding its streams still
// finds them settled and names the same epoch (actors/shard/shard.ts `settledEpoch`), which moves
// with every store write that could change them (a late sample opens a buffer first, which
// unsettles them). Asking costs one message per shard, not a read.
import { readMetric, type ReadMetric } from '../../model/metric-info.js';
import type { NodeApi } from '../api.js';

/** One shard's part of an answer: the streams it holds and the epoch the answer was read at. */
interface ShardStamp {
  shard: number;
  metrics: ReadMetric[];
  epoch: string;
}

/** An answer's body and media type. */
export interface FetchAnswer {
  type: string;
  body: Buffer;
}

interface Entry extends FetchAnswer {
  stamps: ShardStamp[];
  /** The plan's end: its streams must stay settled up to it. */
  end: number;
  bytes: number;
}

/** What a kept answer costs besides its body: its key (two bytes a character) and stamps. */
const entryBytes = (key: string, body: Buffer, stamps: readonly ShardStamp[]) => 2 * key.length + body.length + stamps.reduce((n, s) => n + 64 + 48 * s.metrics.length, 0);

export class FetchAnswers {
  /** Least recently used first. */
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;

  constructor(private readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /** The answer kept under `key` if every shard it read from still names the same epoch. */
  async lookup(node: NodeApi, key: string): Promise<FetchAnswer | undefined> {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    const now = await Promise.all(entry.stamps.map((s) => node.shards.askShard(s.shard, 'settledEpoch', s.metrics, entry.end, 'settled')));
    // Dropped (not only passed over) when stale: its replacement is kept under the same key.
    if (this.entries.get(key) !== entry || !now.every((epoch, i) => epoch === entry.stamps[i]!.epoch)) {
      this.remove(key);
      this.misses++;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hits++;
    return entry;
  }

  /** Keeps an answer read at `stamps` (from `settledStamps`, asked before the read began). */
  keep(key: string, stamps: ShardStamp[], end: number, answer: FetchAnswer): void {
    const bytes = entryBytes(key, answer.body, stamps);
    if (bytes > this.maxBytes / 4) return;
    this.remove(key);
    this.entries.set(key, { ...answer, stamps, end, bytes });
    this.bytes += bytes;
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(oldest);
    }
  }

  report(): { entries: number; bytes: number; hits: number; misses: number } {
    return { entries: this.entries.size, bytes: this.bytes, hits: this.hits, misses: this.misses };
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

/**
 * The epochs of the shards holding `metrics` (a plan's numeric streams, all read on this node)
 * if an answer read now may be kept: each settled up to `end`. Asked before the read (each shard
 * takes its epoch as the question arrives, ahead of the read's questions sent right after it), so
 * anything that changes its streams after this moves an epoch.
 */
export async function settledStamps(node: NodeApi, metrics: readonly ReadMetric[], end: number): Promise<ShardStamp[] | null> {
  const byShard = [...node.shards.byShard(metrics, (m) => m.partition)];
  const epochs = await Promise.all(byShard.map(([n, list]) => node.shards.askShard(n, 'settledEpoch', list.map(readMetric), end, 'arrival')));
  if (epochs.some((e) => e === null)) return null;
  return byShard.map(([shard, list], i) => ({ shard, metrics: list.map(readMetric), epoch: epochs[i]! }));
}
