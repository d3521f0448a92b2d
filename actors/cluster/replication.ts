// Replication between owners. A write's records for metrics other nodes own go into this
// node's outbox (in the same RocksDB batch as its local journal entry) and are published
// to each owner's JetStream journal; the client is answered after both. An outbox entry
// stays until its peer reports it applied; entries not confirmed in time are re-published
// (with backoff), so neither a crashed peer nor a nats-server that lost acknowledged
// messages loses data. Receivers remember, per sender incarnation, which messages they
// applied, in the same batch as the data: re-delivery never applies anything twice.
//
// During a rebalance (actors/cluster/rebalance.ts) writes also go to the next topology's
// owners. Nodes only in the next topology are reached through the next topology's journal
// stream (they consume that one); every other peer keeps getting its messages on the current
// stream, so per-peer sequences stay one series on one stream.
import type { Logger } from 'pino';
import { ferr } from '../../model/errors.js';
import type { CheckTagScope, CheckTagUpdate } from '../../model/check-tags.js';
import type { IngestRecord } from '../../model/ingest-record.js';
import type { DeleteTarget } from '../../model/delete.js';
import { ownersOf, type Ring } from '../../model/topology/index.js';
import type { NodeBatch } from '../../storage/node-storage.js';
import type { Outbox } from '../../storage/outbox.js';
import { JOURNAL_OPS, type AppliedReport, type JournalEnvelope, type JournalOp, type JournalStream } from '../../transport/journal-stream.js';
import type { MetricInfo, PortableIdentity } from '../../model/metric-info.js';

/** Unconfirmed entries are re-published after this long, doubling per attempt up to the cap. */
const REPUBLISH_AFTER_MS = 10_000;
const REPUBLISH_CAP_MS = 300_000;
const REPUBLISH_TICK_MS = 1_000;
/** At most this many re-publications per tick, so a long outage does not flood NATS. */
const REPUBLISH_PER_TICK = 512;

/** One message staged for a peer: written to the outbox, then published. */
export interface Outgoing {
  peer: string;
  seq: number;
  op: JournalOp;
  body: Buffer;
  records: number;
}

interface Unconfirmed {
  /** When last published (0: never, or before a restart). */
  at: number;
  tries: number;
  records: number;
}

/** What a receiver has applied of one sender incarnation. */
interface Applied {
  through: number;
  above: Set<number>;
}

export interface AppliedUpdate {
  incarnation: string;
  applied: Applied;
}

/** One metric's /write/nnt rollup records journaled to its other owners. */
export interface JournaledRollups extends PortableIdentity {
  /** [period start ms, encoded accumulator as base64]. */
  records: [number, string][];
  /**
   * A relocation or rebuild copy (actors/cluster/relocation.ts) instead: per level period (s),
   * periods set as they are, nothing rebuilt from finer levels; `records` is then empty.
   */
  levels?: [number, [number, string][]][];
}

/** A check tag update journaled to every other node. */
export interface JournaledCheckTags {
  scope: CheckTagScope;
  uuid: string;
  update: CheckTagUpdate;
}

/** A single-metric delete journaled to the metric's other owners (x-svc-full-delete: 1). */
export interface JournaledDelete extends PortableIdentity {
  /** Older nodes journal only data kinds; `nnt` is a numeric rollup delete. */
  kind: DeleteTarget;
  before: number;
  periods: number[] | null;
}

export interface PeerLag {
  unconfirmed_messages: number;
  unconfirmed_records: number;
  /** Age of the oldest unconfirmed message, seconds (0 when none). */
  oldest_unconfirmed_age: number;
}

export class Replication {
  private readonly nextSeq = new Map<string, number>();
  private readonly unconfirmed = new Map<string, Map<number, Unconfirmed>>();
  private readonly applied = new Map<string, Applied>();
  private readonly owners = new Map<string, string[]>();
  /** The rebalance's next topology: its ring, its journal, and the owners it gives (cached). */
  private next: { ring: Ring; journal: JournalStream; owners: Map<string, string[]>; peers: Set<string> } | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Asks a peer directly what it applied (null: it did not answer). */
  private probe: (peer: string, incarnation: string) => Promise<AppliedReport | null> = async () => null;
  /** Records received from peers that this node does not own under its topology. */
  misdirected = 0;

