// The node: ingest → journal → hand the samples to their shards (actors/node/shards.ts), and
// what must stay in step with the journal (replication, checkpoints, deletes). Start-up is
// actors/boot.ts; questions about metrics go to `shards`, ownership to `routing`. It does no
// per-sample work on a standalone node: parsed columns pass through to the shard workers.
import { FetchAnswers } from '../coordinators/fetch-answers.js';
import { addDiskUse, type DiskUse } from '../../storage/figures.js';
import { prepareDestination, writeManifest, type BackupManifest } from '../../storage/backup.js';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { FerriteConfig } from '../../model/config.js';
import { ferr, FerriteError } from '../../model/errors.js';
import { IngestBatch } from '../../model/ingest-batch.js';
import type { IngestRecord } from '../../model/ingest-record.js';
import { decodeJournal, decodeJournalEntry, encodeJournalEntry, journalForm, type DecodedJournal, type JournalEntry, type RawContext, type RawFormat } from '../../model/journal-entry.js';
import { decodeAccumulator, encodeAccumulator, type RollupAccumulator } from '../../model/rollup/accumulator.js';
import { buildRing, ownersOf, type Ring, type Topology } from '../../model/topology/index.js';
import type { AccountId } from '../../model/types.js';
import type { ListedMetric } from '../shard/messages.js';
import type { CheckTagStore } from '../../storage/check-tags.js';
import type { NodeBatch, NodeStorage } from '../../storage/node-storage.js';
import { Gossip } from '../../transport/gossip.js';
import { AdjustableClock, systemClock, type Clock } from '../../model/clock.js';
import { JournalStream, type JournalEnvelope, type JournalOp } from '../../transport/journal-stream.js';
import { Rpc } from '../../transport/rpc.js';
import { IngestAdmission } from './admission.js';
import { CheckpointHealth } from './checkpoint-health.js';
import { ClusterRouting } from '../cluster/routing.js';
import type { TopologyLibrary } from '../cluster/topologies.js';
import type { PeerRebalanceReport, Rebalance, RebalanceStateName } from '../cluster/rebalance.js';
import { RebuildWalks, type Rebuild, type RebuildWalkStatus } from '../cluster/rebuild.js';
import type { Joining } from '../cluster/joining.js';
import { gainingOwners, relocate, type RelocationDeps, type RelocationFigures } from '../cluster/relocation.js';
import { updatesOf } from '../../model/check-tags.js';
import { IngestPool, type LaneParse, type LaneSamples } from '../ingest/pool.js';
import type { Declarations } from '../ingest/wire.js';
import { parseMetricListBody, parseTsvBody } from '../ingest/raw-bodies.js';
import { portableIdentity, type MetricInfo, type PortableIdentity } from '../../model/metric-info.js';
import type { DeleteOutcome, DeleteTarget } from '../../model/delete.js';
import type { AppliedUpdate, JournaledCheckTags, JournaledDelete, JournaledRollups, Outgoing, Replication } from '../cluster/replication.js';
import { MetricRegistry } from './metric-registry.js';
import { SeriesLimits, type Admission } from './series-limits.js';
import { memoryLimitBytes } from '../../model/resident-memory.js';
import type { ShardSet } from './shards.js';
import type { NodeApi } from '../api.js';



/** `ctx` with the keys of refused series whose samples a parse left out. */
function limitedContext(ctx: RawContext, limited: readonly string[]): RawContext {
  return limited.length === 0 ? ctx : { ...ctx, limited };
}

/** A failure to journal a write, as the error its request answers with. */
function asStorageError(error: unknown): FerriteError {
  return error instanceof FerriteError ? error : new FerriteError('FER_ERR_STORAGE', [String(error)], { cause: error });
}

/** Journal entries truncated between compactions of the journal column family. */
const JOURNAL_COMPACT_EVERY = 5_000;

/** One request's accepted samples: a batch of the node's metrics, or a parse lane's columns. */
export type Samples = IngestBatch<MetricInfo> | LaneSamples;

/** A write body parsed with series limits applied: `ctx` is what to journal it with. */
export interface RawParse extends LaneParse {
  ctx: RawContext;
  /** The series admitted for it (released once its samples are handed over), or null. */
  admission: Admission | null;
}

/** Records with the series limits applied: `refused[i]` is why records[i] must not be stored (undefined: store it). */
export interface ScreenedRecords {
  refused: (string | undefined)[];
  admission: Admission | null;
}

export interface NodeStats {
  recordsIngested: number;
  requestsIngested: number;
  journalEntriesReplayed: number;
  /** Records applied from other nodes' journal messages. */
  journalRecordsApplied: number;
}

/** What actors/boot.ts opens and wires before a node can be built. */
export interface NodeParts {
  config: FerriteConfig;
  storage: NodeStorage;
  identity: string;
  /** The ring of the current topology (a ring of one when standalone). */
  ring: Ring;
  log: Logger;
  /** The cluster transport; null on a standalone node. */
  nats: NatsConnection | null;
  /** Replication to other owners; null unless the topology has several nodes. */
  replication: Replication | null;
  /** Requests to other nodes (remote streams, search fan-out); null unless clustered. */
  rpc: Rpc | null;
  /** The shard workers: every metric's data, index and upkeep. */
  shards: ShardSet;
  /** The current topology and those loaded for a rebalance. */
  topologies: TopologyLibrary;
  /** The rebalance this node is in, if any. */
  rebalance: Rebalance;
  /** This node's rebuild from its peers, if one was asked for. */
  rebuild: Rebuild;
  /** This node's join of a cluster in a rebalance, if one was asked for. */
  joining: Joining;
}

/** One shard as /state shows it. */
interface ShardReport {
  series: number;
  heap_used_bytes: number;
  /** V8 heap the worker holds from the OS (used, garbage and room to allocate): part of RSS. */
  heap_committed_bytes: number;
  array_buffers_bytes: number;
  index_metrics: number;
  blocks_merged: number;
  open_buffers: number;
  open_buffer_bytes: { allocated: number; used: number };
  histograms_aged_to: number | null;
}

