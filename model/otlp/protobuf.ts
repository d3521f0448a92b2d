// ExportMetricsServiceRequest protobuf → types.ts, walked field by field with protobufjs'
// Reader (field numbers and types as metrics.proto declares them). Faster than decoding
// message objects: no object per KeyValue, Long or AnyValue, and a point's attributes stay
// bytes until they are needed — the same bytes give the same `key`, which samples.ts memoises
// series names by, so a series seen before costs a lookup. test/otlp/protobuf.test.ts checks
// this walker against protobufjs' own decoding of metrics.proto.
import protobuf from 'protobufjs';
import {
  OtlpFormatError,
  type Attribute,
  type EncodedAttributes,
  type ExponentialBuckets,
  type ExponentialPoint,
  type HistogramPoint,
  type Metric,
  type MetricData,
  type NumberPoint,
  type PointBase,
  type ResourceMetrics,
  type ScopeMetrics,
  type SummaryPoint,
  type Temporality,
} from './types.js';

type Reader = protobuf.Reader;

const VARINT = 0;
const I64 = 1;
const LEN = 2;
/** AnyValue arrays and lists nest; deeper than this is refused rather than recursed into. */
const MAX_DEPTH = 32;
const TWO_32 = 4294967296;

export function readProtobufRequest(body: Uint8Array): ResourceMetrics[] {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const r = protobuf.Reader.create(buf);
  try {
    const out: ResourceMetrics[] = [];
    each(r, r.len, 'ExportMetricsServiceRequest', (field, wt) => (field === 1 ? (out.push(nested(r, wt, 'resource_metrics', (end) => resourceMetrics(r, end))), true) : false));
    return out;
  } catch (error) {
    throw new OtlpFormatError(`not an ExportMetricsServiceRequest protobuf message: ${(error as Error).message}`);
  }
}

/** Calls `field` for every field up to `end`; it returns false for fields it does not read, which are skipped. */
function each(r: Reader, end: number, what: string, field: (no: number, wireType: number, fieldStart: number) => boolean): void {
  while (r.pos < end) {
    const fieldStart = r.pos;
    const tag = r.tag();
    const no = tag >>> 3;
    const wt = tag & 7;
    if (no === 0) throw new OtlpFormatError(`${what}: field number 0`);
    if (!field(no, wt, fieldStart)) r.skipType(wt, 0, no);
    if (r.pos > end) throw new OtlpFormatError(`${what}: a field runs past the end of its message`);
  }
}

function expect(wt: number, want: number, what: string): void {
  if (wt !== want) throw new OtlpFormatError(`${what} has wire type ${wt}, not ${want}`);
}

/** An embedded message: its length, then `read(end)`. */
function nested<T>(r: Reader, wt: number, what: string, read: (end: number) => T): T {
  expect(wt, LEN, what);
  const length = r.size();
  const end = r.pos + length;
  if (end > r.len) throw new OtlpFormatError(`${what}: ${length} bytes declared, ${r.len - r.pos} left`);
  const value = read(end);
  r.pos = end;
  return value;
}

function resourceMetrics(r: Reader, end: number): ResourceMetrics {
  const attributes: Attribute[] = [];
  let resourceKey = '';
  const scopes: { start: number; end: number }[] = [];
  each(r, end, 'ResourceMetrics', (no, wt) => {
    if (no === 1)
      nested(r, wt, 'resource', (e) => {
        // A message may come in parts (protobuf merges them): the key covers every part.
        resourceKey += lengthPrefixed(latin1(r, r.pos, e));
        each(r, e, 'Resource', (f, w) => (f === 1 ? (attributes.push(nested(r, w, 'attribute', (e2) => keyValue(r, e2, 0))), true) : false));
      });
    else if (no === 2) nested(r, wt, 'scope_metrics', (e) => scopes.push({ start: r.pos, end: e }));
    else return false;
    return true;
  });
  // Scopes are read after the resource, whichever order the fields came in: their key includes it.
  const out = scopes.map((s) => {
    r.pos = s.start;
    return scopeMetrics(r, s.end, resourceKey);
  });
  r.pos = end;
  return { attributes, scopes: out };
}

