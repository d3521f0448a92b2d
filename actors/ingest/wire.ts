// What an ingest worker (actors/ingest/worker.ts) sends back for one body: the samples in
// columns, with metrics as the worker's small integer ids ("sids"); the first time a worker
// uses a sid it also sends who the metric is, and the main thread interns it once.
import type { RawFormat, RawContext } from '../../model/journal-entry.js';
import type { IngestRecord, RecordError } from '../../model/ingest-record.js';
import type { WireMetric } from '../../model/metric-info.js';
import { metricKey } from '../../model/metric-key.js';
import { splitCanonical, type CanonicalName } from '../../model/metric-name.js';
import { withRoom } from '../../model/typed-arrays.js';
import type { AccountId, MetricKey } from '../../model/types.js';
import { METRIC_ID_BYTES } from '../../storage/keys.js';

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
export type FreshMetric = Pick<NewMetric, 'sid' | 'accountId' | 'uuid' | 'checkName' | 'partition'> & {
  canonical: string;
  /** Its 16-byte storage id. */
  id: Uint8Array;
};

/**
 * A body's new metrics for one shard. A burst of new series names thousands a body; as objects
 * each would be copied field by field twice (worker → main → shard) and the main thread would
 * do it (issue 30). Each distinct check is sent once; the metrics are one buffer, transferred:
 * DECLARATION_WORDS 32-bit words a metric (sid, its check's number, partition, the byte length
 * of its canonical name), then every metric's 16-byte storage id, then the canonical names'
 * UTF-8 bytes back to back. The shard derives the key and the name's parts again (cheaper than
 * sending them). As one JSON text with hex ids, writing it was ≈ 1.2 µs a new series on the
 * lane and reading it, and turning the hex back into bytes, ≈ 1 µs on the shard.
 */
export interface Declarations {
  shard: number;
  /** [account, uuid, check name] by check number. */
  checks: Check[];
  count: number;
  bytes: Uint8Array;
}

type Check = [accountId: number, uuid: string, checkName: string];
const DECLARATION_WORDS = 4;

/** `fresh` by shard (a partition's shard is its number modulo the shard count). */
export function packDeclarations(fresh: readonly FreshMetric[], shards: number): Declarations[] {
  const byShard = new Map<number, { checks: Check[]; numbers: Map<string, number>; metrics: FreshMetric[]; checkOf: number[]; last: FreshMetric | null; lastCheck: number }>();
  for (const m of fresh) {
    const n = m.partition % shards;
    let packed = byShard.get(n);
    if (packed === undefined) byShard.set(n, (packed = { checks: [], numbers: new Map(), metrics: [], checkOf: [], last: null, lastCheck: -1 }));
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
    packed.metrics.push(m);
    packed.checkOf.push(check);
  }
  return [...byShard].map(([shard, { checks, metrics, checkOf }]) => ({ shard, checks, count: metrics.length, bytes: declarationBytes(metrics, checkOf) }));
}

/** The buffer of `metrics` (see Declarations), sized to fit. */
function declarationBytes(metrics: readonly FreshMetric[], checkOf: readonly number[]): Uint8Array {
  const n = metrics.length;
  const words = new Uint32Array(n * DECLARATION_WORDS);
  let names = nameScratch;
  let used = 0;
  metrics.forEach((m, i) => {
    // At most 3 bytes a UTF-16 unit: room first, then encode in place.
    names = withRoom(names, used + m.canonical.length * 3);
    const length = ENCODER.encodeInto(m.canonical, names.subarray(used)).written;
    const w = i * DECLARATION_WORDS;
    words[w] = m.sid;
    words[w + 1] = checkOf[i]!;
    words[w + 2] = m.partition;
    words[w + 3] = length;
    used += length;
  });
  nameScratch = names;
  const idsAt = n * DECLARATION_WORDS * 4;
  const bytes = new Uint8Array(idsAt + n * METRIC_ID_BYTES + used);
  bytes.set(new Uint8Array(words.buffer), 0);
  metrics.forEach((m, i) => bytes.set(m.id, idsAt + i * METRIC_ID_BYTES));
  bytes.set(names.subarray(0, used), idsAt + n * METRIC_ID_BYTES);
  return bytes;
}

/** Where declarations' names are encoded before they are copied into their buffer (grows; kept between bodies). */
let nameScratch = new Uint8Array(1 << 16);
const ENCODER = new TextEncoder();

/** The buffers to transfer with declarations (each its own). */
export function declarationTransfers(fresh: readonly Declarations[]): ArrayBuffer[] {
  return fresh.map((d) => d.bytes.buffer as ArrayBuffer);
}

/**
 * A metric as a shard is told of it: its name kept as the canonical text, its key and parts made
 * when asked. A shard holds a declared name until the index has it, through a backlog of a
 * million new series: as a parsed name (an object, an array and a string per tag) it was that many
 * objects for the garbage collector to carry over, as text it is one string.
 */
export class DeclaredMetric implements NewMetric {
  private text: string | null = null;

  constructor(
    readonly sid: number,
    readonly accountId: AccountId,
    readonly uuid: string,
    readonly checkName: string,
    /** The canonical name's UTF-8 bytes, a view of the declarations' buffer: a shard's index copies them as they are. */
    readonly canonicalBytes: Buffer,
    /** A view of the declarations' buffer. */
    readonly id: Buffer,
    readonly partition: number,
  ) {}

  /** The canonical name as text, decoded when first asked (a shard that indexes the metric never asks). */
  get canonical(): string {
    return (this.text ??= this.canonicalBytes.toString('utf8'));
  }

  get idHex(): string {
    return this.id.toString('hex');
  }

  get key(): MetricKey {
    return metricKey(this.uuid, this.canonical);
  }

  get name(): CanonicalName {
    return splitCanonical(this.canonical);
  }
}

export function unpackDeclarations(d: Declarations): DeclaredMetric[] {
  const n = d.count;
  const bytes = Buffer.from(d.bytes.buffer, d.bytes.byteOffset, d.bytes.byteLength);
  // The words are read one by one: a clone of a view need not keep it 4-byte aligned.
  const word = (i: number, k: number) => bytes.readUInt32LE((i * DECLARATION_WORDS + k) * 4);
  const idsAt = n * DECLARATION_WORDS * 4;
  let at = idsAt + n * METRIC_ID_BYTES;
  const out = new Array<DeclaredMetric>(n);
  for (let i = 0; i < n; i++) {
    const [accountId, uuid, checkName] = d.checks[word(i, 1)]!;
    const length = word(i, 3);
    const canonical = bytes.subarray(at, at + length);
    at += length;
    out[i] = new DeclaredMetric(word(i, 0), accountId as AccountId, uuid, checkName, canonical, bytes.subarray(idsAt + i * METRIC_ID_BYTES, idsAt + (i + 1) * METRIC_ID_BYTES), word(i, 2));
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