export class FerriteNode implements NodeApi {
  readonly config: FerriteConfig;
  /** The node's own store: journal, outbox, check tags, identity. */
  readonly storage: NodeStorage;
  readonly identity: string;
  /** The ring the node runs under; replaced when a rebalance switches topology. */
  ring: Ring;
  /** Requests to other nodes, on the running topology's subjects; replaced at a rebalance's switch. */
  rpc: Rpc | null;
  /** Answers other nodes' requests on an Rpc (actors/boot.ts wires the coordinators' answerers). */
  private serveRpc: ((rpc: Rpc) => void) | null = null;
  /**
   * During a rebalance: requests on the other topology's subjects (the next one's until the
   * switch, the old one's after it), answered like those on `rpc`, so peers on either reach it.
   */
  private otherRpc: Rpc | null = null;
  /** Journal messages are applied one at a time, whichever stream they came by (the applied marks are read, then written). */
  private applying: Promise<void> = Promise.resolve();
  private readonly log: Logger;
  private readonly nats: NatsConnection | null;
  private readonly replication: Replication | null;
  /** Names and places metrics that requests name (reads, record writers); holds no state of theirs. */
  readonly registry: MetricRegistry;
  readonly stats: NodeStats = { recordsIngested: 0, requestsIngested: 0, journalEntriesReplayed: 0, journalRecordsApplied: 0 };
  /** The shards: every question about a metric's data or the index. */
  readonly shards: ShardSet;
  /** Who owns a metric, and asking its owners. */
  routing: ClusterRouting;
  /** The current topology and those loaded for a rebalance. */
  readonly topologies: TopologyLibrary;
  /** The rebalance this node is in, if any (`/rebalance/*`). */
  readonly rebalance: Rebalance;
  /** This node's rebuild from its peers (`/state` `rebuild`). */
  readonly rebuild: Rebuild;
  /** This node's join of a cluster in a rebalance (`/state` `join`; http/join-forward.ts). */
  readonly joining: Joining;
  /** The walks this node runs for peers that rebuild. */
  readonly rebuildWalks: RebuildWalks;
  private nextSeq = 1;
  /** Journal entries written but not yet handed to the shards. */
  private readonly inflight = new Set<number>();
  private journalCut = 0;
  private journalCompactedAt = 0;
  private checkpointTimer: NodeJS.Timeout | null = null;
  private retentionTimer: NodeJS.Timeout | null = null;
  private retentionRunning: Promise<void> | null = null;
  private checkpointRunning: Promise<void> | null = null;
  /** Backups in progress: the journal is not cut while one copies the stores. */
  private backupsRunning = 0;
  private stopping = false;
  gossip: Gossip;
  /** The clock gossip reads (moved forward by tests when `testClock` is set). */
  readonly clock: Clock;
  /** Check tags (`/meta/check/tag`), kept on every node. */
  readonly checkTags: CheckTagStore;
  private fault: unknown = null;
  /** Shards whose worker died and is being restarted: writes wait until they have replayed the journal. */
  private readonly recovering = new Set<number>();
  readonly checkpoints: CheckpointHealth;
  /** Parses write bodies, on worker threads when configured. */
  readonly ingestPool: IngestPool;
  /** Load shedding for writes (http/server.ts asks it before a write body is read). */
  readonly admission: IngestAdmission;
  /** Series limits per account and check (cardinality control). */
  readonly limits: SeriesLimits;
  /** Whole `/fetch` answers kept for the next identical request (http/fetch.ts). */
  readonly fetchAnswers: FetchAnswers;

  constructor(parts: NodeParts) {
    const { config, storage, identity, ring, log, nats, replication, rpc, shards, topologies, rebalance, rebuild, joining } = parts;
    this.topologies = topologies;
    this.rebuild = rebuild;
    this.joining = joining;
    this.rebuildWalks = new RebuildWalks((target, figures, aborted) => this.walkFor(target, figures, aborted), () => this.metricCount(), log);
    this.rebalance = rebalance;
    this.config = config;
    this.storage = storage;
    this.identity = identity;
    this.ring = ring;
    this.log = log;
    this.nats = nats;
    this.replication = replication;
    this.rpc = rpc;
    this.shards = shards;
    this.clock = config.testClock ? new AdjustableClock() : systemClock;
    this.gossip = new Gossip(nats, identity, ring.topology, this.clock);
    this.gossip.rebuilding = rebuild.active;
    this.checkpoints = new CheckpointHealth(log);
    this.admission = new IngestAdmission({ maxBytes: config.maxWriteBytesInFlight, maxPendingRecords: config.maxPendingRecords, maxQueueMs: config.writeQueueMs, latencyBudgetMs: config.writeLatencyBudgetMs, latencyFloorWrites: 2 * config.ingestWorkers + 2, memoryPressureShare: config.memoryPressureShare, memoryLimitBytes: memoryLimitBytes(config.memoryLimitMb) });
    this.checkTags = storage.checkTags;
    this.registry = new MetricRegistry(config.partitions);
    this.limits = new SeriesLimits(config.maxSeriesPerAccount, config.maxSeriesPerCheck, shards);
    this.fetchAnswers = new FetchAnswers(config.fetchCacheBytes);
    // Standalone, parsed columns pass through to the shards; a cluster member routes records to owners.
    const declare = replication === null ? (lane: number, epoch: number, fresh: readonly Declarations[]) => shards.declare(lane, epoch, fresh) : null;
    this.ingestPool = new IngestPool(this.registry, { workers: config.ingestWorkers, partitions: config.partitions, shards: shards.count, declare, screen: (refuse) => this.limits.screen(refuse) });
    this.routing = new ClusterRouting(identity, ring, this.gossip, replication, rpc, config.peerTimeoutMs);
  }

  /** What shards report without being asked (boot.ts wires them here). */
  onShardApplied(records: number): void {
    this.admission.applied(records);
  }

