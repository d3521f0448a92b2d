// Ingest workers (actors/ingest/worker.ts) parse request bodies on other cores. Each worker is
// a lane that names metrics by small ids (sids). On a standalone node the columns go on to
// the shards as they are, and the shards learn who a sid is from the lane's declarations:
// the main thread does no per-sample work. In a cluster, where records are routed to their
// owners, the sids are turned into the node's metrics. With no workers configured, bodies are
// parsed here (actors/ingest/raw-bodies.ts).
import { Worker } from 'node:worker_threads';
import { IngestBatch, SampleColumns } from '../../model/ingest-batch.js';
import type { IngestRecord } from '../../model/ingest-record.js';
import type { RawContext, RawFormat } from '../../model/journal-entry.js';
import { MetricListFormatError } from '../../model/metric-list/decode.js';
import { headroomOf, ownsItsMemory, returned } from '../../model/headroom.js';
import { asEpochMs } from '../../model/types.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { MetricRegistry } from '../node/metric-registry.js';
import type { MainScreen } from '../node/series-limits.js';
import { parseMetricListBody, parseTsvBody, type ParsedBody } from './raw-bodies.js';
import { unpackDeclarations, type Declarations, type LaneLimits, type LaneVerdict, type ParseJob, type ParseResult, type SeriesCandidate, type WirePart } from './wire.js';

/**
 * A parse worker's young generation, MiB. What it allocates lives for one body, so a small one
 * does: V8's default lets it grow to 128 MiB, all of it resident once used; at a million series
 * (README "Scale") the worker's held heap went from 458 to 136–276 MiB with 16 (four runs).
 */
const PARSE_YOUNG_GENERATION_MB = 16;

/** A lane's columns, as the shards take them. */
export interface LaneSamples {
  lane: number;
  epoch: number;
  parts: WirePart[];
  size: number;
}

interface Lane {
  id: number;
  worker: Worker;
  /** sid → metric, for the worker's current epoch (kept only when records must be routed). */
  metrics: MetricInfo[];
  epoch: number;
  waiting: Map<number, { resolve: (r: ParseResult) => void; reject: (e: Error) => void }>;
  busy: number;
}

/** A parsed body, back from its lane. */
export interface LaneParse extends ParsedBody<LaneSamples | IngestBatch<MetricInfo>> {
  body: Buffer;
  /** The lane that parsed it (-1: the main thread) and its sid epoch. */
  lane: number;
  epoch: number;
  /** Series limits on: series not yet admitted, and keys of refused series whose samples were left out. */
  candidates: SeriesCandidate[];
  limited: string[];
  /** Parsed on the main thread with series limits on: the screen that saw its metrics. */
  screen: MainScreen | null;
}

export interface PoolOptions {
  workers: number;
  partitions: number;
  /** Shards the node runs (a worker packs each body's new metrics per shard). */
  shards: number;
  /**
   * Set when parsed columns go to the shards as they are (standalone): called with the
   * metrics a lane names for the first time, packed per shard, as soon as the lane says so.
   */
  declare: ((lane: number, epoch: number, fresh: readonly Declarations[]) => void) | null;
  /** A screen for series limits, for bodies parsed on the main thread. */
  screen: (refuse: ReadonlyMap<string, string> | null) => MainScreen;
}

export class IngestPool {
  private readonly lanes: Lane[] = [];
  private nextJob = 1;

  constructor(
    private readonly registry: MetricRegistry,
    private readonly options: PoolOptions,
  ) {
    for (let i = 0; i < options.workers; i++) this.lanes.push(this.lane(i));
  }

  /**
   * Parses a body; the body comes back with the result (it travels to the worker and back).
   * `lane`: on that lane (a body's second parse, after a verdict); `limits`: series limits on.
   * Throws MetricListFormatError for a malformed MetricList.
   */
  async parse(format: RawFormat, ctx: RawContext, body: Buffer, opts: { lane?: number; limits?: LaneLimits } = {}): Promise<LaneParse> {
    if (this.lanes.length === 0) return this.parseHere(format, ctx, body, opts.limits);
    const lane = opts.lane !== undefined && opts.lane >= 0 ? this.lanes[opts.lane]! : this.lanes.reduce((a, b) => (b.busy < a.busy ? b : a));
    const room = headroomOf(body);
    const job: ParseJob = { id: this.nextJob++, format, ctx, body: owned(body), ...(opts.limits === undefined ? {} : { limits: opts.limits }) };
    lane.busy++;
    try {
      const result = await new Promise<ParseResult>((resolve, reject) => {
        lane.waiting.set(job.id, { resolve, reject });
        lane.worker.postMessage(job, [job.body.buffer as ArrayBuffer]);
      });
      const back = returned(result.body, room);
      if (result.fatal !== undefined) throw new MetricListFormatError(result.fatal);
      const common = { errors: result.errors, submitted: result.submitted, body: back, lane: lane.id, epoch: result.epoch, candidates: result.candidates, limited: result.limited, screen: null };
      if (this.options.declare !== null) return { ...common, batch: { lane: lane.id, epoch: result.epoch, parts: result.parts, size: sizeOf(result.parts) } };
      return { ...common, batch: this.adopt(lane, result) };
    } finally {
      lane.busy--;
    }
  }

