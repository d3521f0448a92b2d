// The payload of one ingest-journal entry: the accepted records of one request.
// JSON in a compact positional form: V8's native JSON is faster than a hand-written
// binary codec in JS, and the journal is read only on recovery.
import { promisify } from 'node:util';
import { constants as zlib, zstdCompress, zstdDecompressSync } from 'node:zlib';
import { headroomOf } from './headroom.js';
import type { DataKind, IngestRecord } from './ingest-record.js';
import type { AccountId, EpochMs, NumericValue } from './types.js';

export const JOURNAL_ENTRY_VERSION = 1;

export interface JournalMetric {
  accountId: AccountId;
  uuid: string;
  checkName: string;
  canonical: string;
}

export interface JournalRecord {
  metric: number;
  kind: DataKind;
  ts: EpochMs;
  value: NumericValue | string;
  /** MetricList generation of a numeric record (absent = 0). */
  generation?: number;
  /** A cumulative histogram (absent = false). */
  cumulative?: boolean;
  /** A histogram period set, not added (absent = false; model/ingest-record.ts). */
  set?: boolean;
}

export interface JournalEntry {
  metrics: JournalMetric[];
  records: JournalRecord[];
}

// Value codes: numbers that JSON can carry, doubles it cannot (NaN, ±Infinity), bigints,
// numeric null, text, text null, histogram, cumulative histogram, histogram period set.
type Code = 'n' | 'd' | 'b' | 'z' | 's' | 't' | 'h' | 'H' | 'S';
// A numeric row with a non-zero generation carries it fifth (the value null for 'z').
type Row = [number, number, Code] | [number, number, Code, number | string | null] | [number, number, Code, number | string | null, number];

export function encodeJournalEntry(records: readonly IngestRecord[]): Buffer {
  const index = new Map<string, number>();
  const metrics: [number, string, string, string][] = [];
  const rows: Row[] = new Array(records.length);
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    let mi = index.get(r.metric.key);
    if (mi === undefined) {
      mi = metrics.length;
      index.set(r.metric.key, mi);
      metrics.push([r.metric.accountId, r.metric.uuid, r.metric.checkName, r.metric.name.canonical]);
    }
    rows[i] = encodeRow(mi, r);
  }
  return Buffer.from(JSON.stringify({ v: JOURNAL_ENTRY_VERSION, m: metrics, r: rows }));
}

function encodeRow(mi: number, r: IngestRecord): Row {
  switch (r.kind) {
    case 'histogram':
      return [mi, r.ts, r.set === true ? 'S' : r.cumulative === true ? 'H' : 'h', r.value];
    case 'text':
      return r.value === null ? [mi, r.ts, 't'] : [mi, r.ts, 's', r.value];
    case 'numeric': {
      const row = numericRow(mi, r.ts, r.value);
      return r.generation ? [row[0], row[1], row[2], row[3] ?? null, r.generation] : row;
    }
  }
}

function numericRow(mi: number, ts: number, v: NumericValue): Row {
  if (v === null) return [mi, ts, 'z'];
  if (typeof v === 'bigint') return [mi, ts, 'b', v.toString()];
  return Number.isFinite(v) ? [mi, ts, 'n', v] : [mi, ts, 'd', String(v)];
}

export function decodeJournalEntry(bytes: Uint8Array): JournalEntry {
  const doc = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as {
    v: number;
    m: [number, string, string, string][];
    r: Row[];
  };
  if (doc.v !== JOURNAL_ENTRY_VERSION) throw new Error(`BUG: unknown journal entry version ${doc.v}`);
  return {
    metrics: doc.m.map(([accountId, uuid, checkName, canonical]) => ({
      accountId: accountId as AccountId,
      uuid,
      checkName,
      canonical,
    })),
    records: doc.r.map(decodeRow),
  };
}

function decodeRow(row: Row): JournalRecord {
  const record = decodeValue(row);
  const generation = row[4];
  return generation === undefined ? record : { ...record, generation };
}

function decodeValue(row: Row): JournalRecord {
  const [metric, ts, code] = row;
  const raw = row[3];
  const at = ts as EpochMs;
  switch (code) {
    case 'n':
      return { metric, ts: at, kind: 'numeric', value: raw as number };
    case 'd':
      return { metric, ts: at, kind: 'numeric', value: Number(raw) };
    case 'b':
      return { metric, ts: at, kind: 'numeric', value: BigInt(raw as string) };
    case 'z':
      return { metric, ts: at, kind: 'numeric', value: null };
    case 's':
      return { metric, ts: at, kind: 'text', value: raw as string };
    case 't':
      return { metric, ts: at, kind: 'text', value: null };
    case 'h':
      return { metric, ts: at, kind: 'histogram', value: raw as string };
    case 'H':
      return { metric, ts: at, kind: 'histogram', value: raw as string, cumulative: true };
    case 'S':
      return { metric, ts: at, kind: 'histogram', value: raw as string, set: true };
  }
}

/**
 * A journal entry that is the request body as it arrived (a TSV body or a FlatBuffer
 * MetricList), with what its parse depended on, so replay reads exactly the records that
 * were accepted: writing it costs one copy, where re-encoding costs a pass over every record.
 * Layout: magic byte, format byte, latestAllowed (f64 LE, epoch ms), textSizeLimit (u32 LE),
 * header account (f64 LE, -1 = none), then the body. JSON entries start with `{`.
 * Magic 0x02 (a body some of whose series a limit refused) adds after the header the byte
 * length (u32 LE) of a JSON array of the refused metric keys, then that array, then the body.
 */
