// The metrics a parse worker has named in one epoch, by sid (0, 1, … in the order named). A
// worker of a million-series node names a million, so none is an object: a metric is its sid,
// and what the parse path asks of it (its partition, its check) sits in typed columns by sid;
// its storage id is in an id table numbered by sid too. Its canonical name is kept (in a text
// arena) only when series limits are in force, the one thing that asks a metric's key again.
// (A `WorkerMetric` of 56 bytes per series, plus the arrays that held them, was most of the
// worker's live heap at 1M series: issue 30.)
import { CheckTable, type MetricCheck } from '../../model/metric-check.js';
import { IdTable } from '../../model/id-table.js';
import { PartitionedBatch } from '../../model/ingest-batch.js';
import { metricKey } from '../../model/metric-key.js';
import { TextArena } from '../../model/text-arena.js';
import { grown, roomFor } from '../../model/typed-arrays.js';
import type { AccountId, MetricKey } from '../../model/types.js';

/** A metric of the worker's current epoch, by number. */
export type Sid = number;

export class WorkerSeries {
  private readonly ids = new IdTable();
  /** Canonical names by sid, when kept. */
  private readonly canonicals: TextArena | null;
  private readonly checks = new CheckTable();
  private partitions = new Uint32Array(1024);
  private checkNumbers = new Uint32Array(1024);

  /** `keepNames`: whether `keyOf` will be asked (series limits are in force). */
  constructor(keepNames: boolean) {
    this.canonicals = keepNames ? new TextArena() : null;
  }

  get keepsNames(): boolean {
    return this.canonicals !== null;
  }

  get size(): number {
    return this.ids.size;
  }

  /** The sid of the metric with storage id `id`, or -1. */
  find(id: Uint8Array): Sid {
    return this.ids.find(id);
  }

  /** Names a metric `find` does not know; its sid. */
  add(id: Uint8Array, canonical: string, accountId: AccountId, uuid: string, checkName: string, partition: number): Sid {
    const sid = this.ids.add(id);
    if (this.canonicals !== null && this.canonicals.add(canonical) !== sid) throw new Error("BUG: a worker's canonical names and storage ids are numbered apart");
    if (sid === this.partitions.length) {
      this.partitions = grown(this.partitions, roomFor(sid, sid + 1));
      this.checkNumbers = grown(this.checkNumbers, roomFor(sid, sid + 1));
    }
    this.partitions[sid] = partition;
    this.checkNumbers[sid] = this.checks.numberOf(accountId, uuid, checkName);
    return sid;
  }

  partitionOf(sid: Sid): number {
    return this.partitions[sid]!;
  }

  checkOf(sid: Sid): MetricCheck {
    return this.checks.at(this.checkNumbers[sid]!);
  }

  keyOf(sid: Sid): MetricKey {
    if (this.canonicals === null) throw new Error('BUG: a metric key asked of worker series that keep no names');
    return metricKey(this.checkOf(sid).uuid, this.canonicals.text(sid));
  }
}

/** A body's samples by partition, its metrics by sid. */
export class SidBatch extends PartitionedBatch<Sid> {
  constructor(
    private readonly series: WorkerSeries,
    capacityOf: (partition: number) => number,
  ) {
    super(capacityOf);
  }

  protected partitionOf(sid: Sid): number {
    return this.series.partitionOf(sid);
  }
}
