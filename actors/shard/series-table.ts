// The shard's series: one MetricInfo per metric it has taken samples of, built from the
// WireMetric the node sends, so per-metric state (index id, whether anything is sealed yet,
// open buffers) belongs to the shard alone. Reads of a metric not taken here get a description
// that is not remembered.
//
// A shard holds a million of these (issue 30), so each keeps only what it cannot recompute:
// its canonical name and storage id as strings, shared check texts, and a few small numbers;
// its storage id's bytes sit in one arena of the table (`id` is a view of them, made when asked).
// The metric key and the parsed name are computed when asked; the parsed name the node sent is
// kept only until the index has taken it.
import { metricKey } from '../../model/metric-key.js';
import { newMetricInfo, type MetricInfo, type WireMetric } from '../../model/metric-info.js';
import { canonicalizeMetricName, type CanonicalName } from '../../model/metric-name.js';
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
    private readonly ids: IdArena,
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

/** Storage ids, 16 bytes a slot, in one growing array; a slot's bytes never change. */
class IdArena {
  private bytes = new Uint8Array(16 * 1024);
  private used = 0;

  add(idHex: string): number {
    const slot = this.used++;
    if (slot * METRIC_ID_BYTES >= this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes.set(Buffer.from(idHex, 'hex'), slot * METRIC_ID_BYTES);
    return slot;
  }

  /** A view of the slot's bytes; one made before the arena grew still reads them (the old array keeps them). */
  view(slot: number): Buffer {
    return Buffer.from(this.bytes.buffer, slot * METRIC_ID_BYTES, METRIC_ID_BYTES);
  }
}

export class SeriesTable {
  private readonly ids = new IdArena();
  /** By storage id (hex): the shortest string each metric already has. */
  private readonly byId = new Map<string, ShardMetric>();
  /** Check uuids and check names, kept once (a series table holds millions of metrics). */
  private readonly texts = new Interner();

  get size(): number {
    return this.byId.size;
  }

  /** The shard's MetricInfo of a metric it takes samples of (made at its first sample). */
  adopt(m: WireMetric): ShardMetric {
    let info = this.byId.get(m.idHex);
    if (info === undefined) {
      info = new ShardMetric(m.accountId, this.texts.of(m.uuid), this.texts.of(m.checkName), m.name, m.idHex, m.partition, this.ids, this.ids.add(m.idHex));
      this.byId.set(info.idHex, info);
    }
    return info;
  }

  /** The metric a read or delete names: the adopted one when there is one. */
  resolve(m: WireMetric): MetricInfo {
    return this.byId.get(m.idHex) ?? newMetricInfo(m, Buffer.from(m.idHex, 'hex'), m.idHex, m.partition);
  }

  /** The adopted metric with this storage id, if any. */
  find(idHex: string): MetricInfo | undefined {
    return this.byId.get(idHex);
  }

  /** Forgets a fully deleted metric: data written later starts a fresh one. */
  forget(idHex: string): void {
    this.byId.delete(idHex);
  }
}