function scopeMetrics(r: Reader, end: number, resourceKey: string): ScopeMetrics {
  const scope: ScopeMetrics = { key: null, name: '', version: '', schemaUrl: '', attributes: [], metrics: [] };
  let scopeKey = '';
  each(r, end, 'ScopeMetrics', (no, wt) => {
    if (no === 1)
      nested(r, wt, 'scope', (e) => {
        scopeKey += lengthPrefixed(latin1(r, r.pos, e));
        each(r, e, 'InstrumentationScope', (f, w) => {
          if (f === 1) scope.name = string(r, w, 'scope name');
          else if (f === 2) scope.version = string(r, w, 'scope version');
          else if (f === 3) scope.attributes.push(nested(r, w, 'scope attribute', (e2) => keyValue(r, e2, 0)));
          else return false;
          return true;
        });
      });
    else if (no === 2) scope.metrics.push(nested(r, wt, 'metric', (e) => metric(r, e)));
    else if (no === 3) scope.schemaUrl = string(r, wt, 'schema_url');
    else return false;
    return true;
  });
  // Length-prefixed parts, so no two (resource, scope) pairs give one key.
  scope.key = `${lengthPrefixed(resourceKey)}${lengthPrefixed(scopeKey)}${scope.schemaUrl}`;
  return scope;
}

function metric(r: Reader, end: number): Metric {
  const m: Metric = { name: '', unit: '', data: null };
  each(r, end, 'Metric', (no, wt) => {
    if (no === 1) m.name = string(r, wt, 'metric name');
    else if (no === 3) m.unit = string(r, wt, 'metric unit');
    else if (no === 5) m.data = nested(r, wt, 'gauge', (e) => ({ type: 'gauge', points: points(r, e, 'gauge', numberPoint) }));
    else if (no === 7) m.data = nested(r, wt, 'sum', (e) => sum(r, e));
    else if (no === 9) m.data = nested(r, wt, 'histogram', (e) => ({ type: 'histogram', ...temporal(r, e, 'histogram', histogramPoint) }));
    else if (no === 10) m.data = nested(r, wt, 'exponential_histogram', (e) => ({ type: 'exponential_histogram', ...temporal(r, e, 'exponential_histogram', exponentialPoint) }));
    else if (no === 11) m.data = nested(r, wt, 'summary', (e) => ({ type: 'summary', points: points(r, e, 'summary', summaryPoint) }));
    else return false;
    return true;
  });
  return m;
}

function points<P>(r: Reader, end: number, what: string, read: (r: Reader, end: number) => P): P[] {
  const out: P[] = [];
  each(r, end, what, (no, wt) => (no === 1 ? (out.push(nested(r, wt, `${what} data point`, (e) => read(r, e))), true) : false));
  return out;
}

const TEMPORALITY: Temporality[] = ['unspecified', 'delta', 'cumulative'];

/** data_points (1) and aggregation_temporality (2) of a Histogram or ExponentialHistogram. */
function temporal<P>(r: Reader, end: number, what: string, read: (r: Reader, end: number) => P): { temporality: Temporality; points: P[] } {
  const out = { temporality: 'unspecified' as Temporality, points: [] as P[] };
  each(r, end, what, (no, wt) => {
    if (no === 1) out.points.push(nested(r, wt, `${what} data point`, (e) => read(r, e)));
    else if (no === 2) out.temporality = temporality(r, wt, what);
    else return false;
    return true;
  });
  return out;
}

function sum(r: Reader, end: number): MetricData {
  const out = { type: 'sum' as const, temporality: 'unspecified' as Temporality, monotonic: false, points: [] as NumberPoint[] };
  each(r, end, 'sum', (no, wt) => {
    if (no === 1) out.points.push(nested(r, wt, 'sum data point', (e) => numberPoint(r, e)));
    else if (no === 2) out.temporality = temporality(r, wt, 'sum');
    else if (no === 3) (expect(wt, VARINT, 'is_monotonic'), (out.monotonic = r.bool()));
    else return false;
    return true;
  });
  return out;
}

function temporality(r: Reader, wt: number, what: string): Temporality {
  expect(wt, VARINT, `${what} aggregation_temporality`);
  const v = r.int32();
  const t = TEMPORALITY[v];
  if (t === undefined) throw new OtlpFormatError(`${what}: unknown aggregation_temporality ${v}`);
  return t;
}

