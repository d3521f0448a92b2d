// The /raw TSV body (interface §2.8): `M` and `H1` records, TAB-separated, one per line.
import type { IngestRecord, MetricIdentity, MetricResolver, RecordError } from './ingest-record.js';
import { histogramProblem } from './histogram-check.js';
import { parseSampleValue } from './sample-value.js';
import { parseSecMs } from './timestamp.js';
import type { EpochMs } from './types.js';

export interface TsvContext<M extends MetricIdentity> {
  resolve: MetricResolver<M>;
  /** Samples stamped later than this are rejected (max clock skew). */
  latestAllowed: EpochMs;
  /** Longer text values are truncated (IRONdb text_size_limit). */
  textSizeLimit: number;
}

export interface TsvResult<M extends MetricIdentity> {
  records: IngestRecord<M>[];
  errors: RecordError[];
  /** Non-empty lines seen. */
  lines: number;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function parseTsv<M extends MetricIdentity>(body: string, ctx: TsvContext<M>): TsvResult<M> {
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
function parseLine<M extends MetricIdentity>(line: string, ctx: TsvContext<M>): IngestRecord<M> | string {
  const fields = splitFields(line, 6);
  const tag = fields[0];
  if (tag === 'M') return parseM(fields, ctx);
  if (tag === 'H1') return parseH1(fields, ctx);
  return `unknown record type '${truncate(tag ?? '')}' (expected M or H1)`;
}

function parseM<M extends MetricIdentity>(f: string[], ctx: TsvContext<M>): IngestRecord<M> | string {
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

function parseH1<M extends MetricIdentity>(f: string[], ctx: TsvContext<M>): IngestRecord<M> | string {
  if (f.length !== 5) return `H1 record needs 5 TAB-separated fields, got ${f.length}`;
  const head = parseHead(f, ctx);
  if (typeof head === 'string') return head;
  const histogram = f[4]!;
  if (histogram.length === 0 || !BASE64.test(histogram)) return 'H1 HISTOGRAM is not base64';
  const problem = histogramProblem(histogram);
  if (problem !== null) return `H1 HISTOGRAM ${problem}`;
  return { kind: 'histogram', metric: head.metric, ts: head.ts, value: histogram };
}

function parseHead<M extends MetricIdentity>(f: string[], ctx: TsvContext<M>): { ts: EpochMs; metric: M } | string {
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
