// An OTLP metrics export as ferrite reads it, whichever encoding it came in (protobuf or the
// OTLP JSON mapping): plain numbers, attribute values already rendered as text, times in ms.

/** [key, value as text]; how each AnyValue kind becomes text is in attributes.ts. */
export type Attribute = readonly [string, string];

/**
 * A point's attributes as they came: decoded (JSON), or still protobuf (decoded on demand)
 * with `key`, text that is equal exactly when the encoded attributes are, to memoise by.
 */
export type AttributeList = readonly Attribute[] | EncodedAttributes;

export interface EncodedAttributes {
  readonly key: string;
  decode(): Attribute[];
}

export interface ResourceMetrics {
  attributes: Attribute[];
  scopes: ScopeMetrics[];
}

export interface ScopeMetrics {
  /** Equal exactly when resource and scope are (protobuf: their bytes); null when unknown (JSON). */
  key: string | null;
  name: string;
  version: string;
  schemaUrl: string;
  attributes: Attribute[];
  metrics: Metric[];
}

export type Temporality = 'unspecified' | 'delta' | 'cumulative';

export interface Metric {
  name: string;
  unit: string;
  /** null: none of the five data kinds this protocol version defines was set. */
  data: MetricData | null;
}

export type MetricData =
  | { type: 'gauge'; points: NumberPoint[] }
  | { type: 'sum'; temporality: Temporality; monotonic: boolean; points: NumberPoint[] }
  | { type: 'histogram'; temporality: Temporality; points: HistogramPoint[] }
  | { type: 'exponential_histogram'; temporality: Temporality; points: ExponentialPoint[] }
  | { type: 'summary'; points: SummaryPoint[] };

export interface PointBase {
  attributes: AttributeList;
  /** start_time_unix_nano in epoch ms (floor); 0 when unset. */
  startMs: number;
  /** time_unix_nano in epoch ms (floor); 0 when unset. */
  timeMs: number;
  /** flags bit 0, DATA_POINT_FLAGS_NO_RECORDED_VALUE_MASK: no value at this time (a staleness marker). */
  noRecordedValue: boolean;
}

export interface NumberPoint extends PointBase {
  /** as_double, or as_int (a bigint beyond ±2^53); null when neither is set. */
  value: number | bigint | null;
}

export interface HistogramPoint extends PointBase {
  count: number;
  sum: number | null;
  bucketCounts: number[];
  explicitBounds: number[];
}

export interface ExponentialBuckets {
  offset: number;
  counts: number[];
}

export interface ExponentialPoint extends PointBase {
  count: number;
  scale: number;
  zeroCount: number;
  zeroThreshold: number;
  positive: ExponentialBuckets;
  negative: ExponentialBuckets;
}

export interface SummaryPoint extends PointBase {
  count: number;
  sum: number;
  quantiles: { quantile: number; value: number }[];
}

/** The body cannot be read as an export request at all (400, nothing stored). */
export class OtlpFormatError extends Error {
  override name = 'OtlpFormatError';
}