// ---- data points ----

/** Fields every point kind has, at their numbers for that kind. */
interface PointFields {
  attributes: number;
  flags: number;
}

class PointReader {
  readonly base: PointBase = { attributes: [], startMs: 0, timeMs: 0, noRecordedValue: false };
  private attrs: Attrs | null = null;

  constructor(
    private readonly r: Reader,
    private readonly at: PointFields,
  ) {}

  /** Reads a field common to all points (`fieldStart`: where its tag began); false when `no` is not one. */
  common(no: number, wt: number, fieldStart: number): boolean {
    const r = this.r;
    if (no === this.at.attributes) {
      expect(wt, LEN, 'attribute');
      const length = r.size();
      if (r.pos + length > r.len) throw new OtlpFormatError(`attribute: ${length} bytes declared, ${r.len - r.pos} left`);
      r.pos += length;
      (this.attrs ??= new Attrs(r.buf as Buffer)).add(fieldStart, r.pos);
    } else if (no === 2) this.base.startMs = nanosToMs(r, wt, 'start_time_unix_nano');
    else if (no === 3) this.base.timeMs = nanosToMs(r, wt, 'time_unix_nano');
    else if (no === this.at.flags) (expect(wt, VARINT, 'flags'), (this.base.noRecordedValue = (r.uint32() & 1) === 1));
    else return false;
    return true;
  }

  done(): PointBase {
    if (this.attrs !== null) this.base.attributes = this.attrs;
    return this.base;
  }
}

function numberPoint(r: Reader, end: number): NumberPoint {
  const p = new PointReader(r, { attributes: 7, flags: 8 });
  let value: number | bigint | null = null;
  each(r, end, 'number data point', (no, wt, at) => {
    if (p.common(no, wt, at)) return true;
    if (no === 4) (expect(wt, I64, 'as_double'), (value = r.double()));
    else if (no === 6) (expect(wt, I64, 'as_int'), (value = sfixed64(r)));
    else return false;
    return true;
  });
  const b = p.done();
  return { attributes: b.attributes, startMs: b.startMs, timeMs: b.timeMs, noRecordedValue: b.noRecordedValue, value };
}

function histogramPoint(r: Reader, end: number): HistogramPoint {
  const p = new PointReader(r, { attributes: 9, flags: 10 });
  const h = { count: 0, sum: null as number | null, bucketCounts: [] as number[], explicitBounds: [] as number[] };
  each(r, end, 'histogram data point', (no, wt, at) => {
    if (p.common(no, wt, at)) return true;
    if (no === 4) h.count = fixed64(r, wt, 'count');
    else if (no === 5) (expect(wt, I64, 'sum'), (h.sum = r.double()));
    else if (no === 6) repeated(r, wt, I64, () => h.bucketCounts.push(fixed64(r, I64, 'bucket_counts')), 'bucket_counts');
    else if (no === 7) repeated(r, wt, I64, () => h.explicitBounds.push(r.double()), 'explicit_bounds');
    else return false;
    return true;
  });
  return { ...p.done(), ...h };
}

function exponentialPoint(r: Reader, end: number): ExponentialPoint {
  const p = new PointReader(r, { attributes: 1, flags: 10 });
  const e = { count: 0, scale: 0, zeroCount: 0, zeroThreshold: 0, positive: NO_BUCKETS, negative: NO_BUCKETS };
  each(r, end, 'exponential histogram data point', (no, wt, at) => {
    if (p.common(no, wt, at)) return true;
    if (no === 4) e.count = fixed64(r, wt, 'count');
    else if (no === 6) (expect(wt, VARINT, 'scale'), (e.scale = r.sint32()));
    else if (no === 7) e.zeroCount = fixed64(r, wt, 'zero_count');
    else if (no === 8) e.positive = nested(r, wt, 'positive', (end2) => buckets(r, end2));
    else if (no === 9) e.negative = nested(r, wt, 'negative', (end2) => buckets(r, end2));
    else if (no === 14) (expect(wt, I64, 'zero_threshold'), (e.zeroThreshold = r.double()));
    else return false;
    return true;
  });
  return { ...p.done(), ...e };
}

const NO_BUCKETS: ExponentialBuckets = Object.freeze({ offset: 0, counts: [] as number[] }) as ExponentialBuckets;