const RAW_MAGIC = 0x01;
const RAW_LIMITED_MAGIC = 0x02;
const RAW_HEAD = 22;
/** Room in front of a body (model/headroom.ts) in which its entry's header is written in place. */
export const RAW_HEADROOM = RAW_HEAD;

export type RawFormat = 'tsv' | 'metriclist';
const FORMAT_CODES: Record<RawFormat, number> = { tsv: 1, metriclist: 2 };

export interface RawContext {
  latestAllowed: EpochMs;
  textSizeLimit: number;
  /** The x-svc-account-id header of the request (null: none). */
  headerAccount: AccountId | null;
  /** Keys of the metrics a series limit refused: their samples were rejected (absent: none). */
  limited?: readonly string[];
}

export type DecodedJournal = { raw: false; entry: JournalEntry } | { raw: true; format: RawFormat; ctx: RawContext; body: Buffer };

export function encodeRawJournalEntry(format: RawFormat, ctx: RawContext, body: Uint8Array): Buffer {
  const limited = ctx.limited !== undefined && ctx.limited.length > 0 ? Buffer.from(JSON.stringify(ctx.limited)) : null;
  const head = limited === null ? RAW_HEAD : RAW_HEAD + 4 + limited.length;
  // A body read with room in front (http/body.ts) becomes its entry where it lies.
  const inPlace = headroomOf(body) >= head;
  const out = inPlace ? Buffer.from(body.buffer, body.byteOffset - head, head + body.length) : Buffer.allocUnsafe(head + body.length);
  out[0] = limited === null ? RAW_MAGIC : RAW_LIMITED_MAGIC;
  out[1] = FORMAT_CODES[format];
  out.writeDoubleLE(ctx.latestAllowed, 2);
  out.writeUInt32LE(ctx.textSizeLimit, 10);
  out.writeDoubleLE(ctx.headerAccount ?? -1, 14);
  if (limited !== null) {
    out.writeUInt32LE(limited.length, RAW_HEAD);
    limited.copy(out, RAW_HEAD + 4);
  }
  if (!inPlace) out.set(body, head);
  return out;
}

/**
 * An entry as the journal keeps it: a raw or JSON entry of `JOURNAL_ZSTD_MIN` bytes or more is
 * written as one zstd frame (level 1) behind the magic byte 0x05 when that is smaller. Every
 * accepted body passes through the journal's memtable, its WAL, a flush to an SST and a compaction
 * before a checkpoint drops it; a collector's TSV body (≈ 140 bytes a line, the same check and
 * names body after body) is a twentieth of that in zstd, and compressing it takes a libuv pool
 * thread ≈ 1.2 ms a 700 kB body — not the node's thread, and less than what those passes cost.
 */
export async function journalForm(entry: Uint8Array): Promise<Uint8Array> {
  if (entry.length < JOURNAL_ZSTD_MIN) return entry;
  const packed = await compress(entry, ZSTD_OPTIONS);
  if (packed.length + 1 >= entry.length) return entry;
  const out = Buffer.allocUnsafe(packed.length + 1);
  out[0] = ZSTD_MAGIC;
  packed.copy(out, 1);
  return out;
}

const ZSTD_MAGIC = 0x05;
/** Smaller entries are kept as they are (a zstd frame's own bytes would be most of what it saves). */
export const JOURNAL_ZSTD_MIN = 1024;
const ZSTD_OPTIONS = { params: { [zlib.ZSTD_c_compressionLevel]: 1 } };
const compress = promisify(zstdCompress);

/** Either kind of entry, compressed or not (`journalForm`). */
export function decodeJournal(bytes: Uint8Array): DecodedJournal {
  if (bytes[0] === ZSTD_MAGIC) {
    const inner = zstdDecompressSync(bytes.subarray(1));
    if (inner[0] === ZSTD_MAGIC) throw new Error('a journal entry is compressed twice');
    return decodeJournal(inner);
  }
  if (bytes[0] !== RAW_MAGIC && bytes[0] !== RAW_LIMITED_MAGIC) return { raw: false, entry: decodeJournalEntry(bytes) };
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = (Object.keys(FORMAT_CODES) as RawFormat[]).find((f) => FORMAT_CODES[f] === b[1]);
  if (format === undefined) throw new Error(`BUG: unknown raw journal format ${b[1]}`);
  const account = b.readDoubleLE(14);
  const ctx: RawContext = { latestAllowed: b.readDoubleLE(2) as EpochMs, textSizeLimit: b.readUInt32LE(10), headerAccount: account < 0 ? null : (account as AccountId) };
  if (b[0] === RAW_MAGIC) return { raw: true, format, ctx, body: b.subarray(RAW_HEAD) };
  const length = b.readUInt32LE(RAW_HEAD);
  const start = RAW_HEAD + 4;
  ctx.limited = JSON.parse(b.toString('utf8', start, start + length)) as string[];
  return { raw: true, format, ctx, body: b.subarray(start + length) };
}
