// OTLP data points → ferrite samples, as Prometheus' OTLP endpoint maps them (README
// "OpenTelemetry"): gauges and non-monotonic cumulative sums as gauges, monotonic cumulative
// sums as counters (`_total`), explicit-bucket histograms as `_bucket{le}` / `_sum` / `_count`,
// summaries as `{quantile}` / `_sum` / `_count`, exponential histograms as one circllhist
// histogram metric. Each data point is one item: all its samples, or the reason it is rejected.
import { histogramToBase64 } from '../histogram/serialize.js';
import type { TaggedSample } from '../tagged-sample.js';
import { exponentialToCircllhist, isEmptyExponential, type ExponentialCounts } from './exponential.js';
import { labelName, metricName, type NameKind } from './names.js';
import type { Attribute, ExponentialPoint, HistogramPoint, Metric, NumberPoint, PointBase, ResourceMetrics, ScopeMetrics, SummaryPoint } from './types.js';

export type Tags = [string, string][];

/** A point's samples, or the reason it is rejected. */
export type PointItem = TaggedSample[] | string;

/**
 * What becomes of a cumulative exponential histogram point: the counts to store for it (the
 * change since the series' previous point), or null to store nothing. `key` names the series.
 */
export type CumulativeExponential = (key: string, point: ExponentialPoint) => ExponentialCounts | null;

export function pointItems(resources: readonly ResourceMetrics[], cumulative: CumulativeExponential): PointItem[] {
  const items: PointItem[] = [];
  for (const r of resources) {
    for (const s of r.scopes) {
      const labels = scopeLabels(r, s);
      for (const m of s.metrics) items.push(...metricItems(m, labels, cumulative));
    }
  }
  return items;
}

/** Labels every point of a scope gets: resource attributes (under point attributes), then scope and job/instance (over them). */
interface ScopeLabels {
  under: Tags;
  over: Tags;
}

function scopeLabels(r: ResourceMetrics, s: ScopeMetrics): ScopeLabels {
  const under = joined(r.attributes);
  const over: Tags = [];
  if (s.name !== '') {
    over.push(['otel_scope_name', s.name], ['otel_scope_version', s.version], ['otel_scope_schema_url', s.schemaUrl]);
    for (const [k, v] of s.attributes) over.push([labelName(`otel_scope_${k}`), v]);
  }
  const attr = (key: string): string | undefined => r.attributes.find(([k]) => k === key)?.[1];
  const service = attr('service.name');
  const namespace = attr('service.namespace');
  const instance = attr('service.instance.id');
  if (service !== undefined) over.push(['job', namespace !== undefined ? `${namespace}/${service}` : service]);
  if (instance !== undefined) over.push(['instance', instance]);
  return { under, over };
}

/** Attributes as labels; two that map to one label name are joined with `;` (Prometheus' rule). */
function joined(attributes: readonly Attribute[]): Tags {
  const out = new Map<string, string>();
  for (const [k, v] of attributes) {
    const name = labelName(k);
    const seen = out.get(name);
    out.set(name, seen === undefined ? v : `${seen};${v}`);
  }
  return [...out];
}

function pointTags(p: PointBase, scope: ScopeLabels): Tags {
  const tags = new Map(joined(p.attributes));
  for (const [k, v] of scope.under) if (!tags.has(k)) tags.set(k, v);
  for (const [k, v] of scope.over) tags.set(k, v);
  return [...tags];
}

const TEMPORALITY_ADVICE = "ferrite stores cumulative sums and histograms only (set the exporter's temporality preference to cumulative)";

function metricItems(m: Metric, scope: ScopeLabels, cumulative: CumulativeExponential): PointItem[] {
  const at = `metric '${m.name}'`;
  if (m.data === null) return [`${at} has no data of a type ferrite reads (gauge, sum, histogram, exponential histogram, summary); counted as one rejected point`];
  const d = m.data;
  if (m.name === '') return d.points.map(() => 'a metric has an empty name');
  const each = <P extends PointBase>(points: readonly P[], kind: NameKind | null, sample: (p: P, name: string, tags: Tags) => PointItem, refuse?: string): PointItem[] =>
    points.map((p, i) => {
      const where = `${at} point ${i}`;
      if (refuse !== undefined) return `${where}: ${refuse}`;
      if (p.timeMs === 0) return `${where}: time_unix_nano is not set`;
      const item = sample(p, kind === null ? m.name : metricName(m.name, m.unit, kind), pointTags(p, scope));
      return typeof item === 'string' ? `${where}: ${item}` : item;
    });
  switch (d.type) {
    case 'gauge':
      return each(d.points, 'gauge', numberSamples);
    case 'sum':
      return each(d.points, d.monotonic ? 'counter' : 'gauge', numberSamples, temporalityProblem(d.temporality, 'sum'));
    case 'histogram':
      return each(d.points, 'histogram', histogramSamples, temporalityProblem(d.temporality, 'histogram'));
    case 'summary':
      return each(d.points, 'summary', summarySamples);
    case 'exponential_histogram': {
      if (d.temporality === 'unspecified') return each(d.points, null, () => '', 'the aggregation temporality is unspecified');
      const delta = d.temporality === 'delta';
      return each(d.points, 'histogram', (p, name, tags) => exponentialSamples(p, name, tags, delta ? null : cumulative));
    }
  }
}