function buckets(r: Reader, end: number): ExponentialBuckets {
  const b = { offset: 0, counts: [] as number[] };
  each(r, end, 'buckets', (no, wt) => {
    if (no === 1) (expect(wt, VARINT, 'offset'), (b.offset = r.sint32()));
    else if (no === 2) repeated(r, wt, VARINT, () => b.counts.push(uvarint64(r)), 'bucket_counts');
    else return false;
    return true;
  });
  return b;
}

function summaryPoint(r: Reader, end: number): SummaryPoint {
  const p = new PointReader(r, { attributes: 7, flags: 8 });
  const s = { count: 0, sum: 0, quantiles: [] as { quantile: number; value: number }[] };
  each(r, end, 'summary data point', (no, wt, at) => {
    if (p.common(no, wt, at)) return true;
    if (no === 4) s.count = fixed64(r, wt, 'count');
    else if (no === 5) (expect(wt, I64, 'sum'), (s.sum = r.double()));
    else if (no === 6)
      s.quantiles.push(
        nested(r, wt, 'quantile_values', (e) => {
          const q = { quantile: 0, value: 0 };
          each(r, e, 'ValueAtQuantile', (f, w) => {
            if (f === 1) (expect(w, I64, 'quantile'), (q.quantile = r.double()));
            else if (f === 2) (expect(w, I64, 'value'), (q.value = r.double()));
            else return false;
            return true;
          });
          return q;
        }),
      );
    else return false;
    return true;
  });
  return { ...p.done(), ...s };
}

/** A repeated scalar, packed (one length-delimited run) or not (one element per field). */
function repeated(r: Reader, wt: number, elementType: number, readOne: () => void, what: string): void {
  if (wt === elementType) return readOne();
  expect(wt, LEN, what);
  const length = r.size();
  const end = r.pos + length;
  if (end > r.len) throw new OtlpFormatError(`${what}: the packed run runs past the end of the body`);
  while (r.pos < end) readOne();
  if (r.pos !== end) throw new OtlpFormatError(`${what}: the packed run ends inside an element`);
}

// ---- scalars ----

function string(r: Reader, wt: number, what: string): string {
  expect(wt, LEN, what);
  return r.stringVerify();
}

/** A fixed64 as a number (exact below 2^53). */
function fixed64(r: Reader, wt: number, what: string): number {
  expect(wt, I64, what);
  const lo = r.fixed32();
  return r.fixed32() * TWO_32 + lo;
}

/** An sfixed64: a number within ±2^53, else a bigint. */
function sfixed64(r: Reader): number | bigint {
  const lo = r.fixed32();
  const hi = r.sfixed32();
  const n = hi * TWO_32 + lo;
  return Number.isSafeInteger(n) ? n : (BigInt(hi) << 32n) + BigInt(lo);
}

/** A fixed64 of nanoseconds as epoch ms, floored exactly: hi·2^32 + lo = hi·4294·10^6 + (hi·967296 + lo). */
function nanosToMs(r: Reader, wt: number, what: string): number {
  expect(wt, I64, what);
  const lo = r.fixed32();
  const hi = r.fixed32();
  return hi * 4294 + Math.floor((hi * 967296 + lo) / 1e6);
}

/** A uint64 varint as a number (exact below 2^53). */
function uvarint64(r: Reader): number {
  let value = 0;
  for (let i = 0; i < 10; i++) {
    if (r.pos >= r.len) throw new OtlpFormatError('a varint runs past the end of the body');
    const b = r.buf[r.pos++]!;
    value += (b & 0x7f) * 2 ** (7 * i);
    if (b < 0x80) return value;
  }
  throw new OtlpFormatError('a varint longer than 10 bytes');
}

const lengthPrefixed = (text: string): string => `${text.length}:${text}`;

function latin1(r: Reader, start: number, end: number): string {
  return (r.buf as Buffer).toString('latin1', start, end);
}

// ---- attributes ----

/** A point's attribute fields, kept as byte ranges of the body until decoded. */
class Attrs implements EncodedAttributes {
  private readonly ranges: number[] = [];
  private text: string | null = null;

  constructor(private readonly buf: Buffer) {}

