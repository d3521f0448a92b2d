// Replication between owners. A write's records for metrics other nodes own go into this
// node's outbox (in the same RocksDB batch as its local journal entry) and are published
// to each owner's JetStream journal; the client is answered after both. An outbox entry
// stays until its peer reports it applied; entries not confirmed in time are re-published
// (with backoff), so neither a crashed peer nor a nats-server that lost acknowledged
// messages loses data. Receivers remember, per sender incarnation, which messages they
// applied, in the same batch as the data: re-delivery never applies anything twice.
//
// During a rebalance (actors/cluster/rebalance.ts) a node is in a *window* of two topologies,
// the old one and the next one, from its activation until the rebalance completes:
// - writes go to the owners under both: before the switch, because the next owners must get
//   every write the walks do not copy; after it until every node has switched (`oldInUse`),
//   because nodes not yet switched still read from the old owners;
// - the node consumes both topologies' journal streams, so a peer may reach it on either;
// - a peer of the old topology gets its messages on the old stream while old writes go on (it
//   consumes that one from its start until its own rebalance completes), a peer only in the
//   next topology on the next stream (it consumes that one, running under it, or since its
//   activation). Applied reports go back on the stream a message came by.
// Per-peer sequences stay one series: a receiver's applied marks are per sender incarnation,
// whatever the stream, so a message re-published on the other stream is recognised.
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

/** One topology of a rebalance window: its ring, its journal stream, its owners (cached). */
interface Side {
  ring: Ring;
  journal: JournalStream;
  owners: Map<string, string[]>;
  ids: Set<string>;
}

