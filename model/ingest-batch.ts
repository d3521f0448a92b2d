// The unit of work of the write path: one request's accepted samples, already split by
// partition. Plain doubles (nearly every sample) sit in typed columns, so a write of
// thousands of samples allocates a few arrays, not an object per sample; everything else
// (text, histograms, nulls, 64-bit integers beyond 2^53, MetricList generations) stays a record.
import type { IngestRecord, MetricIdentity } from './ingest-record.js';
import { grown } from './typed-arrays.js';

/** What a batch needs to know of a metric: where it goes. */
export interface Placed extends MetricIdentity {
  partition: number;
}

/** Numeric samples a partition's columns have room for at first, unless the batch is told otherwise. */
export const INITIAL_CAPACITY = 64;

/** One partition's share of a batch. */
export class SampleColumns<M = Placed> {
  /** The metric of each numeric sample. */
  metrics: M[] = [];
  ts: Float64Array;
  values: Float64Array;
  /** Numeric samples in the columns. */
  length = 0;
  /** Every other record, in arrival order. */
  readonly others: IngestRecord<M>[] = [];

  /** `capacity`: numeric samples the columns have room for before they first double. */
  constructor(capacity = INITIAL_CAPACITY) {
    this.ts = new Float64Array(Math.max(1, capacity));
    this.values = new Float64Array(Math.max(1, capacity));
  }

  pushNumeric(metric: M, ts: number, value: number): void {
    if (this.length === this.ts.length) this.grow();
    this.metrics.push(metric);
    this.ts[this.length] = ts;
    this.values[this.length++] = value;
  }

  /** Samples of both kinds. */
  get size(): number {
    return this.length + this.others.length;
  }

  /** The samples as records (the cluster's journal and the JSON journal format take these). */
  *records(): Generator<IngestRecord<M>> {
    for (let i = 0; i < this.length; i++) yield { kind: 'numeric', metric: this.metrics[i]!, ts: this.ts[i]! as IngestRecord['ts'], value: this.values[i]! };
    yield* this.others;
  }

  private grow(): void {
    this.ts = grown(this.ts, this.ts.length * 2);
    this.values = grown(this.values, this.values.length * 2);
  }
}

/**
 * Samples by partition, whatever a metric is to the one who batches them: an `IngestBatch`
 * holds metrics as objects that know their partition; a parse worker holds them as numbers
 * (actors/ingest/worker-series.ts), so a million series are no million objects (issue 30).
 */
export abstract class PartitionedBatch<M> {
  readonly parts = new Map<number, SampleColumns<M>>();
  size = 0;

  /**
   * `capacityOf`: room to make for a partition's numeric samples when it first has one. A parse
   * worker passes what its last body held there: bodies of one collector are alike, and columns
   * doubling their way up from 64 were a body's most allocated memory (issue 30).
   */
  constructor(private readonly capacityOf: (partition: number) => number = () => INITIAL_CAPACITY) {}

  protected abstract partitionOf(metric: M): number;

  add(record: IngestRecord<M>): void {
    const v = record.value;
    if (record.kind === 'numeric' && typeof v === 'number' && !record.generation) this.addNumeric(record.metric, record.ts, v);
    else {
      this.part(this.partitionOf(record.metric)).others.push(record);
      this.size++;
    }
  }

  addNumeric(metric: M, ts: number, value: number): void {
    this.part(this.partitionOf(metric)).pushNumeric(metric, ts, value);
    this.size++;
  }

  *records(): Generator<IngestRecord<M>> {
    for (const part of this.parts.values()) yield* part.records();
  }

  private part(partition: number): SampleColumns<M> {
    let p = this.parts.get(partition);
    if (p === undefined) this.parts.set(partition, (p = new SampleColumns<M>(this.capacityOf(partition))));
    return p;
  }
}

/** One request's accepted samples by partition. */
export class IngestBatch<M extends Placed = Placed> extends PartitionedBatch<M> {
  protected partitionOf(metric: M): number {
    return metric.partition;
  }

  /** Adds a whole partition's columns built elsewhere (an ingest worker's). */
  adoptPart(partition: number, part: SampleColumns<M>): void {
    if (this.parts.has(partition)) throw new Error(`BUG: partition ${partition} adopted twice`);
    this.parts.set(partition, part);
    this.size += part.size;
  }

  static of<M extends Placed>(records: Iterable<IngestRecord<M>>): IngestBatch<M> {
    const batch = new IngestBatch<M>();
    for (const r of records) batch.add(r);
    return batch;
  }
}