  /** Replays the journal, joins the cluster journal, and starts the checkpoint and retention timers. */
  async begin(): Promise<void> {
    this.gossip.start();
    await this.replayJournal();
    if (this.replication !== null) await this.startReplication(this.replication);
    await this.rebalance.attach({
      started: (next) => this.beginDualWrites(next),
      resumedSwitched: (old, state) => this.resumeSwitched(old, state),
      stopped: async () => {
        this.replication?.endNext();
        this.stopOtherRpc();
      },
      flushed: () => this.replication?.flushed() ?? true,
      peerStates: (next) => this.peerRebalanceStates(next),
      peersLoaded: (next) => this.peersLoaded(next),
      switchTo: (next) => this.switchTopology(next),
      cleanup: (next) => this.dropNotOwned(next),
      relocate: (next, aborted, figures) => this.relocateTo(next, aborted, figures),
      metricCount: () => this.metricCount(),
      delivered: (next) => this.deliveredTo(next),
      finished: () => this.endRebalanceWindow(),
    });
    this.rebuild.attach({
      peers: () => this.ring.topology.nodes.map((n) => n.id).filter((id) => id !== this.identity),
      send: (peer, run) => this.callPeer<RebuildWalkStatus>(peer, 'rebuild_send', { target: this.identity, run }),
      status: (peer, run) => this.callPeer<RebuildWalkStatus>(peer, 'rebuild_status', { target: this.identity, run }),
      finished: () => {
        this.gossip.rebuilding = false;
      },
    });
    this.checkpointTimer = setInterval(() => void this.checkpoint(), this.config.checkpointIntervalMs);
    this.checkpointTimer.unref();
    this.retentionTimer = setInterval(() => void this.sweepRetention(), this.config.retentionSweepIntervalMs);
    this.retentionTimer.unref();
  }

  /**
   * Makes `records` durable and hands them to their partitions: this node's records in one
   * journal WriteBatch, with the outbox entries of records other nodes own. Resolves once
   * the batch is in RocksDB and (in a cluster) JetStream acknowledged every outbox entry,
   * so an acknowledged write survives kill -9 of this node the next instant.
   */
  ingest(records: IngestRecord<MetricInfo>[], admission: Admission | null = null): Promise<void> {
    return this.ingestBatch(IngestBatch.of(records), null, admission);
  }

  /**
   * As `ingest`, for a body parsed straight into columns. `rawEntry` is the request body
   * as a journal entry (model/journal-entry.ts): a standalone node journals it as it is,
   * a cluster member journals only its own records. `admission` (series limits) is released
   * once the samples are handed to the shards, or failed to be.
   */
  async ingestBatch(batch: Samples, rawEntry: Buffer | null, admission: Admission | null = null): Promise<void> {
    try {
      await this.ingestSamples(batch, rawEntry);
    } finally {
      admission?.release();
    }
  }

  /**
   * Parses a write body on a parse lane (or here), leaving out the samples of series a limit
   * refuses: their lines become errors naming the limit. With limits on, series the body names
   * for the first time are decided on (actors/node/series-limits.ts); if any is refused, the
   * lane parses the body again knowing it, so the samples and the journaled context agree.
   */
  async parseRaw(format: RawFormat, ctx: RawContext, body: Buffer): Promise<RawParse> {
    if (!this.limits.enabled) return { ...(await this.ingestPool.parse(format, ctx, body)), ctx, admission: null };
    const generation = this.limits.generation;
    const first = await this.ingestPool.parse(format, ctx, body, { limits: { generation } });
    // Series other nodes own are theirs to limit (a cluster member journals them on).
    const admission = await this.limits.admit(first.candidates.filter((c) => this.routing.owns(c)));
    try {
      this.ingestPool.verdict(first, generation, admission.refused);
      if (admission.refused.size === 0) return { ...first, ctx: limitedContext(ctx, first.limited), admission };
      const second = await this.ingestPool.parse(format, ctx, first.body, { lane: first.lane, limits: { generation, refuse: [...admission.refused] } });
      return { ...second, ctx: limitedContext(ctx, second.limited), admission };
    } catch (error) {
      admission.release();
      throw error;
    }
  }

  /**
   * Series limits for records resolved on the main thread (JSON writers, remote write, OTLP,
   * OpenTSDB, carbon): which records belong to refused series. The caller stores the others
   * with `ingest(kept, admission)`.
   */
  async screenRecords(records: readonly { metric: MetricInfo }[]): Promise<ScreenedRecords> {
    if (!this.limits.enabled) return { refused: [], admission: null };
    const first = this.limits.screen();
    const screened = records.map((r) => first.screen({ ok: true, metric: r.metric }));
    const admission = await this.limits.admit(first.candidates.filter((c) => this.routing.owns(c)));
    first.settle(admission);
    const refused = screened.map((s, i) => (s.ok ? admission.refused.get(records[i]!.metric.key) : s.reason));
    return { refused, admission };
  }

  private async ingestSamples(batch: Samples, rawEntry: Buffer | null): Promise<void> {
    this.checkWritable();
    if (batch.size === 0) return;
    const replication = this.replication;
    const outgoing: Outgoing[] = [];
    if (replication === null) await this.commit(batch, rawEntry, () => undefined);
    else if (!(batch instanceof IngestBatch)) throw new Error('BUG: a cluster member got lane columns to route');
    else {
      const { local, remote } = replication.route([...batch.records()]);
      await this.commit(IngestBatch.of(local), null, (wb) => {
        for (const [peer, list] of remote) outgoing.push(replication.stage(wb, peer, 'records', encodeJournalEntry(list), list.length));
      });
    }
    this.stats.requestsIngested++;
    this.stats.recordsIngested += batch.size;
    if (outgoing.length > 0) await replication!.publish(outgoing);
  }

  /**
   * Applies one message of this node's cluster journal exactly like a local write, marking
   * it applied in the same batch; a message applied before is only reported again.
   */
  applyJournal(envelope: JournalEnvelope, body: Uint8Array, stream: JournalStream): Promise<void> {
    const done = this.applying.then(() => this.applyOne(envelope, body, stream));
    this.applying = done.catch(() => undefined);
    return done;
  }

