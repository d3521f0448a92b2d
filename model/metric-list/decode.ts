// FlatBuffer MetricList bodies of `POST /raw`, both wire layouts
// (../shared/spec/metric-list-wire.md): v1 (`CIML`, string uuid, one sample per value) and
// v2 (`CMLS`, byte uuid, a samples list). Every read is bounds-checked (reader.ts).
import { normalizeUuid } from '../check-field.js';
import { MetricListFormatError, SafeReader, type Table } from './reader.js';

export { MetricListFormatError };

export type MetricListLayout = 'v1' | 'v2';

export type DecodedValue =
  | { kind: 'numeric'; value: number | bigint | null }
  | { kind: 'text'; value: string | null }
  | { kind: 'histogram'; bins: { val: number; exp: number; count: bigint }[] | null; cumulative: boolean };

export interface DecodedSample {
  accountId: number;
  checkName: string;
  /** Lower-case canonical uuid; null when the bytes are neither 16 raw nor 36 ASCII. */
  checkUuid: string | null;
  /** The metric name with `stream_tags` appended as an `|ST[...]` section (canonicalised later). */
  name: string;
  /** Epoch ms: the sample's, or the envelope's when the sample's is 0. */
  ts: number;
  generation: number;
  value: DecodedValue;
}

export interface DecodedMetricList {
  layout: MetricListLayout;
  samples: DecodedSample[];
  skipped: { index: number; reason: string }[];
}

interface Envelope {
  accountId: number;
  checkName: string;
  checkUuid: string | null;
  ts: number;
}

const NOT_METRIC_LIST = new Set(['CIMM', 'CIMB', 'CMBS']);
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function decodeMetricList(bytes: Uint8Array): DecodedMetricList {
  if (bytes.length < 8) throw new MetricListFormatError(`a MetricList needs at least 8 bytes, got ${bytes.length}`);
  const id = String.fromCharCode(...bytes.subarray(4, 8));
  if (id === 'CIML') return decode(bytes, 'v1');
  if (id === 'CMLS') return decode(bytes, 'v2');
  if (NOT_METRIC_LIST.has(id)) throw new MetricListFormatError(`root is a ${id} buffer, not a MetricList`);
  // No identifier (it is optional): the layout that verifies wins, v2 first.
  try {
    return decode(bytes, 'v2');
  } catch (v2) {
    try {
      return decode(bytes, 'v1');
    } catch {
      throw new MetricListFormatError(`not a MetricList in either layout (as v2: ${(v2 as Error).message})`);
    }
  }
}

function decode(bytes: Uint8Array, layout: MetricListLayout): DecodedMetricList {
  const r = new SafeReader(bytes);
  const root = r.table(r.deref(0));
  const out: DecodedMetricList = { layout, samples: [], skipped: [] };
  const metrics = r.vector(root, 0, 4);
  const uuids = new UuidMemo();
  for (let i = 0; i < (metrics?.length ?? 0); i++) {
    const metric = r.table(r.deref(metrics!.start + 4 * i));
    const env = envelope(r, metric, layout, uuids);
    const value = r.subTable(metric, 4);
    if (value === null) continue;
    if (layout === 'v1') v1Sample(r, value, env, out);
    else v2Samples(r, value, env, out);
  }
  return out;
}

/** The last check uuid's text: every metric of a body usually carries the same 16 bytes. */
class UuidMemo {
  private bytes: Uint8Array | null = null;
  private text: string | null = null;

