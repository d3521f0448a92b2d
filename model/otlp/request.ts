// An ExportMetricsServiceRequest in either decoded form — a protobufjs message (decode.ts) or
// the OTLP JSON mapping parsed by JSON.parse — read into types.ts. Both spell fields in
// lowerCamelCase, so one reader serves both; scalars accept either form (int64 as a Long, a
// number or a decimal string; doubles as numbers or "NaN"/"Infinity"/"-Infinity"; enums as
// numbers or names). A field of the wrong shape is an OtlpFormatError naming where it is.
import { attributesOf, doubleOf, integerText, isLong } from './attributes.js';
import {
  OtlpFormatError,
  type ExponentialBuckets,
  type ExponentialPoint,
  type HistogramPoint,
  type Metric,
  type MetricData,
  type NumberPoint,
  type PointBase,
  type ResourceMetrics,
  type ScopeMetrics,
  type Temporality,
} from './types.js';

type Obj = Record<string, unknown>;

export function readRequest(message: unknown): ResourceMetrics[] {
  const root = object(message, 'the request');
  return list(root.resourceMetrics, 'resourceMetrics').map((r, i) => readResource(object(r, `resourceMetrics[${i}]`), `resourceMetrics[${i}]`));
}

function readResource(r: Obj, where: string): ResourceMetrics {
  const resource = r.resource === undefined || r.resource === null ? {} : object(r.resource, `${where}.resource`);
  return {
    attributes: attributesOf(resource.attributes, `${where}.resource`),
    scopes: list(r.scopeMetrics, `${where}.scopeMetrics`).map((s, i) => readScope(object(s, `${where}.scopeMetrics[${i}]`), `${where}.scopeMetrics[${i}]`)),
  };
}

function readScope(s: Obj, where: string): ScopeMetrics {
  const scope = s.scope === undefined || s.scope === null ? {} : object(s.scope, `${where}.scope`);
  return {
    key: null,
    name: text(scope.name, `${where}.scope.name`),
    version: text(scope.version, `${where}.scope.version`),
    schemaUrl: text(s.schemaUrl, `${where}.schemaUrl`),
    attributes: attributesOf(scope.attributes, `${where}.scope`),
    metrics: list(s.metrics, `${where}.metrics`).map((m, i) => readMetric(object(m, `${where}.metrics[${i}]`), `${where}.metrics[${i}]`)),
  };
}

function readMetric(m: Obj, where: string): Metric {
  const name = text(m.name, `${where}.name`);
  const at = `metric '${name}'`;
  return { name, unit: text(m.unit, `${where}.unit`), data: readData(m, at) };
}

function readData(m: Obj, at: string): MetricData | null {
  if (present(m.gauge)) return { type: 'gauge', points: points(m.gauge, at, numberPoint) };
  if (present(m.sum)) {
    const sum = object(m.sum, `${at} sum`);
    return { type: 'sum', temporality: temporality(sum.aggregationTemporality, at), monotonic: bool(sum.isMonotonic, `${at} isMonotonic`), points: points(sum, at, numberPoint) };
  }
  if (present(m.histogram)) {
    const h = object(m.histogram, `${at} histogram`);
    return { type: 'histogram', temporality: temporality(h.aggregationTemporality, at), points: points(h, at, histogramPoint) };
  }
  if (present(m.exponentialHistogram)) {
    const h = object(m.exponentialHistogram, `${at} exponentialHistogram`);
    return { type: 'exponential_histogram', temporality: temporality(h.aggregationTemporality, at), points: points(h, at, exponentialPoint) };
  }
  if (present(m.summary)) return { type: 'summary', points: points(m.summary, at, summaryPoint) };
  return null;
}

function points<P>(data: unknown, at: string, read: (p: Obj, where: string) => P): P[] {
  const d = object(data, at);
  return list(d.dataPoints, `${at} dataPoints`).map((p, i) => read(object(p, `${at} point ${i}`), `${at} point ${i}`));
}

function pointBase(p: Obj, where: string): PointBase {
  return {
    attributes: attributesOf(p.attributes, where),
    startMs: nanosToMs(p.startTimeUnixNano, `${where} startTimeUnixNano`),
    timeMs: nanosToMs(p.timeUnixNano, `${where} timeUnixNano`),
    noRecordedValue: (uint(p.flags, `${where} flags`) & 1) === 1,
  };
}

function numberPoint(p: Obj, where: string): NumberPoint {
  let value: number | bigint | null = null;
  if (Object.hasOwn(p, 'asDouble') && p.asDouble !== null) value = doubleOf(p.asDouble, `${where} asDouble`);
  else if (Object.hasOwn(p, 'asInt') && p.asInt !== null) {
    const n = BigInt(integerText(p.asInt, `${where} asInt`));
    value = n >= -(2n ** 53n) && n <= 2n ** 53n ? Number(n) : n;
  }
  return { ...pointBase(p, where), value };
}

