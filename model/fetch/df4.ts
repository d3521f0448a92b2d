// The DF4 result of POST /fetch, in JSON (default) and FlatBuffer form (docs/format/fetch.md).
// JSON never carries bare NaN/inf tokens: a non-finite number is null. In the FlatBuffer a
// numeric gap is NaN and a histogram gap an empty histogram, as DF4 readers expect.
import { Builder } from 'flatbuffers';
import type { Histogram as Hist } from '../histogram/index.js';
import type { Column } from './column.js';
import { HistogramBucket } from './generated/fetch/histogram-bucket.js';
import { ColumnMetaData, DF4, GlobalMetaData, HistSeries, Histogram, KVPair, Kind, NumericSeries, Series, SeriesContainer, TextEntry, TextMultiValue, TextSeries } from './generated/df4_generated.js';

export interface Df4Head {
  startMs: number;
  periodMs: number;
  count: number;
  errors: string[];
  warnings: string[];
  /** CAQL's `explain=true` report, JSON only. */
  explain?: unknown;
}

/** DF4.version in the FlatBuffer (the JSON form says "DF4"). */
const DF4_VERSION = 4;

/**
 * The DF4 JSON as bytes. A 100-stream day is ≈ 1.2 MB of cells, a thousand-stream read a
 * thousand short columns and ≈ 230 kB of meta: each column's cells are text rendered as its
 * stream was read, the columns are joined once and written with the head into one buffer of
 * their size, and a column whose tags are a frozen array (kept per metric by the fetch) has their
 * JSON kept too (JSON.stringify of a thousand columns' meta was ≈ 2 ms of the node's thread).
 */
export function df4Json(head: Df4Head, columns: readonly Column[]): Buffer {
  const h: Record<string, unknown> = { count: head.count, start: head.startMs / 1000, period: head.periodMs / 1000 };
  if (head.errors.length > 0) h.error = head.errors;
  if (head.warnings.length > 0) h.warning = head.warnings;
  if (head.explain !== undefined) h.explain = head.explain;
  // JSON.stringify({version, head, meta, data}), part by part.
  const meta = columns.map((c) => `{"kind":${JSON.stringify(c.kind)},"label":${JSON.stringify(c.label)},"tags":${tagsJson(c.tags)}}`).join(',');
  const data = columns.map((c) => (c.kind === 'numeric' && c.json !== undefined ? c.json : JSON.stringify(jsonCells(c)))).join(',');
  const text = [`{"version":"DF4","head":${JSON.stringify(h)},"meta":[`, meta, '],"data":[', data, ']}'];
  let bytes = 0;
  for (const part of text) bytes += Buffer.byteLength(part);
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const part of text) at += out.write(part, at);
  return out;
}

/** JSON of frozen tag arrays (a metric's, shared by every read of it). */
const keptTagsJson = new WeakMap<readonly string[], string>();

function tagsJson(tags: readonly string[]): string {
  if (!Object.isFrozen(tags)) return JSON.stringify(tags);
  let json = keptTagsJson.get(tags);
  if (json === undefined) keptTagsJson.set(tags, (json = JSON.stringify(tags)));
  return json;
}

/**
 * Numeric cells (NaN: no value) as df4Json writes a column of them: JSON.stringify writes a
 * non-finite number as null, as `jsonCells` does. They are copied into one array of unboxed
 * doubles first: a column of `number | null` and its `jsonCells` copy were two arrays and a
 * boxed number per cell, most of a 100-stream read's garbage on the node's thread (issue 31).
 */
export function numericCellsJson(cells: Float64Array): string {
  const plain = doublesScratch;
  plain.length = cells.length;
  for (let i = 0; i < cells.length; i++) plain[i] = cells[i]!;
  return JSON.stringify(plain);
}

/** Holds only doubles, so its elements stay unboxed (one array, reused: this thread renders one column at a time). */
const doublesScratch: number[] = [0.5];

function jsonCells(c: Column): unknown[] {
  switch (c.kind) {
    case 'numeric':
      return c.values.map((v) => (v === null || !Number.isFinite(v) ? null : v));
    case 'histogram':
      return c.values.map((h) => (h === null ? null : h.toLabelCounts()));
    case 'text':
      return c.values;
  }
}

export function df4FlatBuffer(head: Df4Head, columns: readonly Column[]): Uint8Array {
  const b = new Builder(1024);
  const strings = (list: string[]) => list.map((s) => b.createString(s));
  const error = GlobalMetaData.createErrorVector(b, strings(head.errors));
  const warning = GlobalMetaData.createWarningVector(b, strings(head.warnings));
  const headOffset = GlobalMetaData.createGlobalMetaData(b, BigInt(head.startMs), head.periodMs, head.count, error, warning, 0);
  const meta = DF4.createMetaVector(
    b,
    columns.map((c) => ColumnMetaData.createColumnMetaData(b, b.createString(c.label), ColumnMetaData.createMetaVector(b, c.tags.map((t) => tagPair(b, t))))),
  );
  const cols = DF4.createColumnsVector(b, columns.map((c) => seriesContainer(b, c)));
  DF4.startDF4(b);
  DF4.addVersion(b, DF4_VERSION);
  DF4.addHead(b, headOffset);
  DF4.addMeta(b, meta);
  DF4.addColumns(b, cols);
  b.finish(DF4.endDF4(b));
  return b.asUint8Array();
}

/** A `category:value` tag as a KV pair (a category-only tag has an empty value). */
function tagPair(b: Builder, tag: string): number {
  const colon = tag.indexOf(':');
  const [key, value] = colon < 0 ? [tag, ''] : [tag.slice(0, colon), tag.slice(colon + 1)];
  return KVPair.createKVPair(b, b.createString(key), b.createString(value));
}

function seriesContainer(b: Builder, c: Column): number {
  let kind: Kind;
  let type: Series;
  let data: number;
  switch (c.kind) {
    case 'numeric':
      [kind, type] = [Kind.NUMERIC, Series.NumericSeries];
      data = NumericSeries.createNumericSeries(b, NumericSeries.createValuesVector(b, c.values.map((v) => v ?? NaN)));
      break;
    case 'histogram':
      [kind, type] = [Kind.HIST, Series.HistSeries];
      data = HistSeries.createHistSeries(b, HistSeries.createValuesVector(b, c.values.map((h) => histogram(b, h))));
      break;
    case 'text':
      [kind, type] = [Kind.TEXT, Series.TextSeries];
      data = TextSeries.createTextSeries(
        b,
        TextSeries.createValuesVector(
          b,
          c.values.map((entries) =>
            TextMultiValue.createTextMultiValue(b, TextMultiValue.createEntriesVector(b, entries.map(([offset, text]) => TextEntry.createTextEntry(b, BigInt(offset), b.createString(text))))),
          ),
        ),
      );
      break;
  }
  SeriesContainer.startSeriesContainer(b);
  SeriesContainer.addKind(b, kind);
  SeriesContainer.addDataType(b, type);
  SeriesContainer.addData(b, data);
  return SeriesContainer.endSeriesContainer(b);
}

function histogram(b: Builder, h: Hist | null): number {
  const buckets = (h?.entries() ?? []).map((e) => HistogramBucket.createHistogramBucket(b, e.bin.val, e.bin.exp, e.count));
  return Histogram.createHistogram(b, Histogram.createBucketsVector(b, buckets));
}