  private async applyOne(envelope: JournalEnvelope, body: Uint8Array, stream: JournalStream): Promise<void> {
    const replication = this.replication!;
    this.checkWritable();
    if (!replication.alreadyApplied(envelope)) {
      if (envelope.op === 'delete') await this.applyJournaledDelete(body);
      if (envelope.op === 'nnt') await this.applyJournaledRollups(body);
      if (envelope.op === 'checktags') await this.applyJournaledCheckTags(body);
      const received = envelope.op === 'records' ? this.recordsOf(decodeJournalEntry(body)) : [];
      for (const r of received) if (!replication.accepts(r.metric)) replication.misdirected++;
      const records = this.rebalance.hasSwitched() ? received.filter((r) => replication.accepts(r.metric)) : received;
      let applied: AppliedUpdate | null = null;
      await this.commit(IngestBatch.of(records), null, (batch) => (applied = replication.markApplied(batch, envelope)));
      replication.installApplied(applied!);
      this.stats.journalRecordsApplied += records.length;
      if (this.rebalance.report().next !== '-') this.rebalance.progress.applied(envelope.op === 'records' ? records.length : 1, body.byteLength);
    }
    // On the stream it came by: the sender listens there (it may not listen on the other any more).
    stream.reportApplied(envelope.sender, replication.appliedReport(envelope.incarnation));
  }

  /** Replication figures for /state (null when standalone). */
  async replicationState(): Promise<Record<string, unknown> | null> {
    const r = this.replication;
    if (r === null) return null;
    return { peers: r.lag(), journal_pending: await r.journal.pending(this.identity), misdirected: r.misdirected, incarnation: r.incarnation };
  }

  /**
   * Journals a single-metric delete to the metric's other owners (x-svc-full-delete: 1),
   * after which it is applied here. Resolves once JetStream acknowledged every message.
   */
  async journalDelete(metric: MetricInfo, kind: DeleteTarget, before: number, periods: number[] | null): Promise<void> {
    const doc: JournaledDelete = { ...portableIdentity(metric), kind, before, periods };
    await this.journalToOtherOwners(metric, 'delete', doc, 1);
  }

  /**
   * /write/nnt: rollup records are stored on this node if it owns the metric and journaled to
   * its other owners. Resolves once stored here and acknowledged by JetStream.
   */
  async writeNnt(metric: MetricInfo, records: [number, RollupAccumulator][]): Promise<void> {
    const doc: JournaledRollups = { ...portableIdentity(metric), records: records.map(([ts, acc]) => [ts, encodeAccumulator(acc).toString('base64')]) };
    await this.journalToOtherOwners(metric, 'nnt', doc, records.length);
    if (!this.routing.owns(metric)) return;
    await this.shards.about(metric, 'writeRollups', records);
  }

  /**
   * Stages `doc` in `batch` for every other node of the topology (check tags live on every
   * node); the caller writes the batch, then calls the returned function to publish.
   */
  stageForEveryNode(batch: NodeBatch, op: JournalOp, doc: object): () => Promise<void> {
    const replication = this.replication;
    if (replication === null) return async () => {};
    const body = Buffer.from(JSON.stringify(doc));
    const outgoing = replication.peers().map((peer) => replication.stage(batch, peer, op, body, 1));
    return () => replication.publish(outgoing);
  }

  /** Puts `doc` in the outbox of every other owner of `metric`, then publishes it (standalone: nothing). */
  private async journalToOtherOwners(metric: MetricInfo, op: JournalOp, doc: object, records: number): Promise<void> {
    const replication = this.replication;
    if (replication === null) return;
    const peers = replication.targetsOf(metric).filter((id) => id !== this.identity);
    if (peers.length === 0) return;
    const body = Buffer.from(JSON.stringify(doc));
    const batch = this.storage.batch();
    const outgoing = peers.map((peer) => replication.stage(batch, peer, op, body, records));
    await batch.write();
    await replication.publish(outgoing);
  }

  /** A journaled document and the metric it names (null: not a valid metric name here). */
  private journaledDoc<T extends PortableIdentity>(body: Uint8Array): { doc: T; metric: MetricInfo } | null {
    const doc = JSON.parse(Buffer.from(body).toString('utf8')) as T;
    const found = this.registry.intern(doc.accountId, doc.uuid, doc.checkName, doc.canonical);
    return found.ok ? { doc, metric: found.metric } : null;
  }

  private async applyJournaledRollups(body: Uint8Array): Promise<void> {
    const j = this.journaledDoc<JournaledRollups>(body);
    if (j === null) return;
    // After a switch, records for a metric this node no longer keeps are dropped: every sender
    // sent them to the new owners too, and storing them would bring back what the cleanup deletes.
    if (this.rebalance.hasSwitched() && this.replication?.accepts(j.metric) === false) return;
    const decode = (records: [number, string][]): [number, RollupAccumulator][] => records.map(([ts, acc]) => [ts, decodeAccumulator(Buffer.from(acc, 'base64'))]);
    if (j.doc.levels !== undefined) await this.shards.about(j.metric, 'setRollupLevels', j.doc.levels.map(([period, records]) => [period, decode(records)]));
    else await this.shards.about(j.metric, 'writeRollups', decode(j.doc.records));
  }

  private async applyJournaledCheckTags(body: Uint8Array): Promise<void> {
    const doc = JSON.parse(Buffer.from(body).toString('utf8')) as JournaledCheckTags;
    // Merging is idempotent and order-free (model/check-tags), so a re-delivery is harmless.
    await this.checkTags.update(doc.scope, doc.uuid, () => doc.update);
  }

  private async applyJournaledDelete(body: Uint8Array): Promise<void> {
    const j = this.journaledDoc<JournaledDelete>(body);
    if (j === null) return; // nothing such can be stored here
    if (await this.knows(j.metric)) await this.deleteData(j.metric, j.doc.kind, j.doc.before, true, j.doc.periods);
  }

  private checkWritable(): void {
    if (this.stopping) throw ferr('FER_ERR_SHUTTING_DOWN');
    const [shard] = this.recovering;
    if (shard !== undefined) throw ferr('FER_ERR_SHARD_UNAVAILABLE', shard, 'writes are refused until it has replayed the journal');
    if (this.fault !== null) throw ferr('FER_ERR_OVERLOADED', 'a partition failed to store data; see the log');
    this.checkpoints.checkWritable();
  }