  add(start: number, end: number): void {
    const n = this.ranges.length;
    if (n > 0 && this.ranges[n - 1] === start) this.ranges[n - 1] = end;
    else this.ranges.push(start, end);
  }

  /** The fields' bytes (tags and lengths included, so concatenation is unambiguous) as latin1 text. */
  get key(): string {
    if (this.text === null) {
      let t = '';
      for (let i = 0; i < this.ranges.length; i += 2) t += this.buf.toString('latin1', this.ranges[i]!, this.ranges[i + 1]!);
      this.text = t;
    }
    return this.text;
  }

  /** The attributes; an OtlpFormatError when their bytes (checked only for length so far) are damaged. */
  decode(): Attribute[] {
    const out: Attribute[] = [];
    try {
      for (let i = 0; i < this.ranges.length; i += 2) {
        const r = protobuf.Reader.create(this.buf.subarray(this.ranges[i]!, this.ranges[i + 1]!));
        while (r.pos < r.len) {
          const tag = r.tag();
          out.push(nested(r, tag & 7, 'attribute', (e) => keyValue(r, e, 0)));
        }
      }
    } catch (error) {
      throw error instanceof OtlpFormatError ? error : new OtlpFormatError((error as Error).message);
    }
    return out;
  }
}

function keyValue(r: Reader, end: number, depth: number): Attribute {
  const [key, value] = keyAndValue(r, end, depth);
  return [key, textOf(value)];
}

function keyAndValue(r: Reader, end: number, depth: number): [string, Raw] {
  let key = '';
  let value: Raw = null;
  each(r, end, 'KeyValue', (no, wt) => {
    if (no === 1) key = string(r, wt, 'attribute key');
    else if (no === 2) value = nested(r, wt, 'attribute value', (e) => anyValue(r, e, depth + 1));
    else return false;
    return true;
  });
  return [key, value];
}

/** An AnyValue's value; null when none of its fields is set. */
type Raw = string | number | boolean | null | bigint | Raw[] | { [k: string]: Raw };

/** Text as attributes.ts renders values: strings as they are, scalars printed, lists and maps as JSON (no value: ''). */
function textOf(v: Raw): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? (Number.isSafeInteger(Number(x)) ? Number(x) : String(x)) : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
}

function anyValue(r: Reader, end: number, depth: number): Raw {
  if (depth > MAX_DEPTH) throw new OtlpFormatError(`attribute values nest deeper than ${MAX_DEPTH}`);
  let value: Raw = null;
  each(r, end, 'AnyValue', (no, wt) => {
    if (no === 1) value = string(r, wt, 'string_value');
    else if (no === 2) (expect(wt, VARINT, 'bool_value'), (value = r.bool()));
    else if (no === 3) (expect(wt, VARINT, 'int_value'), (value = int64(r)));
    else if (no === 4) (expect(wt, I64, 'double_value'), (value = r.double()));
    else if (no === 5) value = nested(r, wt, 'array_value', (e) => elements(r, e, 'ArrayValue', (e2) => anyValue(r, e2, depth + 1)));
    else if (no === 6) value = nested(r, wt, 'kvlist_value', (e) => Object.fromEntries(elements(r, e, 'KeyValueList', (e2) => keyAndValue(r, e2, depth + 1))));
    else if (no === 7) (expect(wt, LEN, 'bytes_value'), (value = Buffer.from(r.bytes()).toString('base64')));
    else return false;
    return true;
  });
  return value;
}

/** The `values` (field 1) of an ArrayValue or KeyValueList. */
function elements<T>(r: Reader, end: number, what: string, read: (end: number) => T): T[] {
  const out: T[] = [];
  each(r, end, what, (no, wt) => (no === 1 ? (out.push(nested(r, wt, `${what} element`, read)), true) : false));
  return out;
}

function int64(r: Reader): bigint {
  let value = 0n;
  for (let i = 0n; i < 10n; i++) {
    if (r.pos >= r.len) throw new OtlpFormatError('a varint runs past the end of the body');
    const b = r.buf[r.pos++]!;
    value |= BigInt(b & 0x7f) << (7n * i);
    if (b < 0x80) return BigInt.asIntN(64, value);
  }
  throw new OtlpFormatError('a varint longer than 10 bytes');
}
