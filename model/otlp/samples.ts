// OTLP data points → ferrite samples, as Prometheus' OTLP endpoint maps them (README
// "OpenTelemetry"): gauges and non-monotonic cumulative sums as gauges, monotonic cumulative
// sums as counters (`_total`), explicit-bucket histograms as `_bucket{le}` / `_sum` / `_count`,
// summaries as `{quantile}` / `_sum` / `_count`, exponential histograms as one circllhist
// histogram metric. Each data point is one item: all its samples, or the reason it is rejected.
import { histogramToBase64 } from '../histogram/serialize.js';
import { taggedSpelling, type TaggedSample } from '../tagged-sample.js';
import { exponentialToCircllhist, isEmptyExponential, type ExponentialCounts } from './exponential.js';
import { labelName, metricName, type NameKind } from './names.js';
import { SeriesName, SpellingMemo } from './spelling-memo.js';
import { OtlpFormatError, type Attribute, type AttributeList, type ExponentialPoint, type HistogramPoint, type Metric, type NumberPoint, type PointBase, type ResourceMetrics, type ScopeMetrics, type SummaryPoint } from './types.js';

export type Tags = [string, string][];

/** One sample of a point: its metric name, series (spelling `name|ST[…]`, or why there is none), time and value. */
export interface OtlpSample {
  name: string;
  series: SeriesName;
  ts: number;
  value: TaggedSample['value'];
}

/** A point's samples, or the reason it is rejected. */
export type PointItem = OtlpSample[] | string;

/**
 * What becomes of a cumulative exponential histogram point: the counts to store for it (the
 * change since the series' previous point), or null to store nothing. `series` is its spelling.
 */
export type CumulativeExponential = (series: string, point: ExponentialPoint) => ExponentialCounts | null;

const memo = new SpellingMemo();

export function pointItems(resources: readonly ResourceMetrics[], cumulative: CumulativeExponential): PointItem[] {
  const items: PointItem[] = [];
  for (const r of resources) {
    for (const s of r.scopes) {
      const scope = scopeLabels(r, s);
      for (const m of s.metrics) for (const item of metricItems(m, scope, cumulative)) items.push(item);
    }
  }
  return items;
}

/** Labels every point of a scope gets: resource attributes (under point attributes), then scope and job/instance (over them). */
interface ScopeLabels {
  /** Memo key prefix of the scope (null: do not memoise). */
  key: string | null;
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
  return { key: s.key === null ? null : memo.scopeId(s.key), under, over };
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

function decoded(list: AttributeList): readonly Attribute[] {
  return Array.isArray(list) ? list : (list as { decode(): Attribute[] }).decode();
}

/** Names a point's series: its labels are worked out (once) only when a name is not memoised. */
class PointSeries {
  private tags: Tags | null = null;
  private readonly names: Map<string, SeriesName> | null;

  constructor(
    private readonly p: PointBase,
    private readonly scope: ScopeLabels,
  ) {
    const attrs = p.attributes;
    this.names = scope.key === null || Array.isArray(attrs) ? null : memo.point(`${scope.key}\u0001${(attrs as { key: string }).key}`);
  }

  /** The series of `name` with the point's labels, and one more label when `extra` is given. */
  series(name: string, extra?: readonly [string, string]): SeriesName {
    const spell = () => new SeriesName(taggedSpelling(name, extra === undefined ? this.labels() : [...this.labels(), extra]));
    if (this.names === null) return spell();
    // Stored names hold no NUL (names.ts), so this key is unambiguous.
    const key = extra === undefined ? name : `${name}\u0000${extra[0]}=${extra[1]}`;
    let found = this.names.get(key);
    if (found === undefined) this.names.set(key, (found = spell()));
    return found;
  }

  sample(name: string, value: TaggedSample['value'], extra?: readonly [string, string]): OtlpSample {
    return { name, series: this.series(name, extra), ts: this.p.timeMs, value };
  }

