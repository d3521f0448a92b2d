// The cluster journal on NATS JetStream: one file-backed work-queue stream per topology,
// one subject and one durable pull consumer per node. A message is one journal entry from
// one sender to one peer; its headers say who sent it and its place in the sender's outbox.
// JetStream is the transport, not the durability point: the sender keeps every message in
// its outbox until the peer confirms it applied it (actors/cluster/replication.ts), because a
// nats-server that crashes can lose messages it already acknowledged.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders, TimeoutError, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { withinDeadline } from '../model/deadline.js';

/** What a journal message carries besides its body. */
export interface JournalEnvelope {
  sender: string;
  /** The sender's outbox incarnation: sequences restart only with a new one. */
  incarnation: string;
  seq: number;
  op: JournalOp;
}

/**
 * `records`: a journal entry (model/journal-entry). `delete`: a single-metric delete (JSON).
 * `nnt`: one metric's rollup records from /write/nnt (JSON). `checktags`: one check tag
 * update, sent to every node (JSON). The index is the op's byte in the outbox: never
 * reorder, only append.
 */
export const JOURNAL_OPS = ['records', 'delete', 'nnt', 'checktags'] as const;
export type JournalOp = (typeof JOURNAL_OPS)[number];

/** A peer's report of which of a sender's messages it has applied. */
export interface AppliedReport {
  peer: string;
  incarnation: string;
  /** Every seq up to and including this one is applied. */
  through: number;
  /** Applied seqs above `through` (a gap below them is still missing). */
  above: number[];
}

/** Messages fetched per pull; applied one at a time, in stream order. */
const PULL_BATCH = 256;
const WATCHDOG_MS = 3_000;

