// Ingest workers (actors/ingest/worker.ts) parse request bodies on other cores; the main
// thread turns their columns into a batch of its own metrics with one array read per
// sample. With no workers configured, bodies are parsed here (actors/ingest/raw-bodies.ts).
import { Worker } from 'node:worker_threads';
import { IngestBatch, SampleColumns } from '../../model/ingest-batch.js';
import type { IngestRecord } from '../../model/ingest-record.js';
import type { RawContext, RawFormat } from '../../model/journal-entry.js';
import { MetricListFormatError } from '../../model/metric-list/decode.js';
import type { ParseJob, ParseResult } from './wire.js';
import type { MetricInfo } from '../metric-info.js';
import type { MetricRegistry } from '../node/metric-registry.js';
import { parseMetricListBody, parseTsvBody, type ParsedBody } from './raw-bodies.js';

interface Lane {
  worker: Worker;
  /** sid → metric, for the worker's current epoch. */
  metrics: MetricInfo[];
  epoch: number;
  waiting: Map<number, { resolve: (r: ParseResult) => void; reject: (e: Error) => void }>;
  busy: number;
}

export class IngestPool {
  private readonly lanes: Lane[] = [];
  private nextJob = 1;

  constructor(
    private readonly registry: MetricRegistry,
    workers: number,
    partitions: number,
  ) {
    for (let i = 0; i < workers; i++) this.lanes.push(this.lane(partitions));
  }

  /**
   * Parses a body into a batch of this node's metrics; the body comes back with the result
   * (it travels to the worker and back). Throws MetricListFormatError for a malformed MetricList.
   */
  async parse(format: RawFormat, ctx: RawContext, body: Buffer): Promise<ParsedBody & { body: Buffer }> {
    if (this.lanes.length === 0) return { ...this.parseHere(format, ctx, body), body };
    const lane = this.lanes.reduce((a, b) => (b.busy < a.busy ? b : a));
    const job: ParseJob = { id: this.nextJob++, format, ctx, body: owned(body) };
    lane.busy++;
    try {
      const result = await new Promise<ParseResult>((resolve, reject) => {
        lane.waiting.set(job.id, { resolve, reject });
        lane.worker.postMessage(job, [job.body.buffer as ArrayBuffer]);
      });
      const back = Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength);
      if (result.fatal !== undefined) throw new MetricListFormatError(result.fatal);
      return { ...this.adopt(lane, result), body: back };
    } finally {
      lane.busy--;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.worker.terminate()));
  }

  private parseHere(format: RawFormat, ctx: RawContext, body: Buffer): ParsedBody {
    return format === 'tsv' ? parseTsvBody(this.registry, body.toString('utf8'), ctx) : parseMetricListBody(this.registry, body, ctx);
  }

  /** The worker's columns as a batch of this node's metrics. */
  private adopt(lane: Lane, r: ParseResult): ParsedBody {
    if (r.epoch !== lane.epoch) {
      lane.epoch = r.epoch;
      lane.metrics = [];
    }
    for (const { sid, ...m } of r.fresh) lane.metrics[sid] = this.registry.adopt(m);
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
    return { batch, errors: r.errors, submitted: r.submitted };
  }

  private lane(partitions: number): Lane {
    const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { partitions } });
    worker.unref();
    const lane: Lane = { worker, metrics: [], epoch: 0, waiting: new Map(), busy: 0 };
    worker.on('message', (r: ParseResult) => {
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

/** A copy of `body` when it shares its memory (a pooled Buffer must not be transferred). */
function owned(body: Buffer): Uint8Array {
  if (body.byteOffset === 0 && body.buffer.byteLength === body.byteLength) return body;
  return new Uint8Array(body);
}