function histogramPoint(p: Obj, where: string): HistogramPoint {
  return {
    ...pointBase(p, where),
    count: uint64(p.count, `${where} count`),
    sum: optionalDouble(p, 'sum', where),
    bucketCounts: list(p.bucketCounts, `${where} bucketCounts`).map((c) => uint64(c, `${where} bucketCounts`)),
    explicitBounds: list(p.explicitBounds, `${where} explicitBounds`).map((b) => doubleOf(b, `${where} explicitBounds`)),
  };
}

function exponentialPoint(p: Obj, where: string): ExponentialPoint {
  return {
    ...pointBase(p, where),
    count: uint64(p.count, `${where} count`),
    scale: int32(p.scale, `${where} scale`),
    zeroCount: uint64(p.zeroCount, `${where} zeroCount`),
    zeroThreshold: p.zeroThreshold === undefined || p.zeroThreshold === null ? 0 : doubleOf(p.zeroThreshold, `${where} zeroThreshold`),
    positive: buckets(p.positive, `${where} positive`),
    negative: buckets(p.negative, `${where} negative`),
  };
}

function buckets(b: unknown, where: string): ExponentialBuckets {
  if (b === undefined || b === null) return { offset: 0, counts: [] };
  const o = object(b, where);
  return { offset: int32(o.offset, `${where} offset`), counts: list(o.bucketCounts, `${where} bucketCounts`).map((c) => uint64(c, `${where} bucketCounts`)) };
}

function summaryPoint(p: Obj, where: string) {
  return {
    ...pointBase(p, where),
    count: uint64(p.count, `${where} count`),
    sum: optionalDouble(p, 'sum', where) ?? 0,
    quantiles: list(p.quantileValues, `${where} quantileValues`).map((q, i) => {
      const o = object(q, `${where} quantileValues[${i}]`);
      return { quantile: optionalDouble(o, 'quantile', where) ?? 0, value: optionalDouble(o, 'value', where) ?? 0 };
    }),
  };
}

const TEMPORALITIES: Record<string, Temporality> = {
  '0': 'unspecified',
  '1': 'delta',
  '2': 'cumulative',
  AGGREGATION_TEMPORALITY_UNSPECIFIED: 'unspecified',
  AGGREGATION_TEMPORALITY_DELTA: 'delta',
  AGGREGATION_TEMPORALITY_CUMULATIVE: 'cumulative',
};

function temporality(v: unknown, at: string): Temporality {
  if (v === undefined || v === null) return 'unspecified';
  const t = TEMPORALITIES[String(v)];
  if (t === undefined) throw new OtlpFormatError(`${at}: unknown aggregationTemporality ${JSON.stringify(v)}`);
  return t;
}

// ---- scalars ----

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function object(v: unknown, where: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new OtlpFormatError(`${where} must be an object`);
  return v as Obj;
}

function list(v: unknown, where: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpFormatError(`${where} must be a list`);
  return v;
}

function text(v: unknown, where: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new OtlpFormatError(`${where} must be a string`);
  return v;
}

function bool(v: unknown, where: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new OtlpFormatError(`${where} must be true or false`);
  return v;
}

function optionalDouble(o: Obj, key: string, where: string): number | null {
  return Object.hasOwn(o, key) && o[key] !== null && o[key] !== undefined ? doubleOf(o[key], `${where} ${key}`) : null;
}

function uint(v: unknown, where: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff) return v;
  throw new OtlpFormatError(`${where}: ${JSON.stringify(v)} is not a uint32`);
}

function int32(v: unknown, where: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2 ** 31) return v;
  throw new OtlpFormatError(`${where}: ${JSON.stringify(v)} is not an int32`);
}

const UINT64_TEXT = /^\d{1,20}$/;
const TWO_32 = 4294967296;

/** A uint64 as a number (exact below 2^53). */
function uint64(v: unknown, where: string): number {
  if (v === undefined || v === null) return 0;
  if (isLong(v)) return (v.high >>> 0) * TWO_32 + (v.low >>> 0);
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  if (typeof v === 'string' && UINT64_TEXT.test(v) && BigInt(v) < 2n ** 64n) return Number(v);
  throw new OtlpFormatError(`${where}: ${JSON.stringify(v)} is not a uint64`);
}

/** A fixed64 of nanoseconds as epoch ms, floored exactly (no rounding through a double). */
function nanosToMs(v: unknown, where: string): number {
  if (v === undefined || v === null) return 0;
  if (isLong(v)) {
    // hi·2^32 + lo = hi·4294·10^6 + (hi·967296 + lo), and the bracket stays below 2^53.
    const hi = v.high >>> 0;
    return hi * 4294 + Math.floor((hi * 967296 + (v.low >>> 0)) / 1e6);
  }
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return Math.floor(v / 1e6);
  if (typeof v === 'string' && UINT64_TEXT.test(v) && BigInt(v) < 2n ** 64n) return Number(BigInt(v) / 1_000_000n);
  throw new OtlpFormatError(`${where}: ${JSON.stringify(v)} is not a uint64 of nanoseconds`);
}