export class JournalStream {
  private readonly js: JetStreamClient;
  private readonly subs: Subscription[] = [];
  private messages: { stop(): void } | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly topologyHash: string,
    /** Made once: each jetstreamManager() call asks the server whether JetStream is on. */
    private readonly jsm: JetStreamManager,
    /** The longest a publish waits for JetStream's acknowledgement (config peerTimeoutMs). */
    private readonly timeoutMs: number,
  ) {
    this.js = jetstream(nc, { timeout: timeoutMs });
  }

  /** Connects to the topology's stream, creating it if needed. Every node does it at start. */
  static async open(nc: NatsConnection, topologyHash: string, timeoutMs: number): Promise<JournalStream> {
    const stream = new JournalStream(nc, topologyHash, await jetstreamManager(nc, { timeout: timeoutMs }), timeoutMs);
    await stream.ensureStream();
    return stream;
  }

  /**
   * Creates the stream unless it exists. Also called after failures: a nats-server that
   * lost its store (the outboxes still hold everything unconfirmed) starts empty.
   */
  private async ensureStream(): Promise<void> {
    try {
      await this.jsm.streams.info(this.streamName);
    } catch {
      await this.jsm.streams.add({
        name: this.streamName,
        subjects: [`${this.subjectPrefix}.>`],
        storage: StorageType.File,
        retention: RetentionPolicy.Workqueue,
        // Re-publishing within this window is deduplicated by message id.
        duplicate_window: 120 * 1e9,
      });
    }
  }

  private async ensureConsumer(identity: string): Promise<string> {
    const durable = durableName(identity);
    try {
      await this.jsm.consumers.info(this.streamName, durable);
    } catch {
      await this.jsm.consumers.add(this.streamName, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: this.subject(identity),
        // A message delivered to a node that then died is redelivered after this long.
        ack_wait: 10 * 1e9,
        max_ack_pending: PULL_BATCH * 4,
      });
    }
    return durable;
  }

  private get streamName(): string {
    return `FERRITE_${this.topologyHash.slice(0, 16)}`;
  }

  private get subjectPrefix(): string {
    return `ferrite.journal.${this.topologyHash.slice(0, 16)}`;
  }

  private subject(peer: string): string {
    return `${this.subjectPrefix}.${peer}`;
  }

  private appliedSubject(sender: string): string {
    return `ferrite.applied.${this.topologyHash.slice(0, 16)}.${sender}`;
  }

  /**
   * Publishes one message to `peer`'s journal; resolves on JetStream's acknowledgement and
   * rejects when none came within `timeoutMs`, all attempts included. While nats-server is
   * down or frozen the client buffers the request and nothing answers; the wait used to be
   * three full timeouts (the publish, then the stream lookup and creation of the retry below:
   * 15 s, issue 17), so a publish that timed out is not retried: the outbox re-publishes it.
   */
  async publish(peer: string, envelope: JournalEnvelope, body: Uint8Array): Promise<void> {
    const h = natsHeaders();
    h.set('Ferrite-Sender', envelope.sender);
    h.set('Ferrite-Incarnation', envelope.incarnation);
    h.set('Ferrite-Seq', String(envelope.seq));
    h.set('Ferrite-Op', envelope.op);
    const deadline = Date.now() + this.timeoutMs;
    const options = () => ({ headers: h, msgID: `${envelope.incarnation}.${peer}.${envelope.seq}`, timeout: Math.max(1, deadline - Date.now()) });
    const unacknowledged = () => new Error(`no acknowledgement from JetStream within ${this.timeoutMs} ms, the peerTimeoutMs setting`);
    const attempts = async () => {
      try {
        await this.js.publish(this.subject(peer), body, options());
      } catch (error) {
        if (error instanceof TimeoutError) throw error;
        // A fast failure: most likely a nats-server that lost its store, so no stream.
        await this.ensureStream();
        await this.js.publish(this.subject(peer), body, options());
      }
    };
    const work = attempts().catch((error: unknown) => {
      throw error instanceof TimeoutError ? unacknowledged() : error;
    });
    await withinDeadline(work, deadline, 'the journal publish', unacknowledged);
  }

  /**
   * Applies this node's journal, message by message in stream order, from its durable
   * consumer (so a node that was down resumes where it stopped). A message is acknowledged
   * only after `apply` resolves; a failed apply is redelivered.
   */
  async consume(identity: string, apply: (envelope: JournalEnvelope, body: Uint8Array) => Promise<void>, onError: (error: unknown) => void): Promise<void> {
    await this.ensureConsumer(identity);
    // The client keeps pulling from a consumer the server no longer has (a server that
    // lost its store): check now and then, and start over on a new one.
    this.watchdog = setInterval(() => {
      void this.pending(identity).then((n) => {
        if (n === null && !this.closed) this.messages?.stop();
      });
    }, WATCHDOG_MS);
    this.watchdog.unref();
    void (async () => {
      while (!this.closed) {
        try {
          await this.ensureStream();
          const consumer = await this.js.consumers.get(this.streamName, await this.ensureConsumer(identity));
          const messages = await consumer.consume({ max_messages: PULL_BATCH });
          this.messages = messages;
          // The iterator ends when the consumer goes away (a server that lost its store).
          for await (const msg of messages) {
            if (this.closed) break;
            await this.handle(msg, apply);
          }
        } catch (error) {
          if (this.closed) return;
          onError(error);
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
  }

  private async handle(msg: JsMsg, apply: (envelope: JournalEnvelope, body: Uint8Array) => Promise<void>): Promise<void> {
    const envelope = envelopeOf(msg);
    if (envelope === null) {
      msg.term(); // not ours: never redeliver it
      return;
    }
    try {
      await apply(envelope, msg.data);
      msg.ack();
    } catch (error) {
      msg.nak(1000);
      throw error;
    }
  }

  /** Messages waiting in this node's journal (not yet delivered or not yet acknowledged). */
  async pending(identity: string): Promise<number | null> {
    try {
      const info = await this.jsm.consumers.info(this.streamName, durableName(identity));
      return info.num_pending + info.num_ack_pending;
    } catch {
      return null;
    }
  }

  /** Tells `sender` what this node has applied of its messages (core NATS: lossy, repeated). */
  reportApplied(sender: string, report: AppliedReport): void {
    this.nc.publish(this.appliedSubject(sender), JSON.stringify(report));
  }

  /** Receives peers' applied reports about this node's messages. */
  onApplied(identity: string, handle: (report: AppliedReport) => void): void {
    const sub = this.nc.subscribe(this.appliedSubject(identity));
    this.subs.push(sub);
    void (async () => {
      for await (const msg of sub) {
        try {
          handle(msg.json<AppliedReport>());
        } catch {
          // A malformed report is ignored: the sender re-publishes until a good one comes.
        }
      }
    })();
  }

  close(): void {
    this.closed = true;
    if (this.watchdog !== null) clearInterval(this.watchdog);
    this.messages?.stop();
    for (const sub of this.subs) sub.unsubscribe();
  }
}

function durableName(identity: string): string {
  return `node_${identity.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

function envelopeOf(msg: JsMsg): JournalEnvelope | null {
  const h = msg.headers;
  const sender = h?.get('Ferrite-Sender');
  const incarnation = h?.get('Ferrite-Incarnation');
  const seq = Number(h?.get('Ferrite-Seq'));
  const op = h?.get('Ferrite-Op');
  if (!sender || !incarnation || !Number.isSafeInteger(seq) || !(JOURNAL_OPS as readonly (string | undefined)[]).includes(op)) return null;
  return { sender, incarnation, seq, op: op as JournalOp };
}
