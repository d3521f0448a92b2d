// Samples from the ecosystem's formats (Prometheus remote write, OpenTSDB, carbon) are a
// metric name, tags and one number. Tags become stream tags (irondb-reference §1.6), each
// category and value sent base64-wrapped so any text is legal; canonicalisation stores them
// plain whenever the plain text is legal (§1.3), so `host=web-1` reads back as `host:web-1`.
import type { IngestRecord, MetricIdentity, MetricResolution, RecordError } from './ingest-record.js';
import { RESERVED_CATEGORIES } from './metric-name.js';
import type { EpochMs, NumericValue } from './types.js';

export interface TaggedSample {
  name: string;
  /** [category, value] pairs; an empty value means "no such tag" (Prometheus' rule) and is dropped. */
  tags: readonly (readonly [string, string])[];
  /** Epoch ms. */
  ts: number;
  /** A number, or a serialized circllhist (base64) for a histogram record. */
  value: NumericValue | { histogram: string };
}

export interface TaggedContext<M extends MetricIdentity> {
  /** Resolves a metric name spelling (`name|ST[...]`) within the request's account and check. */
  resolve: (spelling: string) => MetricResolution<M>;
  latestAllowed: EpochMs;
}

const b64 = (text: string): string => `b"${Buffer.from(text, 'utf8').toString('base64')}"`;

/** `name|ST[b"cat":b"value",...]`, or why the tags cannot be stream tags. */
export function taggedSpelling(name: string, tags: TaggedSample['tags']): string | { reason: string } {
  if (name.length === 0) return { reason: 'the metric name is empty' };
  const parts: string[] = [];
  for (const [category, value] of tags) {
    if (category.length === 0) return { reason: `metric '${name}' has a tag with an empty name` };
    if (RESERVED_CATEGORIES.has(category)) return { reason: `tag '${category}' of metric '${name}' is a reserved name` };
    if (value.length > 0) parts.push(`${b64(category)}:${b64(value)}`);
  }
  return parts.length === 0 ? name : `${name}|ST[${parts.join(',')}]`;
}

/** One numeric record, or the reason the sample is rejected. */
export function taggedRecord<M extends MetricIdentity>(s: TaggedSample, ctx: TaggedContext<M>): IngestRecord<M> | string {
  return spelledRecord(s.name, taggedSpelling(s.name, s.tags), s.ts, s.value, ctx, ctx.resolve);
}

/** As taggedRecord, for a sample whose spelling (or why it has none) is already known, resolved by `resolve`. */
export function spelledRecord<M extends MetricIdentity>(
  name: string,
  spelling: string | { reason: string },
  ts: number,
  value: TaggedSample['value'],
  ctx: Pick<TaggedContext<M>, 'latestAllowed'>,
  resolve: (spelling: string) => MetricResolution<M>,
): IngestRecord<M> | string {
  if (!Number.isFinite(ts) || !Number.isInteger(ts) || ts < 0) return `timestamp ${ts} of '${name}' is not a non-negative epoch`;
  if (ts > ctx.latestAllowed) return `sample of '${name}' at ${ts} ms is further in the future than the allowed clock skew`;
  if (typeof spelling !== 'string') return spelling.reason;
  const resolved = resolve(spelling);
  if (!resolved.ok) return `metric '${name}': ${resolved.reason}`;
  if (value !== null && typeof value === 'object') return { kind: 'histogram', metric: resolved.metric, ts: ts as EpochMs, value: value.histogram };
  return { kind: 'numeric', metric: resolved.metric, ts: ts as EpochMs, value };
}

/**
 * Records of many items (series, data points, lines), each item's samples or the reason the
 * whole item is rejected; a rejected sample is its item's error. `at` is `first + index`;
 * `itemOf[i]` is the `at` of records[i].
 */
export function taggedRecords<M extends MetricIdentity>(items: readonly (readonly TaggedSample[] | string)[], ctx: TaggedContext<M>, first = 0): { records: IngestRecord<M>[]; errors: RecordError[]; itemOf: number[] } {
  const records: IngestRecord<M>[] = [];
  const errors: RecordError[] = [];
  const itemOf: number[] = [];
  items.forEach((item, i) => {
    if (typeof item === 'string') return errors.push({ at: first + i, reason: item });
    const mine: IngestRecord<M>[] = [];
    for (const s of item) {
      const r = taggedRecord(s, ctx);
      if (typeof r === 'string') return errors.push({ at: first + i, reason: r });
      mine.push(r);
    }
    for (const r of mine) {
      records.push(r);
      itemOf.push(first + i);
    }
    return undefined;
  });
  return { records, errors, itemOf };
}

/**
 * Epoch time as OpenTSDB and carbon senders write it: seconds (`1480371964`), seconds with
 * milliseconds (`1480371964.123`, not a float: the digits are the ms), or 13-digit
 * milliseconds (`1480371964123`). Epoch ms, or null when it is none of these.
 */
export function looseEpochMs(raw: string | number): number | null {
  const text = typeof raw === 'number' ? (Number.isFinite(raw) ? String(raw) : '') : raw.trim();
  const m = /^(\d+)(?:\.(\d{1,3})\d*)?$/.exec(text);
  if (m === null) return null;
  const whole = Number(m[1]);
  if (m[2] !== undefined) return whole * 1000 + Number(m[2].padEnd(3, '0'));
  return m[1]!.length >= 13 ? whole : whole * 1000;
}