  /**
   * One journal WriteBatch: `samples` (this node's, journaled as `rawEntry` when given) and
   * whatever `extend` adds; then the samples go to their shards, which index them.
   */
  private async commit(samples: Samples, rawEntry: Buffer | null, extend: (batch: NodeBatch) => void): Promise<void> {
    let entry: Uint8Array | null = null;
    try {
      if (samples.size > 0) entry = await journalForm(rawEntry ?? encodeJournalEntry([...(samples as IngestBatch<MetricInfo>).records()]));
    } catch (error) {
      throw asStorageError(error);
    }
    // Checked again here, after parsing: a shard that died meanwhile must not be handed samples it cannot place.
    this.checkWritable();
    const seq = this.nextSeq++;
    this.inflight.add(seq);
    try {
      const batch = this.storage.batch();
      if (entry !== null) this.storage.stageJournalEntry(batch, seq, entry);
      extend(batch);
      await batch.write();
      if (samples.size > 0) this.dispatch(seq, samples);
    } catch (error) {
      throw asStorageError(error);
    } finally {
      this.inflight.delete(seq);
    }
  }

  /** True when this node has ever stored the metric. */
  knows(metric: MetricInfo): Promise<boolean> {
    return this.shards.about(metric, 'knows');
  }

  /**
   * Deletes the metric's `kind` data stamped before `before` ms (histograms: in the given
   * rollup periods, null = all), or with `confirm` false only reports whether there is any.
   * Journal entries replayed later cannot bring the samples back (the shard keeps a tombstone).
   */
  deleteData(metric: MetricInfo, kind: DeleteTarget, before: number, confirm: boolean, periods: number[] | null = null): Promise<DeleteOutcome> {
    return this.shards.about(metric, 'deleteData', kind, before, this.nextSeq, confirm, periods);
  }

  /** Deletes a metric entirely (data of every type, rollups, index records); see Shard.fullDelete. */
  async fullDelete(metric: MetricInfo, confirm: boolean): Promise<DeleteOutcome> {
    const outcome = await this.shards.about(metric, 'fullDelete', this.nextSeq, confirm);
    if (outcome === 'deleted') this.limits.removed();
    return outcome;
  }

  /** The metric index's figures summed over the shards, each shard's series and heap, and disk by kind (/state). */
  async shardReport(): Promise<{ index: Record<string, number>; shards: ShardReport[]; disk: { total_bytes: number; by_kind: DiskUse['by_kind'] } }> {
    const figures = await this.shards.askAll('figures');
    const index: Record<string, number> = {};
    for (const f of figures) for (const [k, v] of Object.entries(f.index)) index[k] = (index[k] ?? 0) + v;
    const disk = addDiskUse([await this.storage.diskUse(), ...figures.map((f) => f.disk)]);
    return {
      index,
      shards: figures.map((f) => ({
        series: f.series,
        heap_used_bytes: f.heapUsed,
        heap_committed_bytes: f.heapCommitted,
        array_buffers_bytes: f.arrayBuffers,
        index_metrics: f.index.metrics ?? 0,
        blocks_merged: f.blocksMerged,
        open_buffers: f.openBuffers.buffers,
        open_buffer_bytes: f.openBuffers.bytes,
        histograms_aged_to: f.histogramsAgedTo === null ? null : f.histogramsAgedTo / 1000,
      })),
      disk: { total_bytes: disk.total_bytes, by_kind: disk.by_kind },
    };
  }

  /**
   * A point-in-time copy of this node's data directory at `dest` (storage/backup.ts): the
   * shards' stores, then the node's, with the journal kept whole meanwhile. Writes go on.
   */
  async backup(dest: string): Promise<BackupManifest> {
    const started = Date.now();
    prepareDestination(dest);
    this.backupsRunning++;
    try {
      const shardBytes = await this.shards.askAll('backup', dest);
      const bytes = shardBytes.reduce((a, b) => a + b, 0) + (await this.storage.copySnapshotTo(dest));
      return writeManifest(dest, { shards: shardBytes.length, bytes, seconds: (Date.now() - started) / 1000 }, started);
    } finally {
      this.backupsRunning--;
    }
  }

  /** Seals every open buffer and truncates the journal behind it. */
  async flush(): Promise<void> {
    await this.checkpointRunning;
    const dispatched = this.dispatchedWatermark();
    const lows = await this.shards.askAll('sealAll');
    await this.truncateJournal(dispatched, lows);
  }

  /**
   * A rebalance to `next` started (or resumes): writes go to its owners too, those only in
   * `next` through its journal stream, which this node consumes from now on beside its own,
   * and it answers requests on `next`'s subjects too. A standalone node has no replication to extend.
   */
  private async beginDualWrites(next: Topology): Promise<void> {
    if (this.replication === null || this.nats === null) {
      this.log.warn({ next: next.hash }, 'rebalance on a node without cluster replication: new writes are not copied to the next topology');
      return;
    }
    await this.replication.beginNext(buildRing(next), await JournalStream.open(this.nats, next.hash, this.config.peerTimeoutMs));
    this.startOtherRpc(next.hash);
    await this.consume(this.replication.otherJournal()!);
  }

  /**
   * At start, a node that had switched in a rebalance not yet complete: it consumes the old
   * topology's stream again, answers on its subjects and, before its cleanup, writes to its owners too.
   */
  private async resumeSwitched(old: Topology, state: RebalanceStateName): Promise<void> {
    if (this.replication === null || this.nats === null) return;
    const oldInUse = state === 'TOPO_REBALANCE_CLEANUP';
    await this.replication.resumeSwitched(buildRing(old), await JournalStream.open(this.nats, old.hash, this.config.peerTimeoutMs), oldInUse);
    this.startOtherRpc(old.hash);
    await this.consume(this.replication.otherJournal()!);
  }