/** A rebalance under way on this node (see the top of this file). */
interface Window {
  old: Side;
  next: Side;
  /** True once the node runs under `next` (ring and journal are next's). */
  switched: boolean;
  /** Writes still go to the old owners and records for them are still kept: until every node switched. */
  oldInUse: boolean;
  /**
   * The last message staged for each peer when dual writes began: everything up to it was
   * routed under the old topology alone. Until the peers confirmed it, an old owner's walk
   * could miss it (`flushed`).
   */
  barrier: Map<string, number>;
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
  /** The rebalance under way (null: none). */
  private window: Window | null = null;
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
    this.listen(this.journal);
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
    this.window?.old.journal.close();
    this.window?.next.journal.close();
  }

  /**
   * A rebalance to `ring` begins (or resumes, not switched): writes go to its owners too, and
   * nodes only in it get theirs on `journal`, its stream. What the outbox still holds for those
   * (from an earlier, interrupted rebalance) goes out again. The barrier is taken in the same
   * synchronous step as the window is installed: every message staged before was routed
   * under the old topology alone, every one after under both.
   */
  async beginNext(ring: Ring, journal: JournalStream): Promise<void> {
    // A window left from the rebalance before (its end still draining) or an aborted one goes first.
    if (this.window?.switched) this.endWindow();
    else this.endNext(false);
    const next = sideOf(ring, journal);
    await this.loadPeers([...next.ids].filter((id) => !this.ring.topology.nodes.some((n) => n.id === id)));
    const barrier = new Map(this.ring.topology.nodes.filter((n) => n.id !== this.identity).map((n) => [n.id, this.lastStaged(n.id)]));
    this.window = { old: sideOf(this.ring, this.journal), next, switched: false, oldInUse: true, barrier };
    this.listen(journal);
  }

  /**
   * At start, a node that had switched in a rebalance still under way (it runs under the next
   * topology already): the old topology's side comes back, to consume its stream and, unless
   * the node is past its cleanup (`oldInUse` false), to keep writing to its owners.
   */
  async resumeSwitched(oldRing: Ring, oldJournal: JournalStream, oldInUse: boolean): Promise<void> {
    const old = sideOf(oldRing, oldJournal);
    await this.loadPeers([...old.ids].filter((id) => !this.ring.topology.nodes.some((n) => n.id === id)));
    this.window = { old, next: sideOf(this.ring, this.journal), switched: true, oldInUse, barrier: new Map() };
    this.listen(oldJournal);
  }

  /** The rebalance's other topology's stream (null: no rebalance): consumed beside the running one. */
  otherJournal(): JournalStream | null {
    const w = this.window;
    if (w === null) return null;
    return w.switched ? w.old.journal : w.next.journal;
  }

  /**
   * True once every peer confirmed what this node staged before its dual writes began: from
   * then on, every write this node routed without the next owners is on its old owners, where
   * their walks read it.
   */
  flushed(): boolean {
    const w = this.window;
    if (w === null) return false;
    for (const [peer, seq] of w.barrier) if (!this.confirmedThrough(peer, seq)) return false;
    return true;
  }

  /**
   * Stops writing to the old topology's owners and keeping records for metrics only they own:
   * every node has switched, so none reads from them any more (the rebalance's cleanup).
   */
  stopOldWrites(): void {
    if (this.window !== null) this.window.oldInUse = false;
  }

  /**
   * Stops writing to the next topology's owners. On an abort (`drop`) what the outbox holds
   * for nodes only in that topology is dropped: they are not part of the cluster after all.
   */
  endNext(drop = true): void {
    const w = this.window;
    if (w === null || w.switched) return;
    this.window = null;
    w.next.journal.close();
    if (drop) this.dropPeers([...w.next.ids].filter((id) => !w.old.ids.has(id)));
  }

  /**
   * The rebalance completed: the old topology's stream is closed, and what the outbox holds
   * for nodes the running topology left out is dropped (they own nothing any more).
   */
  endWindow(): void {
    const w = this.window;
    if (w === null || !w.switched) return;
    this.window = null;
    w.old.journal.close();
    this.dropPeers([...w.old.ids].filter((id) => !w.next.ids.has(id) && id !== this.identity));
  }

  /** Forgets every message staged for `peers` (they leave the cluster). */
  private dropPeers(peers: string[]): void {
    for (const peer of peers) {
      this.unconfirmed.delete(peer);
      const last = this.lastStaged(peer);
      if (last > 0) void this.outbox.confirm(peer, last, []).catch((e) => this.log.warn({ err: e, peer }, 'dropping the outbox of a node that left failed'));
    }
  }

  /** Loads sequences and unconfirmed messages of peers not loaded at start (re-published on the next tick). */
  private async loadPeers(peers: string[]): Promise<void> {
    for (const peer of peers) {
      if (this.nextSeq.has(peer) || peer === this.identity) continue;
      const pending = this.pendingOf(peer);
      const { messages, lastSeq } = await this.outbox.load(peer);
      for (const { seq, value } of messages) pending.set(seq, { at: 0, tries: 0, records: value[0] === 0 ? countRecords(value) : 1 });
      this.nextSeq.set(peer, lastSeq + 1);
    }
  }

  /** Applied reports may come back on `journal` too. */
  private listen(journal: JournalStream): void {
    journal.onApplied(this.identity, (report) => void this.confirmed(report).catch((e) => this.log.error({ err: e }, 'outbox confirmation failed')));
  }

  /**
   * The rebalance's switch: the next topology becomes this replication's topology and its
   * stream the one it publishes to and receives from. Sequences, the outbox and applied marks
   * carry on unchanged; the old topology's stream stays open (see the top of this file).
   */
  switchToNext(): void {
    const w = this.window;
    if (w === null) throw new Error('BUG: switchToNext without a next topology');
    if (w.switched) return;
    this.ring = w.next.ring;
    this.journal = w.next.journal;
    this.owners.clear();
    w.switched = true;
  }

  /** Every node a write may go to: the running topology's, and the other one's during a rebalance. */
  peers(): string[] {
    const ids = new Set(this.ring.topology.nodes.map((n) => n.id));
    const other = this.otherSide();
    if (other !== null) for (const id of other.ids) ids.add(id);
    ids.delete(this.identity);
    return [...ids];
  }

  /** The topology written to besides the running one (null: none now). */
  private otherSide(): Side | null {
    const w = this.window;
    if (w === null) return null;
    if (!w.switched) return w.next;
    return w.oldInUse ? w.old : null;
  }

  /**
   * Whether records for `metric` belong here: this node owns it under the running topology,
   * or under the other one of a rebalance while that one is in use. After a switch the node
   * drops the others (they would bring back what its cleanup deletes).
   */
  accepts(metric: Pick<MetricInfo, 'key'>): boolean {
    if (this.owns(metric)) return true;
    const other = this.otherSide();
    return other !== null && ownersOn(other, metric.key).includes(this.identity);
  }

  /** Where a metric's writes go: its owners, and during a rebalance its owners under the other topology too. */
  targetsOf(metric: Pick<MetricInfo, 'key'>): string[] {
    const ids = this.ownersOf(metric);
    const other = this.otherSide();
    if (other === null) return ids;
    return [...new Set([...ids, ...ownersOn(other, metric.key)])];
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
    await this.streamFor(o.peer).publish(o.peer, { sender: this.identity, incarnation: this.incarnation, seq: o.seq, op: o.op }, o.body);
  }

  /** The stream `peer` surely consumes (see the top of this file). */
  private streamFor(peer: string): JournalStream {
    const w = this.window;
    if (w === null) return this.journal;
    if (w.old.ids.has(peer) && (w.oldInUse || !w.next.ids.has(peer))) return w.old.journal;
    return w.next.journal;
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
    await this.loadPeers(this.ring.topology.nodes.map((n) => n.id).filter((id) => id !== this.identity));
  }
}

function sideOf(ring: Ring, journal: JournalStream): Side {
  return { ring, journal, owners: new Map(), ids: new Set(ring.topology.nodes.map((n) => n.id)) };
}

/** A metric's owners on `side`, primary first (cached). */
function ownersOn(side: Side, key: string): string[] {
  let ids = side.owners.get(key);
  if (ids === undefined) {
    ids = ownersOf(side.ring, key).map((n) => n.id);
    side.owners.set(key, ids);
  }
  return ids;
}

/** Records in a stored journal entry (for lag reporting after a restart). */
function countRecords(value: Buffer): number {
  try {
    return (JSON.parse(value.subarray(1).toString('utf8')) as { r: unknown[] }).r.length;
  } catch {
    return 0;
  }
}
