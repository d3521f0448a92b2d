// The node: routes records to partition actors, keeps the ingest journal, answers
// reads by asking the owning partition. It is a plain object in front of the actors,
// not an actor itself: serialising every ingest request through one mailbox would
// allow only one journal write in flight and cap ingest far below the target.
import { randomUUID } from 'node:crypto';
import nact from 'nact';
import type { Logger } from 'pino';
import type { FerriteConfig } from '../model/config.js';
import { ferr, FerriteError } from '../model/errors.js';
import type { DataKind, IngestRecord } from '../model/ingest-record.js';
import { decodeJournalEntry, encodeJournalEntry } from '../model/journal-entry.js';
import type { Series } from '../model/series.js';
import type { TextReadOptions, TextRow } from '../model/text-read.js';
import { CF, decodeU64, journalKey, journalSeqOf, sealSeqKey, STATE_KEY } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import type { PartitionMsg, Reply } from './messages.js';
import type { MetricInfo } from './metric-info.js';
import { MetricRegistry } from './metric-registry.js';
import { spawnPartition, type PartitionRef } from './partition.js';
import type { BufferValue } from './window-buffer.js';

/** Partition queries wait this long; a partition slower than this is overloaded. */
const QUERY_TIMEOUT_MS = 60_000;
/** Journal entries truncated between compactions of the journal column family. */
const JOURNAL_COMPACT_EVERY = 5_000;

export interface NodeStats {
  recordsIngested: number;
  requestsIngested: number;
  journalEntriesReplayed: number;
}

export class FerriteNode {
  readonly registry: MetricRegistry;
  readonly stats: NodeStats = { recordsIngested: 0, requestsIngested: 0, journalEntriesReplayed: 0 };
  private readonly partitions: PartitionRef[] = [];
  private readonly system: any;
  /** Metrics whose name record is known to be on disk. */
  private readonly named = new Set<string>();
  private nextSeq = 1;
  /** Journal entries written but not yet handed to the partitions. */
  private readonly inflight = new Set<number>();
  private journalCut = 0;
  private journalCompactedAt = 0;
  private checkpointTimer: NodeJS.Timeout | null = null;
  private checkpointRunning: Promise<void> | null = null;
  private stopping = false;
  private fault: unknown = null;

  private constructor(
    readonly config: FerriteConfig,
    readonly store: Store,
    readonly identity: string,
    private readonly log: Logger,
    sealSeqs: number[],
  ) {
    this.registry = new MetricRegistry(config.partitions);
    this.system = nact.start();
    for (let index = 0; index < config.partitions; index++) {
      const deps = { index, store, config, sealSeq: sealSeqs[index] ?? 0, now: Date.now };
      this.partitions.push(spawnPartition(this.system, deps, { onFault: (p, e) => this.onPartitionFault(p, e) }));
    }
  }

  /** Opens the data directory, replays the journal, and starts the checkpoint timer. */
  static async start(config: FerriteConfig, log: Logger): Promise<FerriteNode> {
    const store = await Store.open(config.dataDir);
    const identity = await loadIdentity(store, config.nodeId);
    const sealSeqs: number[] = [];
    for (let p = 0; p < config.partitions; p++) {
      const raw = await store.get(CF.state, sealSeqKey(p));
      sealSeqs.push(raw === null ? 0 : decodeU64(raw));
    }
    const node = new FerriteNode(config, store, identity, log, sealSeqs);
    await node.replayJournal();
    node.checkpointTimer = setInterval(() => void node.checkpoint(), config.checkpointIntervalMs);
    node.checkpointTimer.unref();
    return node;
  }

  /**
   * Makes `records` durable (one journal WriteBatch) and hands them to their partitions.
   * Resolves only once the batch is in RocksDB, so an acknowledged write survives kill -9.
   */
  async ingest(records: IngestRecord<MetricInfo>[]): Promise<void> {
    if (this.stopping) throw ferr('FER_ERR_SHUTTING_DOWN');
    if (this.fault !== null) throw ferr('FER_ERR_OVERLOADED', 'a partition failed to store data; see the log');
    if (records.length === 0) return;
    const seq = this.nextSeq++;
    this.inflight.add(seq);
    try {
      const batch = this.store.batch();
      batch.put(CF.journal, journalKey(seq), encodeJournalEntry(records));
      const fresh = this.addNameRecords(batch, records);
      await batch.write();
      for (const key of fresh) this.named.add(key);
      this.dispatch(seq, records);
      this.stats.requestsIngested++;
      this.stats.recordsIngested += records.length;
    } catch (error) {
      throw error instanceof FerriteError ? error : new FerriteError('FER_ERR_STORAGE', [String(error)], { cause: error });
    } finally {
      this.inflight.delete(seq);
    }
  }

  /** True when this node has ever stored the metric. */
  async knows(metric: MetricInfo): Promise<boolean> {
    if (this.named.has(metric.key)) return true;
    const found = (await this.store.get(CF.metrics, metric.id)) !== null;
    if (found) this.named.add(metric.key);
    return found;
  }

