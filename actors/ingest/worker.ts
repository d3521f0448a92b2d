// An ingest worker thread: parses request bodies (TSV, FlatBuffer MetricLists) into columns
// and canonicalises metric names, the per-sample work that does not need the node's state,
// so it runs beside the main thread on another core (actors/ingest/pool.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { checkNameProblem, parseCheckField } from '../../model/check-field.js';
import { INITIAL_CAPACITY } from '../../model/ingest-batch.js';
import type { MetricResolution } from '../../model/ingest-record.js';
import { decodeMetricList, MetricListFormatError } from '../../model/metric-list/decode.js';
import { metricListRecords } from '../../model/metric-list/records.js';
import { metricKey, placeMetric } from '../../model/metric-key.js';
import { canonicalText } from '../../model/metric-name.js';
import { SeriesScreens } from './series-screens.js';
import { ownString } from '../../model/own-string.js';
import { parseTsvInto } from '../../model/tsv.js';
import { RawKeys } from './raw-keys.js';
import { SidBatch, WorkerSeries, type Sid } from './worker-series.js';
import type { AccountId } from '../../model/types.js';
import { declarationTransfers, packDeclarations, packParts, partTransfers, type FreshMetric, type LaneVerdict, type ParseJob, type ParseResult, type SeriesCandidate } from './wire.js';

/** Series limits in force for one parse (actors/node/series-limits.ts). */
interface Screening {
  generation: number;
  /** Refused by the node for this body even if this lane has forgotten it. */
  refuse: Map<string, string> | null;
  stamp: number;
  candidates: SeriesCandidate[];
  limited: string[];
}

/** Past this many metrics the worker forgets them all and starts a new sid epoch. */
const MAX_METRICS = 2_000_000;
/** Past this many check fields their parses are forgotten (they are only a shortcut). */
const MAX_CHECK_FIELDS = 100_000;
/** A partition's sample columns start with room for at most this many (see `lastPartLengths`). */
const MAX_PRESIZED_SAMPLES = 1 << 16;

const { partitions, shards } = workerData as { partitions: number; shards: number };
let epoch = 0;
/**
 * Whether metrics keep their names (series limits ask their keys): from the first body parsed
 * under limits on, which starts a new epoch so that every metric named since has its name.
 */
let keepNames = false;
/** This epoch's metrics. */
let series = new WorkerSeries(keepNames);
/** Series limits' state of this epoch's metrics (made when limits are first in force). */
let screens: SeriesScreens | null = null;
let byCheck = new Map<string, Map<string, MetricResolution<Sid>>>();
/** TSV metrics by their lines' check and name bytes, per header account (not while series limits screen: see `parse`). */
let rawKeys = new Map<AccountId | null, RawKeys>();
/** Check fields parsed, per header account (a new name parses its line's check field; checks are few). */
let checkFields = new Map<string, ReturnType<typeof parseCheckField>>();
/** The check field parsed last (see `checkFieldParse`). */
let lastCheckField: { text: string; headerAccount: AccountId | null; parse: ReturnType<typeof parseCheckField> } | null = null;
let fresh: FreshMetric[] = [];
let screening: Screening | null = null;
/** Numeric samples the last body held per partition: the next body's columns start with that much room (up to MAX_PRESIZED_SAMPLES: one huge body must not make every later one allocate as much). */
const lastPartLengths = new Map<number, number>();

function forget(): void {
  epoch++;
  series = new WorkerSeries(keepNames);
  screens = null;
  byCheck = new Map();
  rawKeys = new Map();
  checkFields = new Map();
  lastCheckField = null;
}

