// The FlatBuffer answers of the Graphite endpoints (graphite-irondb asks for them with
// `Accept: application/x-flatbuffer-metric-find-result-list` / `…-metric-get-result-list`).
// Schemas: ../shared/spec/fbs/metric_find.fbs and metric_get.fbs (namespace `metrics`, no file
// identifier). Built with the flatbuffers Builder; slot numbers follow the schemas' field order.
import { Builder } from 'flatbuffers';

export const FIND_RESULT_TYPE = 'application/x-flatbuffer-metric-find-result-list';
export const GET_RESULT_TYPE = 'application/x-flatbuffer-metric-get-result-list';

export interface LeafData {
  uuid: string;
  check_name: string;
  /** The stored metric name (canonical) to fetch. */
  name: string;
  category: string;
  egress_function: string;
}

export interface FindResult {
  leaf: boolean;
  name: string;
  leaf_data?: LeafData;
}

export interface GetResult {
  from: number;
  to: number;
  step: number;
  series: Record<string, (number | null)[]>;
}

/** MetricSearchResultList { results: [MetricSearchResult { leaf: byte, name, leaf_data: LeafData }] } */
export function encodeFindResults(results: readonly FindResult[]): Uint8Array {
  const b = new Builder(1024);
  const offsets = results.map((r) => {
    const name = b.createString(r.name);
    const leaf = r.leaf_data === undefined ? 0 : leafData(b, r.leaf_data);
    b.startObject(3);
    b.addFieldInt8(0, r.leaf ? 1 : 0, 0);
    b.addFieldOffset(1, name, 0);
    if (leaf !== 0) b.addFieldOffset(2, leaf, 0);
    return b.endObject();
  });
  const vector = offsetVector(b, offsets);
  b.startObject(1);
  b.addFieldOffset(0, vector, 0);
  b.finish(b.endObject());
  return b.asUint8Array();
}

/** A vector of table offsets (written back to front, as FlatBuffers requires). */
function offsetVector(b: Builder, offsets: readonly number[]): number {
  b.startVector(4, offsets.length, 4);
  for (let i = offsets.length - 1; i >= 0; i--) b.addOffset(offsets[i]!);
  return b.endVector();
}

function leafData(b: Builder, d: LeafData): number {
  const fields = [d.uuid, d.check_name, d.name, d.category, d.egress_function].map((s) => b.createString(s));
  b.startObject(5);
  fields.forEach((f, slot) => b.addFieldOffset(slot, f, 0));
  return b.endObject();
}

/** MetricGetResult { from_time, to_time, step: ulong, series: [MetricGetSeriesData { name, data: [{ type: int, value: double }] }] } */
export function encodeGetResult(r: GetResult): Uint8Array {
  const b = new Builder(1024);
  const series = Object.entries(r.series).map(([name, values]) => {
    const nameOffset = b.createString(name);
    const points = values.map((v) => {
      b.startObject(2);
      b.addFieldInt32(0, v === null ? 0 : 1, 0);
      b.addFieldFloat64(1, v ?? 0, 0);
      return b.endObject();
    });
    const data = offsetVector(b, points);
    b.startObject(2);
    b.addFieldOffset(0, nameOffset, 0);
    b.addFieldOffset(1, data, 0);
    return b.endObject();
  });
  const vector = offsetVector(b, series);
  b.startObject(4);
  b.addFieldInt64(0, BigInt(r.from), 0n);
  b.addFieldInt64(1, BigInt(r.to), 0n);
  b.addFieldInt64(2, BigInt(r.step), 0n);
  b.addFieldOffset(3, vector, 0);
  b.finish(b.endObject());
  return b.asUint8Array();
}
