// The shard's series: one MetricInfo per metric it has taken samples of, built from the
// WireMetric the node sends, so per-metric state (index id, whether anything is sealed yet)
// belongs to the shard alone. Reads of a metric not taken here get a description that is
// not remembered.
import type { MetricKey } from '../../model/types.js';
import { newMetricInfo, type MetricInfo, type WireMetric } from '../../model/metric-info.js';
import { Interner } from '../../model/interner.js';

export class SeriesTable {
  private readonly byKey = new Map<MetricKey, MetricInfo>();
  /** Check uuids, check names and tag texts, kept once (a series table holds millions of metrics). */
  private readonly texts = new Interner();

  get size(): number {
    return this.byKey.size;
  }

  /** The shard's MetricInfo of a metric it takes samples of (made at its first sample). */
  adopt(m: WireMetric): MetricInfo {
    let info = this.byKey.get(m.key);
    if (info === undefined) {
      info = newMetricInfo(this.shared(m), Buffer.from(m.idHex, 'hex'), m.idHex, m.partition);
      this.byKey.set(m.key, info);
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
    return this.byKey.get(m.key) ?? newMetricInfo(m, Buffer.from(m.idHex, 'hex'), m.idHex, m.partition);
  }

  /** Forgets a fully deleted metric: data written later starts a fresh one. */
  forget(key: MetricKey): void {
    this.byKey.delete(key);
  }
}