  private constructor(
    private readonly outbox: Outbox,
    private ring: Ring,
    readonly identity: string,
    readonly incarnation: string,
    /** The current topology's stream (the next one's once `switchToNext`). */
    public journal: JournalStream,
    private readonly log: Logger,
  ) {}

  static async open(outbox: Outbox, ring: Ring, identity: string, journal: JournalStream, log: Logger): Promise<Replication> {
    const r = new Replication(outbox, ring, identity, await outbox.incarnation(), journal, log);
    await r.loadOutbox();
    return r;
  }

  /** Starts confirmations and re-publication; everything left in the outbox goes out again. */
  start(): void {
    this.journal.onApplied(this.identity, (report) => void this.confirmed(report).catch((e) => this.log.error({ err: e }, 'outbox confirmation failed')));
    this.timer = setInterval(() => void this.republishDue().catch((e) => this.log.warn({ err: e }, 're-publication failed')), REPUBLISH_TICK_MS);
    this.timer.unref();
  }

  /**
   * Sets how to ask a peer what it applied. Needed because applied reports are fire and
   * forget: one sent while this node was down is gone, and re-publishing cannot bring it
   * back when JetStream drops the re-publication as a duplicate of a message already applied.
   */
  setProbe(probe: (peer: string, incarnation: string) => Promise<AppliedReport | null>): void {
    this.probe = probe;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.journal.close();
    this.next?.journal.close();
  }

  /**
   * Starts sending writes to the owners `ring` (the next topology's) gives as well. Nodes not
   * in the current topology get theirs on `journal`, the next topology's stream; what the
   * outbox still holds for them (from an earlier, interrupted rebalance) goes out again.
   */
  async beginNext(ring: Ring, journal: JournalStream): Promise<void> {
    this.endNext(false);
    const current = new Set(this.ring.topology.nodes.map((n) => n.id));
    const peers = new Set(ring.topology.nodes.map((n) => n.id).filter((id) => !current.has(id)));
    for (const peer of peers) {
      const pending = this.pendingOf(peer);
      const { messages, lastSeq } = await this.outbox.load(peer);
      for (const { seq, value } of messages) pending.set(seq, { at: 0, tries: 0, records: value[0] === 0 ? countRecords(value) : 1 });
      this.nextSeq.set(peer, lastSeq + 1);
    }
    this.next = { ring, journal, owners: new Map(), peers };
    journal.onApplied(this.identity, (report) => void this.confirmed(report).catch((e) => this.log.error({ err: e }, 'outbox confirmation failed')));
  }

  /**
   * Stops writing to the next topology's owners. On an abort (`drop`) what the outbox holds
   * for nodes only in that topology is dropped: they are not part of the cluster after all.
   */
  endNext(drop = true): void {
    const next = this.next;
    if (next === null) return;
    this.next = null;
    next.journal.close();
    if (!drop) return;
    for (const peer of next.peers) {
      const pending = this.unconfirmed.get(peer);
      this.unconfirmed.delete(peer);
      const last = (this.nextSeq.get(peer) ?? 1) - 1;
      if (pending !== undefined && last > 0) void this.outbox.confirm(peer, last, []).catch((e) => this.log.warn({ err: e }, 'dropping an aborted rebalance outbox failed'));
    }
  }

  /**
   * The rebalance's switch: the next topology becomes this replication's topology and its
   * stream the one it publishes to and (once the caller consumes it) receives from. Sequences,
   * the outbox and applied marks carry on unchanged; what was published on the old stream and
   * not yet confirmed is re-published on the new one, where the receiver dedupes it.
   */
  switchToNext(): void {
    const next = this.next;
    if (next === null) throw new Error('BUG: switchToNext without a next topology');
    const old = this.journal;
    this.ring = next.ring;
    this.journal = next.journal;
    this.owners.clear();
    this.next = null;
    old.close();
  }

  /** Every node a write may go to: the current topology's, and the next one's during a rebalance. */
  peers(): string[] {
    const ids = this.ring.topology.nodes.map((n) => n.id);
    if (this.next !== null) ids.push(...this.next.peers);
    return ids.filter((id) => id !== this.identity);
  }

  /** True when the rebalance's next topology makes this node an owner of `metric`. */
  ownsNext(metric: Pick<MetricInfo, 'key'>): boolean {
    return this.next !== null && this.targetsOf(metric).includes(this.identity);
  }

