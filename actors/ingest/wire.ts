// What an ingest worker (actors/ingest/worker.ts) sends back for one body: the samples in
// columns, with metrics as the worker's small integer ids ("sids"); the first time a worker
// uses a sid it also sends who the metric is, and the main thread interns it once.
import type { RawFormat, RawContext } from '../../model/journal-entry.js';
import type { IngestRecord, RecordError } from '../../model/ingest-record.js';
import type { WireMetric } from '../../model/metric-info.js';
import { metricKey } from '../../model/metric-key.js';
import { splitCanonical, type CanonicalName } from '../../model/metric-name.js';
import type { AccountId, MetricKey } from '../../model/types.js';

export interface ParseJob {
  id: number;
  /** `forget`: no body to parse; the worker forgets its metrics and starts a new sid epoch. */
  format: RawFormat | 'forget';
  ctx: RawContext;
  /** The body; transferred to the worker and back. */
  body: Uint8Array;
  /** Set while series limits are on (actors/node/series-limits.ts). */
  limits?: LaneLimits;
}

export interface LaneLimits {
  /** Admissions and refusals of other generations no longer hold. */
  generation: number;
  /** [metric key, reason]: refused for this body (its second parse), whatever the lane remembers. */
  refuse?: [string, string][];
}

/** A series a body names that the node has not admitted in this generation. */
export interface SeriesCandidate extends Pick<WireMetric, 'key' | 'accountId' | 'uuid' | 'idHex' | 'partition'> {
  sid: number;
}

/** The node's answer about a lane's candidates, remembered by the lane (no reply). */
export interface LaneVerdict {
  verdict: true;
  epoch: number;
  generation: number;
  admitted: number[];
  /** [sid, reason]. */
  refused: [number, string][];
}

/** A metric the worker names for the first time: sid → who it is, canonicalised and placed. */
export interface NewMetric extends WireMetric {
  sid: number;
}

/** What a declaration carries of a new metric (the shard derives its key and name parts again). */
export type FreshMetric = Pick<NewMetric, 'sid' | 'accountId' | 'uuid' | 'checkName' | 'idHex' | 'partition'> & { canonical: string };

/**
 * A body's new metrics for one shard, as one JSON text. A burst of new series names thousands a
 * body; as objects each would be copied field by field twice (worker → main → shard) and the
 * main thread would do it (issue 30); one string is copied whole. The text is
 * `[checks, rows]`: each distinct check once as `[account, uuid, check name]`, then five entries
 * a metric — sid, its check's number, canonical name, storage id (hex), partition — from which
 * the shard derives the key and the name's parts again (cheaper than sending them: the
 * canonical name would travel three times).
 */
export interface Declarations {
  shard: number;
  json: string;
}

type Check = [accountId: number, uuid: string, checkName: string];
const ROW = 5;

/** `fresh` by shard (a partition's shard is its number modulo the shard count), as JSON. */
export function packDeclarations(fresh: readonly FreshMetric[], shards: number): Declarations[] {
  const byShard = new Map<number, { checks: Check[]; numbers: Map<string, number>; rows: (number | string)[]; last: FreshMetric | null; lastCheck: number }>();
  for (const m of fresh) {
    const n = m.partition % shards;
    let packed = byShard.get(n);
    if (packed === undefined) byShard.set(n, (packed = { checks: [], numbers: new Map(), rows: [], last: null, lastCheck: -1 }));
    // A body's new series are mostly of one check: the last one's number, without building its key.
    const last = packed.last;
    let check = last !== null && last.accountId === m.accountId && last.uuid === m.uuid && last.checkName === m.checkName ? packed.lastCheck : undefined;
    if (check === undefined) {
      const checkKey = `${m.accountId}\u0000${m.uuid}\u0000${m.checkName}`;
      check = packed.numbers.get(checkKey);
      if (check === undefined) {
        check = packed.checks.length;
        packed.checks.push([m.accountId, m.uuid, m.checkName]);
        packed.numbers.set(checkKey, check);
      }
    }
    packed.last = m;
    packed.lastCheck = check;
    packed.rows.push(m.sid, check, m.canonical, m.idHex, m.partition);
  }
  return [...byShard].map(([shard, { checks, rows }]) => ({ shard, json: JSON.stringify([checks, rows]) }));
}

