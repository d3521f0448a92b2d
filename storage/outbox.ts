// The cluster outbox (CF.outbox: peer | 0x00 | seq → one journal message for that peer) and what
// replication keeps beside it in `state`: this node's outbox incarnation, the last sequence used
// per peer, and what this node applied of each sender incarnation. actors/cluster/replication.ts
// decides; this module only reads and writes.
import { randomUUID } from 'node:crypto';
import { appliedKey, CF, decodeU64, encodeU64, outboxKey, outboxRange, outboxSeqKey, outboxSeqOf, prefixEnd, STATE_KEY } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';

/** One stored outbox message: its op byte and body. */
export interface StoredMessage {
  seq: number;
  value: Buffer;
}

/** What a receiver has applied of one sender incarnation. */
export interface AppliedMarks {
  through: number;
  above: number[];
}

export class Outbox {
  constructor(private readonly store: Store) {}

  /** This node's outbox incarnation, chosen (and kept) the first time. */
  async incarnation(): Promise<string> {
    const stored = await this.store.get(CF.state, STATE_KEY.outboxIncarnation);
    if (stored !== null) return stored.toString('utf8');
    const incarnation = randomUUID();
    await this.store.batch().put(CF.state, STATE_KEY.outboxIncarnation, Buffer.from(incarnation)).write();
    return incarnation;
  }

  /** Stages a message for `peer` (and the peer's last sequence) in `batch`. */
  stage(batch: StoreBatch, peer: string, seq: number, value: Buffer): void {
    batch.put(CF.outbox, outboxKey(peer, seq), value);
    // Sequences must never repeat within an incarnation, even once the outbox is empty.
    batch.put(CF.state, outboxSeqKey(peer), encodeU64(seq));
  }

  /** Every message still held for `peer`, in sequence order, and the last sequence used. */
  async load(peer: string): Promise<{ messages: StoredMessage[]; lastSeq: number }> {
    const messages: StoredMessage[] = [];
    for await (const { key, value } of this.store.scan(CF.outbox, { ...outboxRange(peer), capacity: 1024 })) messages.push({ seq: outboxSeqOf(key), value });
    const last = await this.store.get(CF.state, outboxSeqKey(peer));
    return { messages, lastSeq: last === null ? 0 : decodeU64(last) };
  }

  /** The stored messages of `peer` with these sequences (null: gone). */
  read(peer: string, seqs: readonly number[]): Promise<(Buffer | null)[]> {
    return this.store.getMany(CF.outbox, seqs.map((seq) => outboxKey(peer, seq)));
  }

  /** Drops what `peer` confirmed: every sequence up to `through`, and `above`. */
  async confirm(peer: string, through: number, above: readonly number[]): Promise<void> {
    const batch = this.store.batch().deleteRange(CF.outbox, outboxKey(peer, 0), outboxKey(peer, through + 1));
    for (const seq of above) batch.delete(CF.outbox, outboxKey(peer, seq));
    await batch.write();
  }

  /** Stages what this node has applied of a sender incarnation. */
  stageApplied(batch: StoreBatch, incarnation: string, marks: AppliedMarks): void {
    batch.put(CF.state, appliedKey(incarnation), Buffer.from(JSON.stringify(marks)));
  }

  /** What this node applied of each sender incarnation. */
  async applied(): Promise<Map<string, AppliedMarks>> {
    const prefix = appliedKey('');
    const out = new Map<string, AppliedMarks>();
    for await (const { key, value } of this.store.scan(CF.state, { gte: prefix, lt: prefixEnd(prefix) })) {
      out.set(key.subarray(prefix.length).toString('utf8'), JSON.parse(value.toString('utf8')) as AppliedMarks);
    }
    return out;
  }
}