  /** Where a metric's writes go: its owners, and during a rebalance its next owners too. */
  targetsOf(metric: Pick<MetricInfo, 'key'>): string[] {
    const ids = this.ownersOf(metric);
    const next = this.next;
    if (next === null) return ids;
    let nextIds = next.owners.get(metric.key);
    if (nextIds === undefined) {
      nextIds = ownersOf(next.ring, metric.key).map((n) => n.id);
      next.owners.set(metric.key, nextIds);
    }
    return [...new Set([...ids, ...nextIds])];
  }
  /** The owners of a metric, primary first (cached: the ring never changes under a node). */
  ownersOf(metric: Pick<MetricInfo, 'key'>): string[] {
    let ids = this.owners.get(metric.key);
    if (ids === undefined) {
      ids = ownersOf(this.ring, metric.key).map((n) => n.id);
      this.owners.set(metric.key, ids);
    }
    return ids;
  }

  owns(metric: Pick<MetricInfo, 'key'>): boolean {
    return this.ownersOf(metric).includes(this.identity);
  }

  /** Splits records into this node's and each other owner's (next owners too, during a rebalance). */
  route<R extends IngestRecord<MetricInfo>>(records: R[]): { local: R[]; remote: Map<string, R[]> } {
    const local: R[] = [];
    const remote = new Map<string, R[]>();
    for (const r of records) {
      for (const owner of this.targetsOf(r.metric)) {
        if (owner === this.identity) {
          local.push(r);
          continue;
        }
        let list = remote.get(owner);
        if (list === undefined) remote.set(owner, (list = []));
        list.push(r);
      }
    }
    return { local, remote };
  }

  /** Adds one outbox entry per peer to `batch`; publish them once the batch is written. */
  stage(batch: NodeBatch, peer: string, op: JournalOp, body: Buffer, records: number): Outgoing {
    const seq = this.nextSeq.get(peer) ?? 1;
    this.nextSeq.set(peer, seq + 1);
    this.outbox.stage(batch, peer, seq, Buffer.concat([Buffer.from([JOURNAL_OPS.indexOf(op)]), body]));
    this.pendingOf(peer).set(seq, { at: Date.now(), tries: 1, records });
    return { peer, seq, op, body, records };
  }

  /** The last sequence staged for `peer` (0: none yet). */
  lastStaged(peer: string): number {
    return (this.nextSeq.get(peer) ?? 1) - 1;
  }

  /** True once `peer` confirmed every message this node staged for it up to `seq`. */
  confirmedThrough(peer: string, seq: number): boolean {
    for (const s of this.unconfirmed.get(peer)?.keys() ?? []) if (s <= seq) return false;
    return true;
  }

