// The shard's series: one MetricInfo per metric it has taken samples of, built from the
// WireMetric the node sends, so per-metric state (index id, whether anything is sealed yet,
// open buffers) belongs to the shard alone. Reads of a metric not taken here get a description
// that is not remembered.
//
// A shard holds a million of these (issue 30), so each keeps only what it cannot recompute:
// its canonical name and storage id as strings, shared check texts, and a few small numbers;
// its storage id's bytes sit in the table's IdTable, which finds it by them (`id` is a view of
// them, made when asked).
// The metric key and the parsed name are computed when asked; the parsed name the node sent is
// kept only until the index has taken it.
import { metricKey } from '../../model/metric-key.js';
import { newMetricInfo, type MetricInfo, type WireMetric } from '../../model/metric-info.js';
import { canonicalizeMetricName, type CanonicalName } from '../../model/metric-name.js';
import { IdTable } from '../../model/id-table.js';
import { Interner } from '../../model/interner.js';
import { METRIC_ID_BYTES } from '../../storage/keys.js';
import type { AccountId, MetricKey } from '../../model/types.js';

/** A metric as its shard keeps it (see the file comment). */
export class ShardMetric implements MetricInfo {
  indexId = -1;
  unsealed = false;
  openHead = -1;
  lastSlice = -1;
  /** The parsed name until the index has it (`indexed()`); parsed again when asked after that. */
  private parsed: CanonicalName | null;

  constructor(
    readonly accountId: AccountId,
    readonly uuid: string,
    readonly checkName: string,
    name: CanonicalName,
    readonly idHex: string,
    readonly partition: number,
    private readonly ids: IdTable,
    private readonly slot: number,
  ) {
    this.parsed = name;
    this.canonical = name.canonical;
  }

  readonly canonical: string;

  /** The 16-byte storage id: a view of the table's arena (no copy, no hex decoding). */
  get id(): Buffer {
    return this.ids.view(this.slot);
  }

  get key(): MetricKey {
    return metricKey(this.uuid, this.canonical);
  }

  get name(): CanonicalName {
    if (this.parsed !== null) return this.parsed;
    const parsed = canonicalizeMetricName(this.canonical);
    if (!parsed.ok) throw new Error(`BUG: stored canonical name ${JSON.stringify(this.canonical)} does not parse: ${parsed.reason}`);
    return parsed.value;
  }

  /** The index has the name: let go of the parsed copy. */
  indexed(): void {
    this.parsed = null;
  }
}

export class SeriesTable {
  /** Storage ids; a metric's number here is its place in `metrics`. */
  private readonly ids = new IdTable();
  /** By number: the adopted metric (undefined once forgotten). */
  private readonly metrics: (ShardMetric | undefined)[] = [];
  private adopted = 0;
  /** Check uuids and check names, kept once (a series table holds millions of metrics). */
  private readonly texts = new Interner();
  /** A hex id's bytes, decoded for a lookup. */
  private readonly scratch = Buffer.alloc(METRIC_ID_BYTES);

  get size(): number {
    return this.adopted;
  }

  /** The shard's MetricInfo of a metric it takes samples of (made at its first sample). */
  adopt(m: WireMetric): ShardMetric {
    let n = this.numberOf(m.idHex);
    if (n < 0) n = this.ids.add(this.scratch);
    let info = this.metrics[n];
    if (info === undefined) {
      info = new ShardMetric(m.accountId, this.texts.of(m.uuid), this.texts.of(m.checkName), m.name, m.idHex, m.partition, this.ids, n);
      this.metrics[n] = info;
      this.adopted++;
    }
    return info;
  }

  /** The metric a read or delete names: the adopted one when there is one. */
  resolve(m: WireMetric): MetricInfo {
    return this.find(m.idHex) ?? newMetricInfo(m, Buffer.from(m.idHex, 'hex'), m.idHex, m.partition);
  }

  /** The adopted metric with this storage id, if any. */
  find(idHex: string): MetricInfo | undefined {
    const n = this.numberOf(idHex);
    return n < 0 ? undefined : this.metrics[n];
  }

  /** Forgets a fully deleted metric: data written later starts a fresh one. */
  forget(idHex: string): void {
    const n = this.numberOf(idHex);
    if (n < 0 || this.metrics[n] === undefined) return;
    this.metrics[n] = undefined;
    this.adopted--;
  }

  /** The number of a hex storage id (left decoded in `scratch`), or -1. */
  private numberOf(idHex: string): number {
    if (this.scratch.write(idHex, 0, 'hex') !== METRIC_ID_BYTES) throw new Error(`BUG: storage id ${JSON.stringify(idHex)} is not 16 bytes of hex`);
    return this.ids.find(this.scratch);
  }
}