  read(metric: MetricInfo, kind: DataKind, start: number, end: number): Promise<Series<BufferValue>> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'read', metric, kind, start, end, replyTo }));
  }

  readText(metric: MetricInfo, options: TextReadOptions): Promise<TextRow[]> {
    return this.ask(metric.partition, (replyTo) => ({ type: 'readText', metric, options, replyTo }));
  }

  /** Seals every open buffer and truncates the journal behind it. */
  async flush(): Promise<void> {
    await this.checkpointRunning;
    const dispatched = this.dispatchedWatermark();
    const lows = await Promise.all(this.partitions.map((_, p) => this.ask<number>(p, (replyTo) => ({ type: 'sealAll', replyTo }))));
    await this.truncateJournal(dispatched, lows);
  }

  /** Graceful stop: refuse new writes, seal all buffers, close RocksDB. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    try {
      if (this.fault === null) {
        await this.flush();
        // The journal is now empty: flushing and compacting leaves on disk only the
        // sealed blocks, not the WAL and journal entries that led to them.
        await this.store.flushAll();
        await this.store.compact(CF.journal);
      }
    } finally {
      nact.stop(this.system);
      await this.store.close();
    }
  }

  /** Seals what is due in every partition, then drops the journal entries no buffer needs. */
  async checkpoint(): Promise<void> {
    if (this.checkpointRunning !== null || this.stopping) return;
    this.checkpointRunning = (async () => {
      try {
        const dispatched = this.dispatchedWatermark();
        const lows = await Promise.all(this.partitions.map((_, p) => this.ask<number>(p, (replyTo) => ({ type: 'checkpoint', replyTo }))));
        await this.truncateJournal(dispatched, lows);
      } catch (error) {
        this.log.error({ err: error }, 'checkpoint failed');
      } finally {
        this.checkpointRunning = null;
      }
    })();
    await this.checkpointRunning;
  }

  /**
   * Everything below the cut is sealed: every entry up to `dispatched` was handed to the
   * partitions before they were asked (so their lows account for it), and none of their
   * buffers needs it. `dispatched` must be read before asking: an entry dispatched while
   * the partitions answer may sit in a buffer their lows did not see.
   */
  private async truncateJournal(dispatched: number, partitionLows: number[]): Promise<void> {
    // After a fault some applied records may be missing from buffers: keep the journal.
    if (this.fault !== null) return;
    const cut = Math.min(dispatched + 1, ...partitionLows);
    if (cut <= this.journalCut) return;
    await this.store.batch().deleteRange(CF.journal, journalKey(0), journalKey(cut)).write();
    this.journalCut = cut;
    // Range tombstones hide truncated entries but only compaction frees their bytes.
    if (cut - this.journalCompactedAt >= JOURNAL_COMPACT_EVERY) {
      this.journalCompactedAt = cut;
      await this.store.compact(CF.journal);
    }
  }

  private dispatchedWatermark(): number {
    let low = this.nextSeq;
    for (const seq of this.inflight) if (seq < low) low = seq;
    return low - 1;
  }

  private dispatch(seq: number, records: IngestRecord<MetricInfo>[]): void {
    const byPartition = new Map<number, IngestRecord<MetricInfo>[]>();
    for (const r of records) {
      let list = byPartition.get(r.metric.partition);
      if (list === undefined) byPartition.set(r.metric.partition, (list = []));
      list.push(r);
    }
    for (const [p, list] of byPartition) nact.dispatch(this.partitions[p]!, { type: 'apply', seq, records: list });
  }

  private addNameRecords(batch: ReturnType<Store['batch']>, records: IngestRecord<MetricInfo>[]): string[] {
    const fresh: string[] = [];
    for (const r of records) {
      const m = r.metric;
      if (this.named.has(m.key) || fresh.includes(m.key)) continue;
      fresh.push(m.key);
      const record = { account_id: m.accountId, uuid: m.uuid, check_name: m.checkName, metric_name: m.name.canonical };
      batch.put(CF.metrics, m.id, Buffer.from(JSON.stringify(record)));
    }
    return fresh;
  }

  private async replayJournal(): Promise<void> {
    let last = 0;
    for await (const { key, value } of this.store.scan(CF.journal, {})) {
      const seq = journalSeqOf(key);
      const entry = decodeJournalEntry(value);
      const metrics = entry.metrics.map((m) => {
        const r = this.registry.intern(m.accountId, m.uuid, m.checkName, m.canonical);
        if (!r.ok) throw new Error(`BUG: journal entry ${seq} holds an invalid metric name: ${r.reason}`);
        this.named.add(r.metric.key);
        return r.metric;
      });
      const records = entry.records.map((r) => ({ ...r, metric: metrics[r.metric]! }) as IngestRecord<MetricInfo>);
      this.dispatch(seq, records);
      this.stats.journalEntriesReplayed++;
      last = seq;
    }
    this.nextSeq = last + 1;
    if (last > 0) this.log.info({ entries: this.stats.journalEntriesReplayed, lastSeq: last }, 'journal replayed');
  }

  private ask<T>(partition: number, build: (replyTo: any) => PartitionMsg): Promise<T> {
    return (nact.query(this.partitions[partition]!, build, QUERY_TIMEOUT_MS) as Promise<Reply<T>>).then(
      (reply) => {
        if (reply.ok) return reply.value;
        throw reply.error;
      },
      (error: unknown) => {
        throw ferr('FER_ERR_OVERLOADED', `partition ${partition} did not answer: ${String(error)}`);
      },
    );
  }

  private onPartitionFault(partition: number, error: unknown): void {
    // Data the partition failed to take is still in the journal; refusing further writes
    // keeps it there until an operator restarts the node, which replays it.
    this.fault ??= error;
    this.log.error({ err: error, partition }, 'partition failed to apply records; refusing writes until restart');
  }
}

async function loadIdentity(store: Store, configured: string | null): Promise<string> {
  const stored = await store.get(CF.state, STATE_KEY.nodeId);
  if (stored !== null && configured === null) return stored.toString('utf8');
  const identity = configured ?? randomUUID();
  if (stored === null || stored.toString('utf8') !== identity) {
    await store.batch().put(CF.state, STATE_KEY.nodeId, Buffer.from(identity)).write();
  }
  return identity;
}