function temporalityProblem(t: 'unspecified' | 'delta' | 'cumulative', what: string): string | undefined {
  if (t === 'cumulative') return undefined;
  return t === 'delta' ? `a ${what} with delta temporality: ${TEMPORALITY_ADVICE}` : `a ${what} with unspecified aggregation temporality`;
}

export function seriesKey(name: string, tags: Tags): string {
  return JSON.stringify([name, tags]);
}

const sample = (name: string, tags: Tags, ts: number, value: TaggedSample['value']): TaggedSample => ({ name, tags, ts, value });

function numberSamples(p: NumberPoint, name: string, tags: Tags): PointItem {
  if (p.noRecordedValue) return [sample(name, tags, p.timeMs, null)];
  if (p.value === null) return 'the point has no value (neither as_double nor as_int)';
  return [sample(name, tags, p.timeMs, p.value)];
}

function histogramSamples(p: HistogramPoint, name: string, tags: Tags): PointItem {
  const bounds = p.explicitBounds;
  if (p.bucketCounts.length !== 0 && p.bucketCounts.length !== bounds.length + 1) return `${p.bucketCounts.length} bucket counts for ${bounds.length} explicit bounds (there must be one more count than bounds)`;
  for (let i = 0; i < bounds.length; i++) {
    if (Number.isNaN(bounds[i]) || (i > 0 && !(bounds[i]! > bounds[i - 1]!))) return `explicit bounds must increase strictly (bound ${i} is ${bounds[i]})`;
  }
  const value = (v: number): number | null => (p.noRecordedValue ? null : v);
  const out: TaggedSample[] = [];
  if (p.sum !== null) out.push(sample(`${name}_sum`, tags, p.timeMs, value(p.sum)));
  out.push(sample(`${name}_count`, tags, p.timeMs, value(p.count)));
  let below = 0;
  for (let i = 0; i < bounds.length && i < p.bucketCounts.length; i++) {
    below += p.bucketCounts[i]!;
    out.push(sample(`${name}_bucket`, [...tags, ['le', plainNumber(bounds[i]!)]], p.timeMs, value(below)));
  }
  out.push(sample(`${name}_bucket`, [...tags, ['le', '+Inf']], p.timeMs, value(p.count)));
  return out;
}

function summarySamples(p: SummaryPoint, name: string, tags: Tags): PointItem {
  const value = (v: number): number | null => (p.noRecordedValue ? null : v);
  const out: TaggedSample[] = [sample(`${name}_sum`, tags, p.timeMs, value(p.sum)), sample(`${name}_count`, tags, p.timeMs, value(p.count))];
  for (const q of p.quantiles) out.push(sample(name, [...tags, ['quantile', plainNumber(q.quantile)]], p.timeMs, value(q.value)));
  return out;
}

/** A delta point as it is; a cumulative one (`cumulative` given) as its change since the series' last point. */
function exponentialSamples(p: ExponentialPoint, name: string, tags: Tags, cumulative: CumulativeExponential | null): PointItem {
  const h = exponentialToCircllhist(p);
  if (typeof h === 'string') return h;
  if (p.noRecordedValue) return [];
  const counts = cumulative === null ? p : cumulative(seriesKey(name, tags), p);
  if (counts === null || isEmptyExponential(counts)) return [];
  const stored = counts === p ? h : exponentialToCircllhist(counts);
  if (typeof stored === 'string') return stored;
  return [sample(name, tags, p.timeMs, { histogram: histogramToBase64(stored) })];
}

/** A float as Go's strconv.FormatFloat(x, 'f', -1, 64) writes it (Prometheus' `le` and `quantile`): no exponent. */
export function plainNumber(x: number): string {
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (Number.isNaN(x)) return 'NaN';
  const text = String(x);
  if (!text.includes('e')) return text;
  const [mantissa, expText] = text.split('e') as [string, string];
  const exp = Number(expText);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const point = mantissa.replace('-', '').indexOf('.');
  const intLength = (point === -1 ? digits.length : point) + exp;
  const plain = intLength <= 0 ? `0.${'0'.repeat(-intLength)}${digits}` : intLength >= digits.length ? digits + '0'.repeat(intLength - digits.length) : `${digits.slice(0, intLength)}.${digits.slice(intLength)}`;
  return (negative ? '-' : '') + plain;
}