  textOf(bytes: Uint8Array | null): string | null {
    if (bytes === null) return null;
    const last = this.bytes;
    if (last !== null && sameBytes(last, bytes)) return this.text;
    this.bytes = bytes;
    return (this.text = uuidText(bytes));
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function envelope(r: SafeReader, metric: Table, layout: MetricListLayout, uuids: UuidMemo): Envelope {
  const tsAt = r.field(metric, 0, 8);
  const accountAt = r.field(metric, 3, 4);
  let uuidBytes: Uint8Array | null = null;
  if (layout === 'v1') {
    const text = r.string(metric, 2);
    uuidBytes = text === null ? null : Buffer.from(text, 'utf8');
  } else {
    const v = r.vector(metric, 2, 1);
    uuidBytes = v === null ? null : r.bytesOf(v);
  }
  return {
    ts: tsAt === 0 ? 0 : r.u64Number(tsAt),
    checkName: r.string(metric, 1) ?? '',
    accountId: accountAt === 0 ? 0 : r.i32(accountAt),
    checkUuid: uuids.textOf(uuidBytes),
  };
}

/** 16 raw bytes, or 36 ASCII characters (either layout may carry either). */
export function uuidText(bytes: Uint8Array | null): string | null {
  if (bytes === null) return null;
  if (bytes.length === 16) {
    const h = Buffer.from(bytes).toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  return bytes.length === 36 ? normalizeUuid(Buffer.from(bytes).toString('latin1')) : null;
}

function nameWithTags(r: SafeReader, value: Table, nameSlot: number, tagsSlot: number): string {
  return NAMES.lookup(r, value, nameSlot, tagsSlot) ?? decodeNameWithTags(r, value, nameSlot, tagsSlot);
}

function decodeNameWithTags(r: SafeReader, value: Table, nameSlot: number, tagsSlot: number): string {
  const name = r.string(value, nameSlot) ?? '';
  const tags = r.vector(value, tagsSlot, 4);
  const full = tags === null || tags.length === 0 ? name : `${name}|ST[${Array.from({ length: tags.length }, (_, i) => r.stringAt(r.deref(tags.start + 4 * i))).join(',')}]`;
  NAMES.remember(r, full);
  return full;
}

/**
 * Names by their bytes on the wire (the name string, then each stream tag string): a name seen
 * before costs a hash and a compare of its bytes instead of a UTF-8 decode per string and a
 * join, and comes back as the same string, whose hash the resolver's maps already know.
 * Bytes equal to ones that decoded as valid UTF-8 are valid, so a hit needs no validation.
 */
class NameMemo {
  private static readonly MAX_ENTRIES = 100_000;
  private static readonly MAX_SEGMENTS = 64;
  private readonly byHash = new Map<number, { raw: Uint32Array; name: string }>();
  /** The last lookup's segments (start, length pairs) and hash, for `remember`. */
  private readonly segments = new Int32Array(2 * (NameMemo.MAX_SEGMENTS + 1));
  private count = 0;
  private hash = 0;

  lookup(r: SafeReader, value: Table, nameSlot: number, tagsSlot: number): string | undefined {
    this.count = 0;
    const nameAt = r.field(value, nameSlot, 4);
    if (nameAt === 0) return undefined;
    this.add(r, r.deref(nameAt));
    const tags = r.vector(value, tagsSlot, 4);
    if (tags !== null && tags.length > NameMemo.MAX_SEGMENTS) {
      this.count = 0; // too many tags to remember: `remember` does nothing
      return undefined;
    }
    for (let i = 0; i < (tags?.length ?? 0); i++) this.add(r, r.deref(tags!.start + 4 * i));
    this.hash = this.hashOf(r.bytes);
    const known = this.byHash.get(this.hash);
    return known !== undefined && this.same(r.bytes, known.raw) ? known.name : undefined;
  }

  /** Keeps `name` for the bytes the last `lookup` saw. */
  remember(r: SafeReader, name: string): void {
    if (this.count === 0) return;
    if (this.byHash.size >= NameMemo.MAX_ENTRIES) this.byHash.clear();
    this.byHash.set(this.hash, { raw: this.concat(r.bytes), name });
    this.count = 0;
  }

  private add(r: SafeReader, target: number): void {
    this.segments[2 * this.count] = r.stringBytesAt(target);
    this.segments[2 * this.count + 1] = r.u32(target);
    this.count++;
  }

  /** FNV-1a over each segment's length and bytes (lengths keep "a" + "b" apart from "ab"). */
  private hashOf(bytes: Uint8Array): number {
    let h = 0x811c9dc5;
    for (let s = 0; s < this.count; s++) {
      const start = this.segments[2 * s]!;
      const length = this.segments[2 * s + 1]!;
      h = Math.imul(h ^ length, 0x01000193);
      for (let i = start; i < start + length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
    }
    return h >>> 0;
  }

  /** `raw` holds each segment as its length (one u32 slot) then its bytes (see `concat`). */
  private same(bytes: Uint8Array, raw: Uint32Array): boolean {
    let k = 0;
    for (let s = 0; s < this.count; s++) {
      const start = this.segments[2 * s]!;
      const length = this.segments[2 * s + 1]!;
      if (raw[k++] !== length) return false;
      for (let i = start; i < start + length; i++) if (raw[k++] !== bytes[i]) return false;
    }
    return k === raw.length;
  }

  private concat(bytes: Uint8Array): Uint32Array {
    let size = 0;
    for (let s = 0; s < this.count; s++) size += 1 + this.segments[2 * s + 1]!;
    const raw = new Uint32Array(size);
    let k = 0;
    for (let s = 0; s < this.count; s++) {
      const start = this.segments[2 * s]!;
      const length = this.segments[2 * s + 1]!;
      raw[k++] = length;
      raw.set(bytes.subarray(start, start + length), k);
      k += length;
    }
    return raw;
  }
}

const NAMES = new NameMemo();

/** v1 MetricValue: name 0, timestamp 1, value_type 2, value 3, generation 4, stream_tags 5. */
function v1Sample(r: SafeReader, value: Table, env: Envelope, out: DecodedMetricList): void {
  const name = nameWithTags(r, value, 0, 5);
  push(r, out, env, name, value, { ts: 1, type: 2, value: 3, generation: 4 }, 'v1');
}

/** v2 MetricValue: name 0, stream_tags 1, samples 2; MetricSample: timestamp 0, value_type 1, value 2, generation 3. */
function v2Samples(r: SafeReader, value: Table, env: Envelope, out: DecodedMetricList): void {
  const name = nameWithTags(r, value, 0, 1);
  const samples = r.vector(value, 2, 4);
  for (let i = 0; i < (samples?.length ?? 0); i++) {
    push(r, out, env, name, r.table(r.deref(samples!.start + 4 * i)), { ts: 0, type: 1, value: 2, generation: 3 }, 'v2');
  }
}

interface Slots {
  ts: number;
  type: number;
  value: number;
  generation: number;
}

function push(r: SafeReader, out: DecodedMetricList, env: Envelope, name: string, t: Table, s: Slots, layout: MetricListLayout): void {
  const index = out.samples.length + out.skipped.length;
  if (env.checkUuid === null) {
    out.skipped.push({ index, reason: `metric '${name}': check_uuid is neither 16 bytes nor a 36-character uuid` });
    return;
  }
  const tsAt = r.field(t, s.ts, 8);
  const own = tsAt === 0 ? 0 : r.u64Number(tsAt);
  const typeAt = r.field(t, s.type, 1);
  const type = typeAt === 0 ? 0 : r.u8(typeAt);
  const genAt = r.field(t, s.generation, 2);
  const decoded = unionValue(r, type, r.subTable(t, s.value), layout);
  if (typeof decoded === 'string') {
    out.skipped.push({ index, reason: `metric '${name}': ${decoded}` });
    return;
  }
  out.samples.push({
    accountId: env.accountId,
    checkName: env.checkName,
    checkUuid: env.checkUuid,
    name,
    ts: own === 0 ? env.ts : own,
    generation: genAt === 0 ? 0 : r.i16(genAt),
    value: decoded,
  });
}

/** MetricValueUnion member → value, or why the sample is skipped. */
function unionValue(r: SafeReader, type: number, t: Table | null, layout: MetricListLayout): DecodedValue | string {
  if (type === 0 || type > 10) return `value type ${type} is not a MetricValueUnion member`;
  if (type === 8) return { kind: 'numeric', value: null };
  if (type === 9) return { kind: 'text', value: null };
  if (type === 10) return { kind: 'histogram', bins: null, cumulative: false };
  if (t === null) return `value type ${type} has no value table`;
  if (type === 6) return { kind: 'text', value: r.string(t, 0) ?? '' };
  if (type === 7) return histogram(r, t, layout);
  const sizes = [0, 4, 4, 8, 8, 8];
  const at = r.field(t, 0, sizes[type]!);
  if (at === 0) return { kind: 'numeric', value: 0 };
  switch (type) {
    case 1:
      return { kind: 'numeric', value: r.i32(at) };
    case 2:
      return { kind: 'numeric', value: r.u32(at) };
    case 3:
      return { kind: 'numeric', value: exact(r.i64(at)) };
    case 4:
      return { kind: 'numeric', value: exact(r.u64(at)) };
    default:
      return { kind: 'numeric', value: r.f64(at) };
  }
}

/** 64-bit integers stay exact: a number when it is, else a bigint. */
function exact(v: bigint): number | bigint {
  return v <= SAFE && v >= -SAFE ? Number(v) : v;
}

/** Histogram: buckets 0 (v1: tables val 0, exp 1, count 2; v2: 16-byte structs count, val, exp), cumulative 1. */
function histogram(r: SafeReader, t: Table, layout: MetricListLayout): DecodedValue {
  const cumulativeAt = r.field(t, 1, 1);
  const bins: { val: number; exp: number; count: bigint }[] = [];
  const buckets = r.vector(t, 0, layout === 'v1' ? 4 : 16);
  for (let i = 0; i < (buckets?.length ?? 0); i++) {
    if (layout === 'v2') {
      const at = buckets!.start + 16 * i;
      bins.push({ count: r.u64(at), val: r.i8(at + 8), exp: r.i8(at + 9) });
      continue;
    }
    const b = r.table(r.deref(buckets!.start + 4 * i));
    const [valAt, expAt, countAt] = [r.field(b, 0, 1), r.field(b, 1, 1), r.field(b, 2, 8)];
    bins.push({ val: valAt === 0 ? 0 : r.i8(valAt), exp: expAt === 0 ? 0 : r.i8(expAt), count: countAt === 0 ? 0n : r.u64(countAt) });
  }
  return { kind: 'histogram', bins, cumulative: cumulativeAt !== 0 && r.u8(cumulativeAt) !== 0 };
}