  /** The rebalance completed: the old topology's stream is drained and closed, its subjects left. */
  private async endRebalanceWindow(): Promise<void> {
    const replication = this.replication;
    const old = replication?.otherJournal() ?? null;
    const oldRpc = this.otherRpc;
    if (replication === null || old === null) return;
    // Messages peers sent here on the old stream before they finished are applied first; any
    // left after this would be re-published on the running stream by their senders' outboxes.
    for (let waited = 0; waited < this.config.peerTimeoutMs && (await old.pending(this.identity)) !== 0; waited += 100) await new Promise((r) => setTimeout(r, 100));
    // A rebalance activated meanwhile has ended this window already and opened its own.
    if (replication.otherJournal() !== old) return;
    replication.endWindow();
    if (this.otherRpc === oldRpc) this.stopOtherRpc();
  }

  /** Answers requests on `hash`'s subjects too, as on the running topology's. */
  private startOtherRpc(hash: string): void {
    this.stopOtherRpc();
    this.otherRpc = new Rpc(this.nats!, hash, this.identity);
    this.serveRpc?.(this.otherRpc);
  }

  private stopOtherRpc(): void {
    this.otherRpc?.stop();
    this.otherRpc = null;
  }

  /** Sets how this node answers other nodes (boot.ts), and starts answering on the current Rpc. */
  answerRequests(serve: (rpc: Rpc) => void): void {
    this.serveRpc = serve;
    if (this.rpc !== null) serve(this.rpc);
    if (this.otherRpc !== null) serve(this.otherRpc);
  }

  /**
   * The Rpc that reaches `peer`: every node of a rebalance answers on both topologies'
   * subjects, so the running one does, except for a node only in the next topology while
   * this one has not switched (it answers on the next topology's alone).
   */
  private rpcFor(peer: string): Rpc | null {
    if (this.otherRpc === null || this.rebalance.switchedNow() || this.ring.topology.nodes.some((n) => n.id === peer)) return this.rpc;
    return this.otherRpc;
  }

  /** A request to `peer`, on the subjects that reach it. */
  callPeer<T>(peer: string, op: string, payload: unknown, timeoutMs = this.config.peerTimeoutMs): Promise<T> {
    const rpc = this.rpcFor(peer);
    if (rpc === null) return Promise.reject(new Error('a standalone node has no peers to ask'));
    return rpc.call<T>(peer, op, payload, timeoutMs);
  }

  /** `topology_loaded`: whether this node has the topology `{hash}` loaded (or runs under it). */
  hasTopology(payload: unknown): boolean {
    const hash = (payload as { hash?: unknown })?.hash;
    return typeof hash === 'string' && this.topologies.get(hash) !== undefined;
  }

  /**
   * Whether every other node of both topologies has `next` loaded (null: no answer). Nodes of
   * the current topology are asked on its subjects (one that loaded `next` but was not activated
   * yet does not listen on `next`'s); nodes only in `next` run under it and answer on its subjects.
   */
  private async peersLoaded(next: Topology): Promise<Map<string, boolean | null>> {
    return this.askEveryNode(next, (id) => this.callPeer<boolean>(id, 'topology_loaded', { hash: next.hash }));
  }

  /** Where every other node of both topologies is in the rebalance to `next` (null: no answer). */
  private async peerRebalanceStates(next: Topology): Promise<Map<string, PeerRebalanceReport | null>> {
    return this.askEveryNode(next, (id) => this.callPeer<PeerRebalanceReport>(id, 'rebalance_state', {}));
  }

  /** `ask` of every other node of the current topology and `next` (null: it did not answer). */
  private async askEveryNode<T>(next: Topology, ask: (id: string) => Promise<T>): Promise<Map<string, T | null>> {
    const ids = [...new Set([...this.topologies.current.nodes, ...next.nodes].map((n) => n.id))].filter((id) => id !== this.identity);
    const answers = await Promise.all(ids.map((id) => ask(id).catch(() => null)));
    return new Map(ids.map((id, i) => [id, answers[i]!]));
  }

  /**
   * The rebalance's switch: from now on this node routes, replicates, reads, searches and
   * gossips under `next`. Replication keeps its outbox and sequences and both streams
   * (replication.ts switchToNext); requests are answered on both topologies' subjects until
   * the rebalance completes. A node `next` leaves out switches too: it owns nothing under
   * `next`, so it forwards every read to the new owners; stop it once the rebalance is done.
   */
  private async switchTopology(next: Topology): Promise<void> {
    const replication = this.replication;
    const nats = this.nats;
    if (replication === null || nats === null) throw new Error('a node without cluster replication (standalone) cannot switch topology yet');
    if (this.ring.topology.hash === next.hash) return;
    // First, as it may fail (and the switch be tried again): nothing else has changed then.
    await this.shards.askAll('adoptTopology', next);
    const ring = buildRing(next);
    replication.switchToNext();
    // The next topology's Rpc becomes the running one; the old one keeps answering beside it.
    const old = this.rpc;
    this.rpc = this.otherRpc ?? new Rpc(nats, next.hash, this.identity);
    if (this.otherRpc === null) this.serveRpc?.(this.rpc);
    this.otherRpc = old;
    this.gossip.stop();
    const rebuilding = this.gossip.rebuilding;
    this.gossip = new Gossip(nats, this.identity, next, this.clock);
    this.gossip.rebuilding = rebuilding;
    this.gossip.start();
    this.ring = ring;
    this.routing = new ClusterRouting(this.identity, ring, this.gossip, replication, this.rpc, this.config.peerTimeoutMs);
  }

  /**
   * The rebalance's cleanup (every node has switched): writes stop going to the old owners, and
   * every metric this node holds but does not own under `next` is deleted.
   */
  private async dropNotOwned(next: Topology): Promise<number> {
    this.replication?.stopOldWrites();
    const ring = buildRing(next);
    let deleted = 0;
    for (let shard = 0; shard < this.config.shards; shard++) {
      let from: number | null = 0;
      while (from !== null) {
        if (this.stopping) return deleted;
        const page: { metrics: ListedMetric[]; next: number | null } = await this.shards.askShard(shard, 'listMetrics', from, 256);
        from = page.next;
        for (const m of page.metrics) {
          const found = this.registry.intern(m.accountId as AccountId, m.uuid, m.checkName, m.canonical);
          if (!found.ok || ownersOf(ring, found.metric.key).some((n) => n.id === this.identity)) continue;
          await this.fullDelete(found.metric, true);
          deleted++;
        }
      }
    }
    return deleted;
  }