  /** Publishes staged entries; resolves when JetStream has acknowledged every one. */
  async publish(outgoing: Outgoing[]): Promise<void> {
    const results = await Promise.allSettled(outgoing.map((o) => this.send(o)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw ferr('FER_ERR_NOT_REPLICATED', String((failed.reason as Error)?.message ?? failed.reason));
  }

  private async send(o: Outgoing): Promise<void> {
    const journal = this.next?.peers.has(o.peer) ? this.next.journal : this.journal;
    await journal.publish(o.peer, { sender: this.identity, incarnation: this.incarnation, seq: o.seq, op: o.op }, o.body);
  }

  /** True when the message was applied before (a re-delivery or re-publication). */
  alreadyApplied(envelope: JournalEnvelope): boolean {
    const a = this.applied.get(envelope.incarnation);
    return a !== undefined && (envelope.seq <= a.through || a.above.has(envelope.seq));
  }

  /**
   * Records in `batch` that the message is applied. The returned update is installed only
   * once the batch is written: were it installed first, a failed write would make the
   * re-delivery look applied.
   */
  markApplied(batch: NodeBatch, envelope: JournalEnvelope): AppliedUpdate {
    const current = this.applied.get(envelope.incarnation) ?? { through: 0, above: new Set<number>() };
    const next = { through: current.through, above: new Set(current.above) };
    next.above.add(envelope.seq);
    while (next.above.delete(next.through + 1)) next.through++;
    this.outbox.stageApplied(batch, envelope.incarnation, { through: next.through, above: [...next.above] });
    return { incarnation: envelope.incarnation, applied: next };
  }

  installApplied(update: AppliedUpdate): void {
    this.applied.set(update.incarnation, update.applied);
  }

  /** This node's report to a sender incarnation of what it has applied. */
  appliedReport(incarnation: string): AppliedReport {
    const a = this.applied.get(incarnation) ?? { through: 0, above: new Set<number>() };
    return { peer: this.identity, incarnation, through: a.through, above: [...a.above] };
  }

  /** Loads what this node applied from each sender; called before consuming. */
  async loadApplied(): Promise<void> {
    for (const [incarnation, marks] of await this.outbox.applied()) this.applied.set(incarnation, { through: marks.through, above: new Set(marks.above) });
  }

  /** Replication lag per peer: what this node still holds for it, unconfirmed. */
  lag(): Record<string, PeerLag> {
    const now = Date.now();
    const out: Record<string, PeerLag> = {};
    for (const id of this.peers()) {
      const pending = this.unconfirmed.get(id) ?? new Map<number, Unconfirmed>();
      let records = 0;
      let oldest = Infinity;
      for (const [seq, u] of pending) {
        records += u.records;
        if (seq < oldest) oldest = seq;
      }
      const first = pending.get(oldest);
      const age = first === undefined || first.at === 0 ? 0 : (now - first.at) / 1000;
      out[id] = { unconfirmed_messages: pending.size, unconfirmed_records: records, oldest_unconfirmed_age: age };
    }
    return out;
  }

  private pendingOf(peer: string): Map<number, Unconfirmed> {
    let m = this.unconfirmed.get(peer);
    if (m === undefined) this.unconfirmed.set(peer, (m = new Map()));
    return m;
  }

  /** A peer applied some of our messages: they leave the outbox. */
  private async confirmed(report: AppliedReport): Promise<void> {
    if (report.incarnation !== this.incarnation) return;
    const pending = this.unconfirmed.get(report.peer);
    if (pending === undefined || pending.size === 0) return;
    for (const seq of pending.keys()) if (seq <= report.through) pending.delete(seq);
    await this.outbox.confirm(report.peer, report.through, report.above.filter((seq) => pending.delete(seq)));
  }

  /** Re-publishes entries whose confirmation is overdue, oldest first. */
  private async republishDue(): Promise<void> {
    const now = Date.now();
    let budget = REPUBLISH_PER_TICK;
    for (const [peer, pending] of this.unconfirmed) {
      const overdue = () => {
        const due: number[] = [];
        for (const [seq, u] of pending) {
          if (due.length >= budget) break;
          if (u.at === 0 || now - u.at >= Math.min(REPUBLISH_AFTER_MS * 2 ** (u.tries - 1), REPUBLISH_CAP_MS)) due.push(seq);
        }
        return due;
      };
      if (overdue().length === 0) continue;
      const report = await this.probe(peer, this.incarnation).catch(() => null);
      if (report !== null) await this.confirmed(report);
      const due = overdue();
      budget -= due.length;
      if (due.length === 0) continue;
      const stored = await this.outbox.read(peer, due);
      const outgoing: Outgoing[] = [];
      due.forEach((seq, i) => {
        const value = stored[i];
        if (value === null || value === undefined) return void pending.delete(seq); // confirmed meanwhile
        outgoing.push({ peer, seq, op: JOURNAL_OPS[value[0]!] ?? 'records', body: value.subarray(1), records: pending.get(seq)?.records ?? 0 });
      });
      for (const o of outgoing) {
        const u = pending.get(o.seq)!;
        u.at = now;
        u.tries++;
      }
      await Promise.allSettled(outgoing.map((o) => this.send(o)));
    }
  }

  /** Restores sequences and the unconfirmed set from the outbox (re-published on the first tick). */
  private async loadOutbox(): Promise<void> {
    for (const node of this.ring.topology.nodes) {
      if (node.id === this.identity) continue;
      const pending = this.pendingOf(node.id);
      const { messages, lastSeq } = await this.outbox.load(node.id);
      for (const { seq, value } of messages) pending.set(seq, { at: 0, tries: 0, records: value[0] === 0 ? countRecords(value) : 1 });
      this.nextSeq.set(node.id, lastSeq + 1);
    }
  }
}

/** Records in a stored journal entry (for lag reporting after a restart). */
function countRecords(value: Buffer): number {
  try {
    return (JSON.parse(value.subarray(1).toString('utf8')) as { r: unknown[] }).r.length;
  } catch {
    return 0;
  }
}
