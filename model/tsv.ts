// The /raw TSV body (interface §2.8): `M`, `H1` and `H2` (cumulative histogram) records, TAB-separated, one per line.
import type { PartitionedBatch } from './ingest-batch.js';
import type { IngestRecord, MetricResolution, MetricResolver, RecordError } from './ingest-record.js';
import { histogramProblem } from './histogram-check.js';
import { parseSampleValue } from './sample-value.js';
import { parseSecMs } from './timestamp.js';
import type { EpochMs } from './types.js';

export interface TsvContext<M> {
  resolve: MetricResolver<M>;
  /** Samples stamped later than this are rejected (max clock skew). */
  latestAllowed: EpochMs;
  /** Longer text values are truncated (IRONdb text_size_limit). */
  textSizeLimit: number;
}

export interface TsvResult<M> {
  records: IngestRecord<M>[];
  errors: RecordError[];
  /** Non-empty lines seen. */
  lines: number;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface TsvBatchResult {
  errors: RecordError[];
  /** Non-empty lines seen. */
  lines: number;
}

/**
 * Metrics remembered by the bytes of their line's check and name fields (a parse worker's,
 * actors/ingest/raw-keys.ts): a known metric's line is then stored without building a string.
 * Byte-equal fields always name the metric they named before.
 */
export interface KnownKeys<M> {
  /** The metric of the check field [from, tab) and name (tab, to), or undefined. */
  find(bytes: Buffer, from: number, tab: number, to: number): M | undefined;
  /** Resolves fields `find` did not know, and remembers them when they resolve. */
  resolveNew(bytes: Buffer, from: number, tab: number, to: number): MetricResolution<M>;
}

/**
 * Parses a body straight into `batch`. Lines of the common shape (an `M` record with a plain
 * decimal value) take a fast path over the bytes that builds no strings but the check and name
 * (and none for a metric `known` remembers) and finds its own line end (no search for the
 * newline first: the line's bytes are read once); every other line is decoded and goes through
 * `parseLine`, so both paths accept and reject exactly the same lines (test/tsv-fast.test.ts
 * checks this).
 */
export function parseTsvInto<M>(body: Buffer, ctx: TsvContext<M>, batch: PartitionedBatch<M>, known?: KnownKeys<M>): TsvBatchResult {
  const errors: RecordError[] = [];
  let lines = 0;
  let lineNo = 0;
  for (let start = 0; start <= body.length; ) {
    lineNo++;
    const next = scanNumericLine(body, start, ctx.latestAllowed);
    if (next !== -1) {
      const metric = knownOrResolved(body, ctx, known);
      if (metric !== undefined) {
        lines++;
        batch.addNumeric(metric, line.ts, line.value);
        start = next;
        continue;
      }
    }
    let end = body.indexOf(NEWLINE, start);
    if (end === -1) end = body.length;
    const lineEnd = end > start && body[end - 1] === CR ? end - 1 : end;
    const lineStart = start;
    start = end + 1;
    if (lineEnd <= lineStart) continue;
    lines++;
    const parsed = parseLine(body.toString('utf8', lineStart, lineEnd), ctx);
    if (typeof parsed === 'string') errors.push({ at: lineNo, reason: parsed });
    else batch.add(parsed);
  }
  return { errors, lines };
}

/**
 * The metric of the line `scanNumericLine` just read, if it resolves (else the full parser says
 * why). The scan looked for the check's and name's tabs without knowing where the line ends, so
 * those fields may run into the next line: fields `known` finds are byte-equal to ones it took
 * from whole lines, which hold no newline; new ones are looked at here.
 */
function knownOrResolved<M>(body: Buffer, ctx: TsvContext<M>, known: KnownKeys<M> | undefined): M | undefined {
  const { checkStart, checkEnd, nameEnd } = line;
  const found = known?.find(body, checkStart, checkEnd, nameEnd);
  if (found !== undefined) return found;
  if (hasNewline(body, checkStart, nameEnd)) return undefined;
  const resolved = known !== undefined ? known.resolveNew(body, checkStart, checkEnd, nameEnd) : ctx.resolve(body.toString('utf8', checkStart, checkEnd), body.toString('utf8', checkEnd + 1, nameEnd));
  return resolved.ok ? resolved.metric : undefined;
}

function hasNewline(s: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (s[i] === NEWLINE) return true;
  return false;
}

const NEWLINE = 10;
const CR = 13;
const TAB = 9;
const DOT = 46;
const MINUS = 45;
const PLUS = 43;
const ZERO = 48;
const NINE = 57;
/** Digits a decimal may have for `mantissa / 10^k` to be exact (and so equal Number(text)). */
const EXACT_DIGITS = 15;
const POW10 = Array.from({ length: EXACT_DIGITS + 1 }, (_, k) => 10 ** k);

/** What `scanNumericLine` read (one per module: the parse is synchronous, so nothing is allocated per line). */
const line = { ts: 0, value: 0, checkStart: 0, checkEnd: 0, nameEnd: 0 };

/**
 * A line from `from` of the form `M<TAB>sec.mmm<TAB>check<TAB>name<TAB>n|i|I|l|L<TAB>decimal`
 * with at most 15 digits and nothing unusual, ended by LF, CR LF, or the body's end (a CR just
 * before the end, too: the line splitter drops one CR before a line's end): the start of the
 * next line, and `line` says what it holds. Anything else: -1, and the caller takes the full
 * parser. The check and name may hold a newline (`knownOrResolved` looks).
 */
function scanNumericLine(s: Uint8Array, from: number, latestAllowed: number): number {
  const to = s.length;
  if (s[from] !== 77 /* M */ || s[from + 1] !== TAB) return -1;
  // Timestamp: 1-15 digits, '.', exactly 3 digits.
  let i = from + 2;
  let sec = 0;
  const secStart = i;
  for (let c = s[i]!; i < to && c >= ZERO && c <= NINE; c = s[++i]!) sec = sec * 10 + (c - ZERO);
  const secDigits = i - secStart;
  if (secDigits === 0 || secDigits > 15 || i + 4 >= to || s[i] !== DOT) return -1;
  const m1 = s[i + 1]! - ZERO;
  const m2 = s[i + 2]! - ZERO;
  const m3 = s[i + 3]! - ZERO;
  if (!(m1 >= 0 && m1 <= 9 && m2 >= 0 && m2 <= 9 && m3 >= 0 && m3 <= 9) || s[i + 4] !== TAB) return -1;
  const ts = sec * 1000 + (m1 * 100 + m2 * 10 + m3);
  if (ts > latestAllowed) return -1;
  const checkStart = i + 5;
  const checkEnd = s.indexOf(TAB, checkStart);
  if (checkEnd === -1) return -1;
  const nameEnd = s.indexOf(TAB, checkEnd + 1);
  if (nameEnd === -1) return -1;
  const type = s[nameEnd + 1]!;
  if (nameEnd + 2 >= to || s[nameEnd + 2] !== TAB) return -1;
  const value = fastDecimal(s, nameEnd + 3, type === 110 /* n */);
  if (value === null || !inRange(type, value)) return -1;
  const end = decimal.end;
  let next: number;
  if (end === to) next = to + 1;
  else if (s[end] === NEWLINE) next = end + 1;
  else if (s[end] === CR && end + 1 === to) next = to + 1;
  else if (s[end] === CR && s[end + 1] === NEWLINE) next = end + 2;
  else return -1;
  line.ts = ts;
  line.value = value;
  line.checkStart = checkStart;
  line.checkEnd = checkEnd;
  line.nameEnd = nameEnd;
  return next;
}

/** Where `fastDecimal` stopped: the first byte after the decimal. */
const decimal = { end: 0 };

/**
 * `[+-]digits[.digits]` (a fraction only when `fraction`), at most 15 digits, from `from` up to
 * the first byte that is neither a digit nor its dot (`decimal.end`); else null.
 */
function fastDecimal(s: Uint8Array, from: number, fraction: boolean): number | null {
  const to = s.length;
  let i = from;
  let negative = false;
  const sign = s[i];
  if (sign === MINUS || sign === PLUS) {
    negative = sign === MINUS;
    i++;
  }
  let mantissa = 0;
  let digits = 0;
  let scale = 0;
  let seenDot = false;
  for (; i < to; i++) {
    const c = s[i]!;
    if (c >= ZERO && c <= NINE) {
      mantissa = mantissa * 10 + (c - ZERO);
      digits++;
      if (seenDot) scale++;
    } else if (c === DOT && fraction && !seenDot) seenDot = true;
    else break;
  }
  decimal.end = i;
  if (digits === 0 || digits > EXACT_DIGITS || (seenDot && scale === 0 && digits === 0)) return null;
  const magnitude = mantissa / POW10[scale]!;
  return negative ? -magnitude : magnitude === 0 ? 0 : magnitude;
}

/** The integer types' ranges (the fast path sees at most 15 digits, so doubles are exact). */
function inRange(type: number, v: number): boolean {
  switch (type) {
    case 110: // n
      return true;
    case 105: // i
      return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 && !Object.is(v, -0);
    case 73: // I
      return Number.isInteger(v) && v >= 0 && v <= 4294967295 && !Object.is(v, -0);
    case 108: // l
    case 76: // L
      return Number.isInteger(v) && (type === 108 || v >= 0) && !Object.is(v, -0);
    default:
      return false;
  }
}

export function parseTsv<M>(body: string, ctx: TsvContext<M>): TsvResult<M> {
  const records: IngestRecord<M>[] = [];
  const errors: RecordError[] = [];
  let lines = 0;
  let lineNo = 0;
  for (let start = 0; start <= body.length; ) {
    let end = body.indexOf('\n', start);
    if (end === -1) end = body.length;
    lineNo++;
    const line = body.charCodeAt(end - 1) === 13 ? body.slice(start, end - 1) : body.slice(start, end);
    start = end + 1;
    if (line.length === 0) continue;
    lines++;
    const parsed = parseLine(line, ctx);
    if (typeof parsed === 'string') errors.push({ at: lineNo, reason: parsed });
    else records.push(parsed);
  }
  return { records, errors, lines };
}

/** Returns the record, or the reason the line was rejected. */
function parseLine<M>(line: string, ctx: TsvContext<M>): IngestRecord<M> | string {
  const fields = splitFields(line, 6);
  const tag = fields[0];
  if (tag === 'M') return parseM(fields, ctx);
  if (tag === 'H1' || tag === 'H2') return parseHistogram(tag, fields, ctx);
  return `unknown record type '${truncate(tag ?? '')}' (expected M, H1 or H2)`;
}

function parseM<M>(f: string[], ctx: TsvContext<M>): IngestRecord<M> | string {
  if (f.length !== 6) return `M record needs 6 TAB-separated fields, got ${f.length}`;
  const head = parseHead(f, ctx);
  if (typeof head === 'string') return head;
  const value = parseSampleValue(f[4]!, f[5]!);
  if (!value.ok) return value.reason;
  if (value.kind === 'text') {
    const text = value.value !== null && value.value.length > ctx.textSizeLimit ? value.value.slice(0, ctx.textSizeLimit) : value.value;
    return { kind: 'text', metric: head.metric, ts: head.ts, value: text };
  }
  return { kind: 'numeric', metric: head.metric, ts: head.ts, value: value.value };
}

/** `H1` (a period's samples) or `H2` (cumulative: running totals), same fields. */
function parseHistogram<M>(tag: 'H1' | 'H2', f: string[], ctx: TsvContext<M>): IngestRecord<M> | string {
  if (f.length !== 5) return `${tag} record needs 5 TAB-separated fields, got ${f.length}`;
  const head = parseHead(f, ctx);
  if (typeof head === 'string') return head;
  const histogram = f[4]!;
  if (histogram.length === 0 || !BASE64.test(histogram)) return `${tag} HISTOGRAM is not base64`;
  const problem = histogramProblem(histogram);
  if (problem !== null) return `${tag} HISTOGRAM ${problem}`;
  const record: IngestRecord<M> = { kind: 'histogram', metric: head.metric, ts: head.ts, value: histogram };
  if (tag === 'H2') record.cumulative = true;
  return record;
}

function parseHead<M>(f: string[], ctx: TsvContext<M>): { ts: EpochMs; metric: M } | string {
  const ts = parseSecMs(f[1]!);
  if (ts === null) return `TIMESTAMP '${truncate(f[1]!)}' must be <seconds>.<3 digits>`;
  if (ts > ctx.latestAllowed) return `TIMESTAMP ${f[1]} is further in the future than the allowed clock skew`;
  const resolved = ctx.resolve(f[2]!, f[3]!);
  if (!resolved.ok) return resolved.reason;
  return { ts, metric: resolved.metric };
}

/** Splits on TAB into at most `max` fields; the last keeps any further TABs (text values). */
function splitFields(line: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (out.length < max - 1) {
    const tab = line.indexOf('\t', start);
    if (tab === -1) break;
    out.push(line.slice(start, tab));
    start = tab + 1;
  }
  out.push(line.slice(start));
  return out;
}

function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