  /**
   * A rebalance's REHASH: the samples of metrics `next` gives new owners go to them, and every
   * check tag to the nodes that join (check tags live on every node), through the outbox.
   */
  private async relocateTo(next: Topology, aborted: () => boolean, figures: RelocationFigures): Promise<RelocationFigures> {
    const replication = this.replication;
    if (replication === null) throw new Error('a node without cluster replication (standalone) cannot relocate data yet');
    await relocate({
      ...this.relocationBase(replication),
      targets: gainingOwners(this.identity, this.ring, buildRing(next)),
      aborted,
      figures,
    });
    const joining = next.nodes.map((n) => n.id).filter((id) => !this.ring.topology.nodes.some((n) => n.id === id));
    if (joining.length === 0 || aborted()) return figures;
    await this.sendCheckTags(replication, joining, figures, aborted);
    return figures;
  }

  /** Every check tag this node holds, to `peers`, counted into `figures`. */
  private async sendCheckTags(replication: Replication, peers: string[], figures: RelocationFigures, aborted: () => boolean): Promise<void> {
    // Merging check tags is idempotent and order-free, so every node sending all of them is harmless.
    for await (const { scope, uuid, state } of this.checkTags.all()) {
      if (aborted()) break;
      for (const update of updatesOf(state)) {
        const doc: JournaledCheckTags = { scope, uuid, update };
        const body = Buffer.from(JSON.stringify(doc));
        const batch = this.storage.batch();
        const outgoing = peers.map((peer) => replication.stage(batch, peer, 'checktags', body, 1));
        await batch.write();
        await replication.publish(outgoing);
        figures.check_tag_updates_sent++;
        figures.bytes_sent += body.length * peers.length;
      }
    }
  }

  /**
   * A peer rebuilds (actors/cluster/rebuild.ts): this node sends it every metric it holds that
   * `target` owns under the running topology, then every check tag, and resolves once `target`
   * confirmed all of it. Histograms go as sets of their periods, from one holder (relocation.ts).
   */
  private async walkFor(target: string, figures: RelocationFigures, aborted: () => boolean): Promise<void> {
    const replication = this.replication;
    if (replication === null) throw new Error('a node without cluster replication (standalone) cannot send a rebuild');
    const ring = this.ring;
    await relocate({
      ...this.relocationBase(replication),
      figures,
      aborted: () => aborted() || this.stopping,
      targets: (metric) => {
        const owners = ownersOf(ring, metric.key).map((n) => n.id);
        if (!owners.includes(target)) return { peers: [], histograms: false };
        return { peers: [target], histograms: owners.find((id) => id !== target) === this.identity };
      },
    });
    if (aborted()) return;
    await this.sendCheckTags(replication, [target], figures, aborted);
    const upTo = replication.lastStaged(target);
    while (!aborted() && !this.stopping && !replication.confirmedThrough(target, upTo)) await new Promise((r) => setTimeout(r, 200));
  }

  /** Metrics this node holds (a rebuild walk's denominator). */
  private async metricCount(): Promise<number> {
    const figures = await this.shards.askAll('figures');
    return figures.reduce((a, f) => a + (f.index.metrics ?? 0), 0);
  }

  /** What every walk of this node's metrics shares (rebalance and rebuild): where to read, how to send. */
  private relocationBase(replication: Replication): Pick<RelocationDeps, 'shards' | 'shardCount' | 'histogramPeriod' | 'registry' | 'send' | 'sendRollups'> {
    return {
      shards: this.shards,
      shardCount: this.config.shards,
      histogramPeriod: this.config.histogramRollups[0]!.period,
      registry: this.registry,
      send: async (peer, records) => {
        const body = encodeJournalEntry(records);
        const batch = this.storage.batch();
        const outgoing = replication.stage(batch, peer, 'records', body, records.length);
        await batch.write();
        await replication.publish([outgoing]);
        return body.length;
      },
      sendRollups: async (peer, metric, levels) => {
        const doc: JournaledRollups = { ...portableIdentity(metric), records: [], levels: levels.map(([period, records]) => [period, records.map(([ts, acc]) => [ts, encodeAccumulator(acc).toString('base64')])]) };
        const body = Buffer.from(JSON.stringify(doc));
        const batch = this.storage.batch();
        const outgoing = replication.stage(batch, peer, 'nnt', body, doc.levels!.reduce((n, [, r]) => n + r.length, 0));
        await batch.write();
        await replication.publish([outgoing]);
        return body.length;
      },
    };
  }

  /** True once nothing this node sent to a node of `next` still waits for its confirmation. */
  private deliveredTo(next: Topology): boolean {
    const lag = this.replication?.lag() ?? {};
    return next.nodes.every((n) => (lag[n.id]?.unconfirmed_messages ?? 0) === 0);
  }

  /** Consumes this node's cluster journal and starts re-publishing its own outbox. */
  private async startReplication(replication: Replication): Promise<void> {
    await replication.loadApplied();
    replication.start();
    await this.consume(replication.journal);
  }

  /** Applies this node's messages on `stream` as they come. */
  private consume(stream: JournalStream): Promise<void> {
    return stream.consume(
      this.identity,
      (envelope, body) => this.applyJournal(envelope, body, stream),
      (error) => this.log.warn({ err: error }, 'cluster journal: apply failed; the message will be redelivered'),
    );
  }