  private labels(): Tags {
    if (this.tags !== null) return this.tags;
    const tags = new Map(joined(decoded(this.p.attributes)));
    for (const [k, v] of this.scope.under) if (!tags.has(k)) tags.set(k, v);
    for (const [k, v] of this.scope.over) tags.set(k, v);
    return (this.tags = [...tags]);
  }
}

const TEMPORALITY_ADVICE = "ferrite stores cumulative sums and histograms only (set the exporter's temporality preference to cumulative)";

function metricItems(m: Metric, scope: ScopeLabels, cumulative: CumulativeExponential): PointItem[] {
  const at = `metric '${m.name}'`;
  if (m.data === null) return [`${at} has no data of a type ferrite reads (gauge, sum, histogram, exponential histogram, summary); counted as one rejected point`];
  const d = m.data;
  if (m.name === '') return d.points.map(() => 'a metric has an empty name');
  const each = <P extends PointBase>(points: readonly P[], kind: NameKind, sample: (p: P, name: string, series: PointSeries) => PointItem, refuse?: string): PointItem[] => {
    const name = metricName(m.name, m.unit, kind);
    return points.map((p, i) => {
      if (refuse !== undefined) return `${at} point ${i}: ${refuse}`;
      if (p.timeMs === 0) return `${at} point ${i}: time_unix_nano is not set`;
      const item = pointSamples(() => sample(p, name, new PointSeries(p, scope)));
      return typeof item === 'string' ? `${at} point ${i}: ${item}` : item;
    });
  };
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
      const problem = d.temporality === 'unspecified' ? 'an exponential histogram with unspecified aggregation temporality' : undefined;
      const delta = d.temporality === 'delta';
      return each(d.points, 'histogram', (p, name, series) => exponentialSamples(p, name, series, delta ? null : cumulative), problem);
    }
  }
}

/** A point's samples; protobuf attributes are decoded only now, so their damage rejects this point alone. */
function pointSamples(make: () => PointItem): PointItem {
  try {
    return make();
  } catch (error) {
    if (error instanceof OtlpFormatError) return `its attributes cannot be read: ${error.message}`;
    throw error;
  }
}

function temporalityProblem(t: 'unspecified' | 'delta' | 'cumulative', what: string): string | undefined {
  if (t === 'cumulative') return undefined;
  return t === 'delta' ? `a ${what} with delta temporality: ${TEMPORALITY_ADVICE}` : `a ${what} with unspecified aggregation temporality`;
}

function numberSamples(p: NumberPoint, name: string, series: PointSeries): PointItem {
  if (p.noRecordedValue) return [series.sample(name, null)];
  if (p.value === null) return 'the point has no value (neither as_double nor as_int)';
  return [series.sample(name, p.value)];
}

function histogramSamples(p: HistogramPoint, name: string, series: PointSeries): PointItem {
  const bounds = p.explicitBounds;
  if (p.bucketCounts.length !== 0 && p.bucketCounts.length !== bounds.length + 1) return `${p.bucketCounts.length} bucket counts for ${bounds.length} explicit bounds (there must be one more count than bounds)`;
  for (let i = 0; i < bounds.length; i++) {
    if (!Number.isFinite(bounds[i]) || (i > 0 && !(bounds[i]! > bounds[i - 1]!))) return `explicit bounds must be finite and increase strictly (bound ${i} is ${bounds[i]})`;
  }
  const value = (v: number): number | null => (p.noRecordedValue ? null : v);
  const out: OtlpSample[] = [];
  if (p.sum !== null) out.push(series.sample(`${name}_sum`, value(p.sum)));
  out.push(series.sample(`${name}_count`, value(p.count)));
  let below = 0;
  for (let i = 0; i < bounds.length && i < p.bucketCounts.length; i++) {
    below += p.bucketCounts[i]!;
    out.push(series.sample(`${name}_bucket`, value(below), ['le', plainNumber(bounds[i]!)]));
  }
  out.push(series.sample(`${name}_bucket`, value(p.count), ['le', '+Inf']));
  return out;
}

function summarySamples(p: SummaryPoint, name: string, series: PointSeries): PointItem {
  const value = (v: number): number | null => (p.noRecordedValue ? null : v);
  const out: OtlpSample[] = [series.sample(`${name}_sum`, value(p.sum)), series.sample(`${name}_count`, value(p.count))];
  for (const q of p.quantiles) out.push(series.sample(name, value(q.value), ['quantile', plainNumber(q.quantile)]));
  return out;
}

/** A delta point as it is; a cumulative one (`cumulative` given) as its change since the series' last point. */
function exponentialSamples(p: ExponentialPoint, name: string, series: PointSeries, cumulative: CumulativeExponential | null): PointItem {
  const h = exponentialToCircllhist(p);
  if (typeof h === 'string') return h;
  if (p.noRecordedValue) return [];
  const named = series.series(name);
  if (typeof named.spelling !== 'string') return named.spelling.reason;
  const counts = cumulative === null ? p : cumulative(named.spelling, p);
  if (counts === null || isEmptyExponential(counts)) return [];
  const stored = counts === p ? h : exponentialToCircllhist(counts);
  if (typeof stored === 'string') return stored;
  return [{ name, series: named, ts: p.timeMs, value: { histogram: histogramToBase64(stored) } }];
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
