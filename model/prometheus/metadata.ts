// Metric metadata for `/api/v1/metadata`, inferred from the series ferrite holds: ferrite keeps
// no TYPE/HELP/UNIT (remote write 1.0 sends metadata apart from the samples, and ferrite does not
// store it), so a family's type is read off its series as Prometheus' exposition format names
// them: `X_bucket{le}` (with `X_count`) is histogram X, `X{quantile}` with `X_count` summary X,
// a ferrite histogram series a histogram, `*_total` a counter; anything else is "unknown".
import type { Labels } from './types.js';

export interface MetricMetadata {
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'unknown';
  help: string;
  unit: string;
}

export interface NamedSeries {
  labels: Labels;
  /** ferrite's native (circllhist) histogram series. */
  histogram: boolean;
}

export function inferMetadata(series: readonly NamedSeries[]): Map<string, MetricMetadata> {
  const names = new Set(series.map((s) => s.labels.__name__ ?? '').filter((n) => n !== ''));
  const type = new Map<string, MetricMetadata['type']>();
  const parts = new Set<string>();
  for (const s of series) {
    const name = s.labels.__name__;
    if (name === undefined || name === '') continue;
    if (s.histogram) type.set(name, 'histogram');
    else if (name.endsWith('_bucket') && s.labels.le !== undefined && names.has(`${name.slice(0, -7)}_count`)) {
      const base = name.slice(0, -7);
      type.set(base, 'histogram');
      for (const suffix of ['_bucket', '_count', '_sum']) parts.add(base + suffix);
    } else if (s.labels.quantile !== undefined && names.has(`${name}_count`)) {
      type.set(name, 'summary');
      for (const suffix of ['_count', '_sum']) parts.add(name + suffix);
    }
  }
  for (const name of names) {
    if (type.has(name) || parts.has(name)) continue;
    type.set(name, name.endsWith('_total') ? 'counter' : 'unknown');
  }
  const out = new Map<string, MetricMetadata>();
  for (const name of [...type.keys()].sort()) out.set(name, { type: type.get(name)!, help: '', unit: '' });
  return out;
}