  /** Graceful stop: refuse new writes, seal all buffers, close RocksDB. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.rebalance.close();
    this.rebuild.close();
    this.rebuildWalks.close();
    this.otherRpc?.stop();
    this.gossip.stop();
    this.replication?.stop();
    this.rpc?.stop();
    await this.nats?.close();
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    await this.retentionRunning;
    try {
      if (this.fault === null) {
        await this.flush();
        // The journal is now empty: flushing and compacting leaves on disk only the
        // sealed blocks, not the WAL and journal entries that led to them.
        await this.storage.flushAndCompact();
      }
    } finally {
      await this.shards.stop();
      await this.ingestPool.stop();
      await this.storage.close();
    }
  }

  /** Seals what is due in every partition, then drops the journal entries no buffer needs. */
  async checkpoint(): Promise<void> {
    if (this.checkpointRunning !== null || this.stopping) return;
    this.checkpointRunning = (async () => {
      this.checkpoints.started();
      try {
        const dispatched = this.dispatchedWatermark();
        const lows = await this.shards.askAll('checkpoint', this.journalCut);
        await this.truncateJournal(dispatched, lows);
        this.checkpoints.succeeded();
      } catch (error) {
        this.checkpoints.failed(error, { journalCut: this.journalCut, dispatched: this.dispatchedWatermark() });
      } finally {
        this.checkpointRunning = null;
      }
    })();
    await this.checkpointRunning;
  }

  /** Drops data past its retention (range deletes). One sweep at a time. */
  async sweepRetention(): Promise<void> {
    if (this.retentionRunning !== null || this.stopping) return;
    this.retentionRunning = (async () => {
      try {
        await this.shards.askAll('sweepRetention', Date.now());
      } catch (error) {
        this.log.error({ err: error }, 'retention sweep failed');
      } finally {
        this.retentionRunning = null;
      }
    })();
    await this.retentionRunning;
  }

  /**
   * Everything below the cut is sealed: every entry up to `dispatched` was handed to the
   * partitions before they were asked (so their lows account for it), and none of their
   * buffers needs it. `dispatched` must be read before asking: an entry dispatched while
   * the partitions answer may sit in a buffer their lows did not see.
   */
  private async truncateJournal(dispatched: number, shardLows: number[]): Promise<void> {
    // After a fault some applied records may be missing from buffers: keep the journal.
    if (this.fault !== null) return;
    // A backup copies the shards before the journal: what they seal meanwhile must stay in it.
    if (this.backupsRunning > 0) return;
    const cut = Math.min(dispatched + 1, ...shardLows);
    if (cut <= this.journalCut) return;
    await this.storage.truncateJournal(cut);
    this.journalCut = cut;
    // Range tombstones hide truncated entries but only compaction frees their bytes.
    if (cut - this.journalCompactedAt >= JOURNAL_COMPACT_EVERY) {
      this.journalCompactedAt = cut;
      await this.storage.compactJournal();
    }
  }

  private dispatchedWatermark(): number {
    let low = this.nextSeq;
    for (const seq of this.inflight) if (seq < low) low = seq;
    return low - 1;
  }

  /** Hands samples to their shards (`only`: to that shard alone). */
  private dispatch(seq: number, samples: Samples, only?: number): void {
    const sent = samples instanceof IngestBatch ? this.shards.applyBatch(seq, samples, only) : this.shards.applyLane(seq, samples.lane, samples.epoch, samples.parts);
    this.admission.dispatched(sent);
  }

  private async replayJournal(): Promise<void> {
    this.journalCut = await this.storage.journalCut();
    const { entries, last } = await this.replayEntries();
    this.stats.journalEntriesReplayed += entries;
    this.nextSeq = Math.max(1, (last ?? this.journalCut - 1) + 1);
    if (entries > 0) this.log.info({ entries, lastSeq: last }, 'journal replayed');
  }

  /** Hands every journal entry on disk to the shards again (`only`: to that shard alone). */
  private async replayEntries(only?: number): Promise<{ entries: number; last: number | null }> {
    let entries = 0;
    let last: number | null = null;
    for await (const { seq, entry } of this.storage.journal()) {
      this.dispatch(seq, this.replayed(decodeJournal(entry), seq), only);
      entries++;
      last = seq;
    }
    return { entries, last };
  }

  /**
   * A shard worker died: it is started again and given its part of every journal entry on
   * disk (what it had in memory and not sealed), meanwhile its partitions answer 503 and
   * writes are refused. Parse lanes start a new sid epoch, so the new worker is never sent
   * sids it was not told about, and writes already journaled are waited for, so the replay
   * sees every entry its predecessor may have missed.
   */
  async onShardExited(shard: number, code: number): Promise<void> {
    if (this.stopping || this.recovering.has(shard)) return;
    this.recovering.add(shard);
    this.log.error({ shard, code }, 'shard worker exited; restarting it and replaying its part of the journal');
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        await this.shards.restart(shard);
        await this.ingestPool.forget();
        while (this.inflight.size > 0) await new Promise((r) => setTimeout(r, 10));
        const { entries } = await this.replayEntries(shard);
        this.recovering.delete(shard);
        this.log.warn({ shard, entries }, 'shard recovered: journal replayed');
        return;
      } catch (error) {
        this.log.error({ err: error, shard, attempt }, 'shard restart failed; trying again');
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * attempt)));
      }
    }
  }

  /** A journal entry's samples, as they were accepted when it was written. */
  private replayed(entry: DecodedJournal, seq: number): IngestBatch<MetricInfo> {
    if (!entry.raw) return IngestBatch.of(this.recordsOf(entry.entry, seq));
    if (entry.format === 'tsv') return parseTsvBody(this.registry, entry.body, entry.ctx).batch;
    return parseMetricListBody(this.registry, entry.body, entry.ctx).batch;
  }

  /** A decoded journal entry's records, their metrics interned. */
  private recordsOf(entry: JournalEntry, seq?: number): IngestRecord<MetricInfo>[] {
    const metrics = entry.metrics.map((m) => {
      const r = this.registry.intern(m.accountId, m.uuid, m.checkName, m.canonical);
      if (!r.ok) throw new Error(`BUG: journal entry ${seq ?? '(cluster)'} holds an invalid metric name: ${r.reason}`);
      return r.metric;
    });
    return entry.records.map((r) => ({ ...r, metric: metrics[r.metric]! }) as IngestRecord<MetricInfo>);
  }

  /** A shard's partition failed to take samples: see the log. */
  onShardFault(partition: number, error: unknown): void {
    // Data the partition failed to take is still in the journal; refusing further writes
    // keeps it there until an operator restarts the node, which replays it.
    this.fault ??= error;
    this.log.error({ err: error, partition }, 'partition failed to apply records; refusing writes until restart');
  }
}
