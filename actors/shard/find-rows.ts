// Search result records (interface §2.4) for the ids a search found: as FindRow objects (for
// the cluster merge, graphite, PromQL and CAQL), or straight into the bytes of a JSON array
// for an answer this node gives alone, copying names from the index's arena without
// decoding them. Both give the text JSON.stringify would for
// {uuid, check_name, check_tags, metric_name, category, type, account_id[, activity][, latest]}.
import type { MetricIndex } from '../../storage/metric-index/metric-index.js';
import type { IdSearch } from './search.js';
import { setImmediate as turn } from 'node:timers/promises';

/** One search result: its record as JSON text (latest values may be exact bigints). */
export interface FindRow {
  uuid: string;
  name: string;
  /** Data types, as the record's `type` lists them. */
  types: string[];
  json: string;
}

/** The latest values of a found metric as the record's `latest` JSON object (find `latest=1|2`). */
export interface LatestReader {
  latestJson(index: MetricIndex, id: number, latest: number): Promise<string>;
}

/** Rows rendered between two yields to the event loop, so a long answer lets other requests in. */
const ROWS_PER_TURN = 4096;

export async function findRows(reader: LatestReader, s: IdSearch, activity: boolean, latest: number): Promise<FindRow[]> {
  const { index } = s;
  const heads = new Map<number, string>();
  const rows: FindRow[] = [];
  for (const id of s.ids) {
    if (rows.length % ROWS_PER_TURN === ROWS_PER_TURN - 1) await turn();
    const check = index.checkOf(id);
    let head = heads.get(check);
    if (head === undefined) heads.set(check, (head = recordHead(s, id)));
    const name = index.canonicalOf(id);
    const types = index.typesOf(id);
    let json = `${head}${quote(name)}${recordTail(index, id, activity)}`;
    if (latest !== 0) json = `${json.slice(0, -1)},"latest":${await reader.latestJson(index, id, latest)}}`;
    rows.push({ uuid: index.uuidOf(id), name, types: [...types], json });
  }
  return rows;
}

/** The JSON array of the records, encoded (latest values are not part of it). */
export async function findBody(s: IdSearch, activity: boolean): Promise<Buffer> {
  const { index } = s;
  const out = new ByteWriter();
  const heads = new Map<number, Buffer>();
  out.ascii('[');
  for (const [i, id] of s.ids.entries()) {
    if (i % ROWS_PER_TURN === ROWS_PER_TURN - 1) await turn();
    if (i > 0) out.ascii(',');
    const check = index.checkOf(id);
    let head = heads.get(check);
    if (head === undefined) heads.set(check, (head = Buffer.from(recordHead(s, id))));
    out.bytes(head);
    const at = out.length;
    out.ascii('"');
    out.reserve(index.canonicalByteLength(id) + 1);
    out.length += index.copyCanonical(id, out.buffer, out.length);
    if (needsEscape(out.buffer, at + 1, out.length)) {
      out.length = at;
      out.text(JSON.stringify(index.canonicalOf(id)));
    } else out.ascii('"');
    out.ascii(recordTail(index, id, activity));
  }
  out.ascii(']');
  return out.buffer.subarray(0, out.length);
}

/** `{"uuid":…,"check_name":…,"check_tags":[…],"metric_name":` — the same for every metric of a check. */
function recordHead(s: IdSearch, id: number): string {
  const uuid = s.index.uuidOf(id);
  return `{"uuid":${quote(uuid)},"check_name":${quote(s.index.checkNameOf(id))},"check_tags":${JSON.stringify(s.checkTags.get(uuid) ?? [])},"metric_name":`;
}

function recordTail(index: MetricIndex, id: number, activity: boolean): string {
  const head = `,"category":"reconnoiter","type":"${index.typeTextOf(id)}","account_id":${index.accountIdOf(id)}`;
  if (!activity) return `${head}}`;
  const windows = index.activity.windows(id);
  if (windows.length === 1) return `${head},"activity":[[${windows[0]![0]},${windows[0]![1]}]]}`;
  return `${head},"activity":[${windows.map(([a, b]) => `[${a},${b}]`).join(',')}]}`;
}

/** Characters JSON.stringify escapes (and lone surrogates, which it writes as \u escapes). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(text)`, without its cost for the usual text that needs no escape. */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** True when UTF-8 bytes hold a quote, backslash or control character. */
function needsEscape(b: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c < 0x20 || c === 0x22 || c === 0x5c) return true;
  }
  return false;
}

/** A growing byte buffer. */
class ByteWriter {
  buffer = Buffer.allocUnsafe(64 * 1024);
  length = 0;

  reserve(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + n));
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }

  /** Text known to be ASCII. */
  ascii(text: string): void {
    this.reserve(text.length);
    this.length += this.buffer.write(text, this.length, 'latin1');
  }

  text(text: string): void {
    this.reserve(text.length * 3);
    this.length += this.buffer.write(text, this.length, 'utf8');
  }

  bytes(b: Buffer): void {
    this.reserve(b.length);
    this.length += b.copy(this.buffer, this.length);
  }
}
