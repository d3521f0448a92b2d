// The node's side of its shards (actors/shard/): one worker thread each, owning the
// partitions p with p % shards = its number. Samples go to a shard as columns with their
// typed arrays transferred, never copied; questions are asked of the shard of a metric's
// partition, or of every shard.
import { Worker } from 'node:worker_threads';
import type { FerriteConfig } from '../../model/config.js';
import { ferr } from '../../model/errors.js';
import type { IngestBatch } from '../../model/ingest-batch.js';
import type { Topology } from '../../model/topology/index.js';
import { shardDir } from '../../storage/shard-layout.js';
import { declarationTransfers, partTransfers, type Declarations, type WirePart } from '../ingest/wire.js';
import { wireMetric, type MetricInfo, type WireMetric } from '../../model/metric-info.js';
import type { ShardMethod, ShardMethods, ShardNotice, ShardReply, ShardRequest, ShardSetup } from '../shard/messages.js';
import { fromWireError } from '../shard/wire-error.js';

/** What shards tell the node without being asked. */
export interface ShardSetEvents {
  applied(records: number): void;
  /** A worker's heap in use as a share of its limit (it says so every second, and every 100 ms while it applies writes). */
  heap(shard: number, share: number): void;
  fault(shard: number, partition: number, error: Error): void;
  /** A worker ended without being asked to stop. */
  exited(shard: number, code: number): void;
}

type Answer<K extends ShardMethod> = Awaited<ReturnType<ShardMethods[K]>>;
/** The questions about one metric (their first argument is it). */
type MetricMethod = { [K in ShardMethod]: Parameters<ShardMethods[K]> extends [WireMetric, ...unknown[]] ? K : never }[ShardMethod];
type AfterMetric<K extends MetricMethod> = Parameters<ShardMethods[K]> extends [WireMetric, ...infer R] ? R : never;

interface Waiting {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * A shard worker's young generation, MiB. V8 lets a worker's grow to 128 MiB, all of it
 * resident once used; at a million series (README "Scale") 48 MiB cut the worker's held heap
 * by about a quarter, with the load rate within the run-to-run noise.
 */
const SHARD_YOUNG_GENERATION_MB = 48;

/** The partitions shard `n` of `shards` owns. */
export function partitionsOf(n: number, shards: number, partitions: number): number[] {
  return Array.from({ length: partitions }, (_, p) => p).filter((p) => p % shards === n);
}

class ShardClient {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private stopping = false;
  /** Set once the worker has opened its shard: only then is its exit a failure to recover from. */
  private started = false;
  /** Set once the worker has ended: questions are refused, notices dropped (the journal keeps the samples). */
  private down: string | null = null;
  /** Records sent and not yet reported applied (released if the worker dies). */
  private pending = 0;

  private constructor(
    readonly n: number,
    private readonly worker: Worker,
  ) {}

  static start(setup: ShardSetup, events: ShardSetEvents): Promise<ShardClient> {
    const heap = setup.config.shardHeapMb;
    const worker = new Worker(new URL('../shard/main.js', import.meta.url), { workerData: setup, resourceLimits: { maxYoungGenerationSizeMb: SHARD_YOUNG_GENERATION_MB, ...(heap > 0 ? { maxOldGenerationSizeMb: heap } : {}) } });
    const client = new ShardClient(setup.shard, worker);
    return new Promise((resolve, reject) => {
      worker.on('message', (reply: ShardReply) => {
        switch (reply.type) {
          case 'ready':
            client.started = true;
            return resolve(client);
          case 'failed':
            return reject(fromWireError(reply.error));
          case 'applied':
            client.pending -= reply.records;
            return events.applied(reply.records);
          case 'heap':
            return events.heap(setup.shard, reply.share);
          case 'fault':
            return events.fault(setup.shard, reply.partition, fromWireError(reply.error));
          case 'answer':
            return client.answered(reply);
        }
      });
      worker.on('error', (error) => {
        reject(error);
        client.failAll(error);
      });
      worker.on('exit', (code) => {
        reject(new Error(`shard ${setup.shard} exited with code ${code} while starting`));
        client.down = `its worker exited with code ${code}`;
        client.failAll(unavailable(setup.shard, client.down));
        // What it never reported applied will not be: load shedding must not count it forever.
        if (client.pending > 0) events.applied(client.pending);
        client.pending = 0;
        if (client.started && !client.stopping) events.exited(setup.shard, code);
      });
    });
  }