/**
 * A metric as a shard is told of it: its name kept as the canonical text, its key and parts made
 * when asked. A shard holds a declared name until the index has it, through a backlog of a
 * million new series: as a parsed name (an object, an array and a string per tag) it was that many
 * objects for the garbage collector to carry over, as text it is one string.
 */
export class DeclaredMetric implements NewMetric {
  constructor(
    readonly sid: number,
    readonly accountId: AccountId,
    readonly uuid: string,
    readonly checkName: string,
    readonly canonical: string,
    readonly idHex: string,
    readonly partition: number,
  ) {}

  get key(): MetricKey {
    return metricKey(this.uuid, this.canonical);
  }

  get name(): CanonicalName {
    return splitCanonical(this.canonical);
  }
}

export function unpackDeclarations(d: Declarations): DeclaredMetric[] {
  const [checks, rows] = JSON.parse(d.json) as [Check[], (number | string)[]];
  const out: DeclaredMetric[] = [];
  for (let i = 0; i < rows.length; i += ROW) {
    const [accountId, uuid, checkName] = checks[rows[i + 1] as number]!;
    out.push(new DeclaredMetric(rows[i] as number, accountId as AccountId, uuid, checkName, rows[i + 2] as string, rows[i + 3] as string, rows[i + 4] as number));
  }
  return out;
}

export interface WirePart {
  partition: number;
  sids: Uint32Array;
  ts: Float64Array;
  values: Float64Array;
  /** Records that are not plain doubles, each naming its metric by sid. */
  others: (Omit<IngestRecord, 'metric'> & { metric: { sid: number } })[];
}

/** A partition's columns as a parse worker fills them (model/ingest-batch.ts `SampleColumns`, metrics as sids). */
export interface SidColumns {
  metrics: readonly number[];
  ts: Float64Array;
  values: Float64Array;
  length: number;
  others: readonly IngestRecord<number>[];
}

/**
 * The partitions' columns as wire parts, packed into one buffer per shard (the parts' columns
 * are views of it): a body crosses two threads as one buffer a shard, where three arrays a
 * partition were made, sent and received (≈ 50 a body, each a backing store of its own).
 * `shardOf`: the shard a partition belongs to, as the node routes parts.
 */
export function packParts(columns: Iterable<[number, SidColumns]>, shardOf: (partition: number) => number): WirePart[] {
  const byShard = new Map<number, [number, SidColumns][]>();
  for (const entry of columns) {
    const n = shardOf(entry[0]);
    let list = byShard.get(n);
    if (list === undefined) byShard.set(n, (list = []));
    list.push(entry);
  }
  const out: WirePart[] = [];
  for (const list of byShard.values()) {
    const total = list.reduce((n, [, c]) => n + c.length, 0);
    // Doubles first (stamps, then values), the sids after them: every view is aligned.
    const buffer = new ArrayBuffer(total * 20);
    let at = 0;
    for (const [partition, c] of list) {
      const ts = new Float64Array(buffer, at * 8, c.length);
      const values = new Float64Array(buffer, (total + at) * 8, c.length);
      const sids = new Uint32Array(buffer, total * 16 + at * 4, c.length);
      ts.set(c.ts.subarray(0, c.length));
      values.set(c.values.subarray(0, c.length));
      for (let i = 0; i < c.length; i++) sids[i] = c.metrics[i]!;
      at += c.length;
      out.push({ partition, sids, ts, values, others: c.others.map((r) => ({ ...r, metric: { sid: r.metric } })) });
    }
  }
  return out;
}

/** The buffers that carry `parts` (each once: a buffer listed twice cannot be transferred). */
export function partTransfers(parts: readonly WirePart[]): ArrayBuffer[] {
  return [...new Set(parts.flatMap((p) => [p.sids.buffer as ArrayBuffer, p.ts.buffer as ArrayBuffer, p.values.buffer as ArrayBuffer]))];
}

export interface ParseResult {
  id: number;
  /** Sid numbering restarts when the worker forgets its metrics; sids of older epochs are stale. */
  epoch: number;
  fresh: Declarations[];
  parts: WirePart[];
  errors: RecordError[];
  submitted: number;
  body: Uint8Array;
  /** Set when the body could not be parsed at all (a malformed MetricList). */
  fatal?: string;
  /** Series limits on: the series named that the node has not admitted yet, and the keys of refused ones whose samples were rejected. */
  candidates: SeriesCandidate[];
  limited: string[];
}