function intern(accountId: AccountId, uuid: string, checkName: string, raw: string): MetricResolution<Sid> {
  const tooLong = checkNameProblem(checkName);
  if (tooLong !== null) return { ok: false, reason: tooLong };
  const parsed = canonicalText(raw);
  if (!parsed.ok) return parsed;
  const { canonical } = parsed;
  const key = metricKey(uuid, canonical);
  // Raw lines new to this worker are mostly new metrics, whose id is needed anyway.
  const { id, partition } = placeMetric(key, partitions);
  const known = series.find(id);
  if (known >= 0) return { ok: true, metric: known };
  const sid = series.add(id, canonical, accountId, uuid, checkName, partition);
  fresh.push({ sid, accountId, uuid, checkName, canonical, id, partition });
  return { ok: true, metric: sid };
}

/**
 * A resolution with series limits applied: a series the node refused (in this generation,
 * or for this body) is the line's error and listed in `limited`; one it has not admitted in
 * this generation is listed as a candidate. Each is listed once per body.
 */
function screened(r: MetricResolution<Sid>): MetricResolution<Sid> {
  const s = screening;
  if (s === null || !r.ok) return r;
  const sid = r.metric;
  const screen = (screens ??= new SeriesScreens());
  if (screen.refused(sid) !== s.generation) {
    const why = s.refuse?.get(series.keyOf(sid));
    if (why !== undefined) screen.refuse(sid, s.generation, why);
  }
  if (screen.refused(sid) === s.generation) {
    if (screen.stamp(sid, s.stamp)) s.limited.push(series.keyOf(sid));
    return { ok: false, reason: screen.reason(sid) };
  }
  if (screen.admitted(sid) !== s.generation && screen.stamp(sid, s.stamp)) {
    const key = series.keyOf(sid);
    const { accountId, uuid } = series.checkOf(sid);
    s.candidates.push({ sid, key, accountId, uuid, idHex: placeMetric(key, partitions).idHex, partition: series.partitionOf(sid) });
  }
  return r;
}

/** The node's answer about candidates of this lane's epoch (older epochs' sids are gone). */
function applyVerdict(v: LaneVerdict): void {
  if (v.epoch !== epoch) return;
  const screen = (screens ??= new SeriesScreens());
  for (const sid of v.admitted) if (sid < series.size) screen.admit(sid, v.generation);
  for (const [sid, why] of v.refused) if (sid < series.size) screen.refuse(sid, v.generation, why);
}

/** The same resolution rules as the node's registry (actors/node/metric-registry.ts), cached per check then name. */
function tsvResolver(headerAccount: AccountId | null) {
  let lastCheck: string | null = null;
  let names = new Map<string, MetricResolution<Sid>>();
  return (checkField: string, name: string): MetricResolution<Sid> => {
    if (checkField !== lastCheck) {
      lastCheck = checkField;
      const key = `${headerAccount ?? ''}\u0000${checkField}`;
      let found = byCheck.get(key);
      if (found === undefined) byCheck.set(key, (found = new Map()));
      names = found;
    }
    let hit = names.get(name);
    if (hit === undefined) {
      const own = ownString(name);
      hit = resolveTsv(ownString(checkField), own, headerAccount);
      names.set(own, hit);
    }
    return screened(hit);
  };
}

/** A TSV line's check field and name to its metric, interned; the check field's parse is kept. */
function resolveTsv(checkField: string, name: string, headerAccount: AccountId | null): MetricResolution<Sid> {
  const check = checkFieldParse(checkField, headerAccount);
  return check.ok ? intern(check.check.accountId, check.check.uuid, check.check.checkName, name) : check;
}

/** The parse of a check field, kept; the last one asked for without building its key (a burst of new series is mostly of one check). */
function checkFieldParse(checkField: string, headerAccount: AccountId | null): ReturnType<typeof parseCheckField> {
  const last = lastCheckField;
  if (last !== null && last.text === checkField && last.headerAccount === headerAccount) return last.parse;
  const key = `${headerAccount ?? ''}\u0000${checkField}`;
  let check = checkFields.get(key);
  if (check === undefined) {
    check = parseCheckField(checkField, headerAccount);
    if (checkFields.size >= MAX_CHECK_FIELDS) checkFields = new Map();
    checkFields.set(key, check);
  }
  lastCheckField = { text: checkField, headerAccount, parse: check };
  return check;
}