  /** Sends a notice; the records it hands over (0 when the worker is down and it is dropped). */
  notify(notice: ShardNotice, transfer: ArrayBuffer[] = []): number {
    if (this.down !== null) return 0;
    const records = notice.type === 'apply' ? notice.parts.reduce((n, p) => n + p.sids.length + p.others.length, 0) : 0;
    this.pending += records;
    this.worker.postMessage(notice, transfer);
    return records;
  }

  ask<K extends ShardMethod>(method: K, args: Parameters<ShardMethods[K]>): Promise<Answer<K>> {
    if (this.down !== null) return Promise.reject(unavailable(this.n, this.down));
    const request: ShardRequest = { id: this.nextId++, method, args };
    return new Promise<Answer<K>>((resolve, reject) => {
      this.waiting.set(request.id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage(request);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    try {
      if (this.down === null) await this.ask('stop', []);
    } finally {
      await this.worker.terminate();
    }
  }

  /** A V8 heap snapshot of the worker (for finding what the shard's memory holds). */
  heapSnapshot(): Promise<NodeJS.ReadableStream> {
    return this.worker.getHeapSnapshot();
  }

  /** Ends the worker as a crash would (tests of recovery). */
  kill(): Promise<number> {
    return this.worker.terminate();
  }

  private answered(reply: Extract<ShardReply, { type: 'answer' }>): void {
    const w = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    if (w === undefined) return;
    if (reply.ok) w.resolve(reply.value);
    else w.reject(fromWireError(reply.error));
  }

  private failAll(error: Error): void {
    for (const w of this.waiting.values()) w.reject(error);
    this.waiting.clear();
  }
}

function unavailable(shard: number, why: string): Error {
  return ferr('FER_ERR_SHARD_UNAVAILABLE', shard, `${why}; its partitions answer again once it has replayed the journal`);
}

export class ShardSet {
  private constructor(
    private readonly clients: ShardClient[],
    private readonly setups: ShardSetup[],
    private readonly events: ShardSetEvents,
  ) {}

  static async start(config: FerriteConfig, identity: string, topology: Topology, shards: number, events: ShardSetEvents): Promise<ShardSet> {
    const setups = Array.from({ length: shards }, (_, n): ShardSetup => ({ shard: n, dir: shardDir(config.dataDir, n), partitions: partitionsOf(n, shards, config.partitions), config, identity, topology }));
    const started = await Promise.allSettled(setups.map((s) => ShardClient.start(s, events)));
    const clients = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) {
      await Promise.allSettled(clients.map((c) => c.stop()));
      throw failed.reason;
    }
    return new ShardSet(clients, setups, events);
  }

  get count(): number {
    return this.clients.length;
  }

  /** Starts shard `n`'s worker again (after it died); resolves once it has opened its store. */
  async restart(n: number): Promise<void> {
    this.clients[n] = await ShardClient.start(this.setups[n]!, this.events);
  }

  /** A V8 heap snapshot of shard `n`'s worker. */
  heapSnapshot(n: number): Promise<NodeJS.ReadableStream> {
    return this.clients[n]!.heapSnapshot();
  }

  /** Kills shard `n`'s worker as a crash would (tests of recovery). */
  async kill(n: number): Promise<void> {
    await this.clients[n]!.kill();
  }

  /** Metrics a parse lane names for the first time, each to its shard (before any apply that uses them). */
  declare(lane: number, epoch: number, fresh: readonly Declarations[]): void {
    for (const d of fresh) this.clients[d.shard]!.notify({ type: 'declare', lane, epoch, fresh: d }, declarationTransfers([d]));
  }

  /** Journaled samples of a parse lane: each partition's columns to its shard, transferred. The records handed over. */
  applyLane(seq: number, lane: number, epoch: number, parts: readonly WirePart[]): number {
    let sent = 0;
    for (const [n, list] of this.split(parts, (p) => p.partition)) {
      sent += this.clients[n]!.notify({ type: 'apply', seq, names: { lane, epoch }, parts: list }, partTransfers(list));
    }
    return sent;
  }

  /**
   * Journaled samples of this node's metrics (records of JSON writers, peers, replay); `only`:
   * to that shard alone. The records handed over.
   */
  applyBatch(seq: number, batch: IngestBatch<MetricInfo>, only?: number): number {
    const byShard = new Map<number, { list: WireMetric[]; sids: Map<MetricInfo, number>; parts: WirePart[] }>();
    for (const [partition, part] of batch.parts) {
      const n = partition % this.clients.length;
      if (only !== undefined && n !== only) continue;
      let s = byShard.get(n);
      if (s === undefined) byShard.set(n, (s = { list: [], sids: new Map(), parts: [] }));
      const sidOf = (m: MetricInfo): number => {
        let sid = s!.sids.get(m);
        if (sid === undefined) {
          sid = s!.list.length;
          s!.sids.set(m, sid);
          s!.list.push(wireMetric(m));
        }
        return sid;
      };
      const sids = new Uint32Array(part.length);
      for (let i = 0; i < part.length; i++) sids[i] = sidOf(part.metrics[i]!);
      const others = part.others.map((r) => ({ ...r, metric: { sid: sidOf(r.metric) } }));
      s.parts.push({ partition, sids, ts: part.ts.slice(0, part.length), values: part.values.slice(0, part.length), others });
    }
    let sent = 0;
    for (const [n, s] of byShard) sent += this.clients[n]!.notify({ type: 'apply', seq, names: { list: s.list }, parts: s.parts }, partTransfers(s.parts));
    return sent;
  }

  /** Asks the shard of a metric's partition. */
  ask<K extends ShardMethod>(metric: Pick<WireMetric, 'partition'>, method: K, ...args: Parameters<ShardMethods[K]>): Promise<Answer<K>> {
    return this.clients[metric.partition % this.clients.length]!.ask(method, args);
  }

  /** Asks the shard of a metric's partition about the metric. */
  about<K extends MetricMethod>(metric: WireMetric, method: K, ...args: AfterMetric<K>): Promise<Answer<K>> {
    return this.ask(metric, method, ...([wireMetric(metric), ...args] as unknown as Parameters<ShardMethods[K]>));
  }

  /** Asks shard `n` (see `byShard`). */
  askShard<K extends ShardMethod>(n: number, method: K, ...args: Parameters<ShardMethods[K]>): Promise<Answer<K>> {
    return this.clients[n]!.ask(method, args);
  }

  /** Items grouped by the shard of their partition. */
  byShard<T>(items: readonly T[], partitionOf: (item: T) => number): Map<number, T[]> {
    return this.split(items, partitionOf);
  }

  /** Asks every shard; their answers in shard order. */
  askAll<K extends ShardMethod>(method: K, ...args: Parameters<ShardMethods[K]>): Promise<Answer<K>[]> {
    return Promise.all(this.clients.map((c) => c.ask(method, args)));
  }

  async stop(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.stop()));
  }

  private split<T>(items: readonly T[], partitionOf: (item: T) => number): Map<number, T[]> {
    const byShard = new Map<number, T[]>();
    for (const item of items) {
      const n = partitionOf(item) % this.clients.length;
      const list = byShard.get(n);
      if (list === undefined) byShard.set(n, [item]);
      else list.push(item);
    }
    return byShard;
  }
}

