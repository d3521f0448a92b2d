// FlatBuffer MetricList bodies (v1 `CIML`, v2 `CMLS`) built with the flatc-generated builders,
// for the ingest tests and the fuzzers. Each point becomes one Metric (one sample in v2).
import * as flatbuffers from 'flatbuffers';
import * as V1 from '../../model/metric-list/generated/v1/metric_list_v1_generated.js';
import * as V2 from '../../model/metric-list/generated/v2/metric_list_v2_generated.js';
import { UUID } from './node.js';

export type Value =
  | { t: 'int' | 'uint' | 'double'; v: number }
  | { t: 'long' | 'ulong'; v: bigint }
  | { t: 'string'; v: string }
  | { t: 'hist'; v: [number, number, bigint][]; cumulative?: boolean }
  | { t: 'absent-n' | 'absent-s' | 'absent-h' | 'none' };

/** The Metric table around a value: when, which check, which account. */
export interface Envelope {
  ts: bigint;
  checkName: string;
  /** v1: the uuid string; v2: the check_uuid bytes (a string is written as its ASCII). */
  uuid: string | Uint8Array;
  account: number;
}

export interface Point {
  name: string;
  tags?: string[];
  ts?: number | bigint;
  value: Value;
  /** MetricList generation (default 0). */
  gen?: number;
  /** Overrides of the list's envelope for this point's Metric. */
  envelope?: Partial<Envelope>;
}

export const UNION = { int: 1, uint: 2, long: 3, ulong: 4, double: 5, string: 6, hist: 7, 'absent-n': 8, 'absent-s': 9, 'absent-h': 10, none: 0 } as const;

const CHECK_NAME = 'web`http`c_5_1::http';

/** Builds the union member table for either layout (both generate the same value tables). */
function valueTable(b: flatbuffers.Builder, ns: typeof V1 | typeof V2, value: Value, layout: 'v1' | 'v2'): number {
  switch (value.t) {
    case 'int':
      return ns.IntValue.createIntValue(b, value.v);
    case 'uint':
      return ns.UintValue.createUintValue(b, value.v);
    case 'double':
      return ns.DoubleValue.createDoubleValue(b, value.v);
    case 'long':
      return ns.LongValue.createLongValue(b, value.v);
    case 'ulong':
      return ns.UlongValue.createUlongValue(b, value.v);
    case 'string':
      return ns.StringValue.createStringValue(b, b.createString(value.v));
    case 'hist': {
      let buckets: number;
      if (layout === 'v1') {
        const offs = value.v.map(([val, exp, count]) => V1.HistogramBucket.createHistogramBucket(b, val, exp, count));
        buckets = V1.Histogram.createBucketsVector(b, offs);
      } else {
        V2.Histogram.startBucketsVector(b, value.v.length);
        for (const [val, exp, count] of [...value.v].reverse()) V2.HistogramBucket.createHistogramBucket(b, count, val, exp);
        buckets = b.endVector();
      }
      return ns.Histogram.createHistogram(b, buckets, value.cumulative === true);
    }
    case 'absent-n':
      return ns.AbsentNumericValue.createAbsentNumericValue(b);
    case 'absent-s':
      return ns.AbsentStringValue.createAbsentStringValue(b);
    case 'absent-h':
      return ns.AbsentHistogramValue.createAbsentHistogramValue(b);
    case 'none':
      return 0;
  }
}

/** flatc makes no create helper for a table holding a table: start, add, end. */
function metricTable(b: flatbuffers.Builder, ns: typeof V1 | typeof V2, ts: bigint, check: number, uuid: number, account: number, value: number): number {
  ns.Metric.startMetric(b);
  ns.Metric.addTimestamp(b, ts);
  ns.Metric.addCheckName(b, check);
  ns.Metric.addCheckUuid(b, uuid);
  ns.Metric.addAccountId(b, account);
  ns.Metric.addValue(b, value);
  return ns.Metric.endMetric(b);
}

function finish(b: flatbuffers.Builder, ns: typeof V1 | typeof V2, metrics: number[], identifier: boolean): Uint8Array {
  const list = ns.MetricList.createMetricList(b, ns.MetricList.createMetricsVector(b, metrics));
  if (identifier) ns.MetricList.finishMetricListBuffer(b, list);
  else b.finish(list);
  return b.asUint8Array().slice();
}

export function buildV1(points: Point[], envelope: Partial<Envelope> = {}, identifier = true): Uint8Array {
  const b = new flatbuffers.Builder(256);
  const metrics = points.map((p) => {
    const e = { ts: 1_000_000n, uuid: UUID, account: 5, checkName: CHECK_NAME, ...envelope, ...p.envelope };
    const tags = p.tags ? V1.MetricValue.createStreamTagsVector(b, p.tags.map((t) => b.createString(t))) : 0;
    const val = valueTable(b, V1, p.value, 'v1');
    const name = b.createString(p.name);
    V1.MetricValue.startMetricValue(b);
    V1.MetricValue.addName(b, name);
    V1.MetricValue.addTimestamp(b, BigInt(p.ts ?? 0));
    V1.MetricValue.addValueType(b, UNION[p.value.t]);
    if (p.gen !== undefined) V1.MetricValue.addGeneration(b, p.gen);
    if (val !== 0) V1.MetricValue.addValue(b, val);
    if (tags !== 0) V1.MetricValue.addStreamTags(b, tags);
    const mv = V1.MetricValue.endMetricValue(b);
    return metricTable(b, V1, BigInt(e.ts), b.createString(e.checkName), b.createString(e.uuid), e.account, mv);
  });
  return finish(b, V1, metrics, identifier);
}

/** v2; `uuidBytes` is the default check_uuid (16 raw bytes of UUID). */
export function buildV2(points: Point[], uuidBytes: Uint8Array = Buffer.from(UUID.replace(/-/g, ''), 'hex'), identifier = true): Uint8Array {
  const b = new flatbuffers.Builder(256);
  const metrics = points.map((p) => {
    const e = { ts: 2_000_000n, uuid: uuidBytes, account: 5, checkName: CHECK_NAME, ...p.envelope };
    const val = valueTable(b, V2, p.value, 'v2');
    const sample = V2.MetricSample.createMetricSample(b, BigInt(p.ts ?? 0), UNION[p.value.t], val, p.gen ?? 0);
    const samples = V2.MetricValue.createSamplesVector(b, [sample]);
    const tags = p.tags ? V2.MetricValue.createStreamTagsVector(b, p.tags.map((t) => b.createString(t))) : 0;
    const mv = V2.MetricValue.createMetricValue(b, b.createString(p.name), tags, samples);
    const uuid = V2.Metric.createCheckUuidVector(b, typeof e.uuid === 'string' ? Buffer.from(e.uuid) : e.uuid);
    return metricTable(b, V2, BigInt(e.ts), b.createString(e.checkName), uuid, e.account, mv);
  });
  return finish(b, V2, metrics, identifier);
}