/** The raw-key table of a header account's TSV bodies. */
function rawKeysOf(headerAccount: AccountId | null): RawKeys {
  let keys = rawKeys.get(headerAccount);
  if (keys === undefined) rawKeys.set(headerAccount, (keys = new RawKeys((checkField, name) => resolveTsv(checkField, name, headerAccount))));
  return keys;
}

/** MetricList samples: cached per envelope (account, uuid, check name), then per name. */
function envelopeResolver() {
  let last: [AccountId, string, string] | null = null;
  let names = new Map<string, MetricResolution<Sid>>();
  return (account: AccountId, uuid: string, checkName: string, name: string): MetricResolution<Sid> => {
    if (last === null || last[0] !== account || last[1] !== uuid || last[2] !== checkName) {
      last = [account, uuid, checkName];
      const key = `${account}\u0001${uuid}\u0000${checkName}`;
      let found = byCheck.get(key);
      if (found === undefined) byCheck.set(key, (found = new Map()));
      names = found;
    }
    let hit = names.get(name);
    if (hit === undefined) names.set(name, (hit = intern(account, uuid, ownString(checkName), ownString(name))));
    return screened(hit);
  };
}

function parse(job: ParseJob): ParseResult {
  if (job.limits !== undefined) keepNames = true;
  if (series.size > MAX_METRICS || job.format === 'forget' || keepNames !== series.keepsNames) forget();
  fresh = [];
  const limits = job.limits;
  screening = limits === undefined ? null : { generation: limits.generation, refuse: limits.refuse === undefined ? null : new Map(limits.refuse), stamp: job.id, candidates: [], limited: [] };
  const screen = { candidates: screening?.candidates ?? [], limited: screening?.limited ?? [] };
  if (job.format === 'forget') return { id: job.id, epoch, fresh: packDeclarations(fresh, shards), parts: [], errors: [], submitted: 0, body: job.body, ...screen };
  const batch = new SidBatch(series, (partition) => Math.min(lastPartLengths.get(partition) ?? INITIAL_CAPACITY, MAX_PRESIZED_SAMPLES));
  let errors;
  let submitted;
  const body = Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength);
  if (job.format === 'tsv') {
    // Series limits screen every line's metric, so with them on every line is resolved by its text.
    const known = screening === null ? rawKeysOf(job.ctx.headerAccount) : undefined;
    const r = parseTsvInto(body, { resolve: tsvResolver(job.ctx.headerAccount), latestAllowed: job.ctx.latestAllowed, textSizeLimit: job.ctx.textSizeLimit }, batch, known);
    errors = r.errors;
    submitted = r.lines;
  } else {
    let list;
    try {
      list = decodeMetricList(body);
    } catch (error) {
      if (error instanceof MetricListFormatError) return { id: job.id, epoch, fresh: packDeclarations(fresh, shards), parts: [], errors: [], submitted: 0, body: job.body, fatal: error.message, ...screen };
      throw error;
    }
    const r = metricListRecords(list, {
      resolve: envelopeResolver(),
      latestAllowed: job.ctx.latestAllowed,
      textSizeLimit: job.ctx.textSizeLimit,
    });
    for (const record of r.records) batch.add(record);
    errors = r.errors;
    submitted = list.samples.length + list.skipped.length;
  }
  for (const [partition, p] of batch.parts) lastPartLengths.set(partition, p.length);
  const parts = packParts(batch.parts, (partition) => partition % shards);
  return { id: job.id, epoch, fresh: packDeclarations(fresh, shards), parts, errors, submitted, body: job.body, ...screen };
}

parentPort!.on('message', (job: ParseJob | LaneVerdict) => {
  if ('verdict' in job) return applyVerdict(job);
  const result = parse(job);
  parentPort!.postMessage(result, [result.body.buffer as ArrayBuffer, ...partTransfers(result.parts), ...declarationTransfers(result.fresh)]);
});
