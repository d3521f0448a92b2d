// The shard's series: one MetricInfo per metric it has taken samples of, built from the
// WireMetric the node sends, so per-metric state (index id, whether anything is sealed yet)
// belongs to the shard alone. Reads of a metric not taken here get a description that is
// not remembered.
import { newMetricInfo, type MetricInfo, type WireMetric } from '../../model/metric-info.js';
import { Interner } from '../../model/interner.js';

export class SeriesTable {
  /** By storage id (hex): the shortest string each metric already has. */
  private readonly byId = new Map<string, MetricInfo>();
  /** Check uuids, check names and tag texts, kept once (a series table holds millions of metrics). */
  private readonly texts = new Interner();

  get size(): number {
    return this.byId.size;
  }

  /** The shard's MetricInfo of a metric it takes samples of (made at its first sample). */
  adopt(m: WireMetric): MetricInfo {
    let info = this.byId.get(m.idHex);
    if (info === undefined) {
      info = newMetricInfo(this.shared(m), Buffer.from(m.idHex, 'hex'), m.idHex, m.partition);
      this.byId.set(info.idHex, info);
    }
    return info;
  }

  /** The metric with its repeated texts replaced by the kept copies. */
  private shared(m: WireMetric): WireMetric {
    const t = this.texts;
    const tags = m.name.tags.map((tag) => ({ category: t.of(tag.category), value: tag.value === null ? null : t.of(tag.value) }));
    return { ...m, uuid: t.of(m.uuid), checkName: t.of(m.checkName), name: { ...m.name, tags } };
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
