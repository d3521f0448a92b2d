// Prometheus labels ↔ ferrite metrics (irondb-reference §1.6, as IRONdb's adapter maps them):
// `__name__` is the metric name, every other label a stream tag `name:value`.
import { tagSearchText, type CanonicalName } from '../metric-name.js';
import type { TaggedSample } from '../tagged-sample.js';
import type { RemoteSeries } from './remote-codec.js';
import { setLabel, type Labels } from './types.js';

export const METRIC_NAME = '__name__';

/** A remote-write series as tagged samples, or why it cannot be stored. */
export function seriesSamples(series: RemoteSeries): TaggedSample[] | string {
  const name = series.labels[METRIC_NAME];
  if (name === undefined || name === '') return `a series has no ${METRIC_NAME} label (labels ${JSON.stringify(series.labels)})`;
  const tags = Object.entries(series.labels).filter(([label]) => label !== METRIC_NAME);
  return series.samples.map((s) => ({ name, tags, ts: s.timestamp, value: s.value }));
}

/** The labels of a stored metric: its name and stream tags (decoded; category-only tags have no value, so no label). */
export function metricLabels(name: CanonicalName): Labels {
  const labels: Labels = { [METRIC_NAME]: name.name };
  for (const t of name.tags) {
    if (t.value === null || t.value === '') continue;
    setLabel(labels, tagSearchText(t.category), tagSearchText(t.value));
  }
  return labels;
}

/** Labels in name order. */
export function sortedLabels(labels: Labels): Labels {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Label sets ordered as Prometheus orders series: pair by pair, names then values. */
export function compareLabels(a: Labels, b: Labels): number {
  const x = Object.entries(a);
  const y = Object.entries(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [an, av] = x[i]!;
    const [bn, bv] = y[i]!;
    if (an !== bn) return an < bn ? -1 : 1;
    if (av !== bv) return av < bv ? -1 : 1;
  }
  return x.length - y.length;
}