  /**
   * Makes every lane forget its metrics and start a new sid epoch, so sids declared to a shard
   * that has since restarted are never sent to it again. Resolves once every lane has.
   */
  async forget(): Promise<void> {
    await Promise.all(
      this.lanes.map(
        (lane) =>
          new Promise<ParseResult>((resolve, reject) => {
            const job: ParseJob = { id: this.nextJob++, format: 'forget', ctx: { latestAllowed: asEpochMs(0), textSizeLimit: 0, headerAccount: null }, body: new Uint8Array(0) };
            lane.waiting.set(job.id, { resolve, reject });
            lane.worker.postMessage(job);
          }),
      ),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.worker.terminate()));
  }

  /**
   * Tells the lane which of its candidates the node admitted and which it refused (no reply;
   * the lane takes it before any later job). Main-thread parses are settled by their screen.
   */
  verdict(parsed: LaneParse, generation: number, refused: ReadonlyMap<string, string>): void {
    if (parsed.screen !== null) return void parsed.screen.settle({ refused, release: () => {} });
    const lane = this.lanes[parsed.lane];
    if (lane === undefined) return;
    const v: LaneVerdict = { verdict: true, epoch: parsed.epoch, generation, admitted: [], refused: [] };
    for (const c of parsed.candidates) {
      const why = refused.get(c.key);
      if (why === undefined) v.admitted.push(c.sid);
      else v.refused.push([c.sid, why]);
    }
    lane.worker.postMessage(v);
  }

  private parseHere(format: RawFormat, ctx: RawContext, body: Buffer, limits: LaneLimits | undefined): LaneParse {
    const screen = limits === undefined ? null : this.options.screen(limits.refuse === undefined ? null : new Map(limits.refuse));
    const parsed = format === 'tsv' ? parseTsvBody(this.registry, body, ctx, screen?.screen) : parseMetricListBody(this.registry, body, ctx, screen?.screen);
    return { ...parsed, body, lane: -1, epoch: 0, candidates: screen?.candidates ?? [], limited: screen?.limited ?? [], screen };
  }

  /** The worker's columns as a batch of this node's metrics. */
  private adopt(lane: Lane, r: ParseResult): IngestBatch<MetricInfo> {
    const batch = new IngestBatch<MetricInfo>();
    const table = lane.metrics;
    for (const p of r.parts) {
      const part = new SampleColumns<MetricInfo>();
      const metrics = new Array<MetricInfo>(p.sids.length);
      for (let i = 0; i < p.sids.length; i++) metrics[i] = table[p.sids[i]!]!;
      part.metrics = metrics;
      part.ts = p.ts;
      part.values = p.values;
      part.length = p.sids.length;
      for (const o of p.others) part.others.push({ ...o, metric: table[o.metric.sid]! } as IngestRecord<MetricInfo>);
      batch.adoptPart(p.partition, part);
    }
    return batch;
  }

  /** Parse workers running. */
  get workers(): number {
    return this.lanes.length;
  }

  /** Each parse worker's V8 heap, bytes in use and held from the OS (/state). */
  async heaps(): Promise<{ used: number; committed: number }[]> {
    return Promise.all(
      this.lanes.map(async (l) => {
        const h = await l.worker.getHeapStatistics();
        return { used: h.used_heap_size, committed: h.total_heap_size };
      }),
    );
  }

  /** A V8 heap snapshot of parse worker `n` (for finding what its memory holds). */
  heapSnapshot(n: number): Promise<NodeJS.ReadableStream> {
    return this.lanes[n]!.worker.getHeapSnapshot();
  }

  /** Takes note of the metrics a result names for the first time, before anyone awaits it. */
  private learn(lane: Lane, r: ParseResult): void {
    if (r.epoch !== lane.epoch) {
      lane.epoch = r.epoch;
      lane.metrics = [];
    }
    if (this.options.declare !== null) this.options.declare(lane.id, r.epoch, r.fresh);
    else for (const d of r.fresh) for (const m of unpackDeclarations(d)) lane.metrics[m.sid] = this.registry.adopt(m);
  }

  private lane(id: number): Lane {
    const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { partitions: this.options.partitions, shards: this.options.shards }, resourceLimits: { maxYoungGenerationSizeMb: PARSE_YOUNG_GENERATION_MB } });
    worker.unref();
    const lane: Lane = { id, worker, metrics: [], epoch: 0, waiting: new Map(), busy: 0 };
    worker.on('message', (r: ParseResult) => {
      this.learn(lane, r);
      const w = lane.waiting.get(r.id);
      lane.waiting.delete(r.id);
      w?.resolve(r);
    });
    worker.on('error', (error) => {
      for (const w of lane.waiting.values()) w.reject(error);
      lane.waiting.clear();
    });
    return lane;
  }
}

function sizeOf(parts: readonly WirePart[]): number {
  return parts.reduce((n, p) => n + p.sids.length + p.others.length, 0);
}

/** A copy of `body` when it shares its memory (a pooled Buffer must not be transferred). */
function owned(body: Buffer): Uint8Array {
  return ownsItsMemory(body) ? body : new Uint8Array(body);
}
