// The legacy JSON writers (/histogram/write, /write/text, /write/nnt; interface §4.6):
// a JSON array of items that each name a metric, a check uuid and an offset. The shared
// fields are validated here; each writer adds its own value fields.
import { parseJsonBody } from './json-body.js';
import { normalizeUuid, parseAccountId } from './check-field.js';
import type { IngestRecord, MetricIdentity, MetricResolution, RecordError } from './ingest-record.js';
import type { AccountId, EpochMs } from './types.js';

export type Item = Record<string, unknown>;

/** Resolves (account, uuid, check name, metric name) to a metric. */
export type ItemResolver<M> = (accountId: AccountId, uuid: string, checkName: string, name: string) => MetricResolution<M>;

export interface ItemHead<M extends MetricIdentity> {
  metric: M;
  /** The item's offset in epoch ms. */
  ts: EpochMs;
}

export interface ItemsResult<R> {
  records: R[];
  errors: RecordError[];
  items: number;
  /** The item index of each record. */
  itemOf: number[];
}

/** Turns one item (its head already resolved) into records, or the reason it is rejected. */
export type ItemParser<M extends MetricIdentity, R = IngestRecord<M>> = (item: Item, head: ItemHead<M>) => R[] | string;

export interface ItemsContext<M extends MetricIdentity> {
  resolve: ItemResolver<M>;
  /** Account from the x-svc-account-id header, for items without `account_id`. */
  headerAccount: AccountId | null;
  latestAllowed: EpochMs;
  /** How `offset` is written: a JSON number of seconds, or a string of seconds (/write/text). */
  offset: 'number' | 'string';
}

/** Parses the body; a body that is not a JSON array is the caller's 400 (returned as a string). */
export function parseItems<M extends MetricIdentity, R = IngestRecord<M>>(body: string, ctx: ItemsContext<M>, parse: ItemParser<M, R>): ItemsResult<R> | string {
  const parsed = parseJsonBody(body);
  if (!parsed.ok) return `the body is not acceptable JSON: ${parsed.reason}`;
  const doc = parsed.value;
  if (!Array.isArray(doc)) return 'the body must be a JSON array of items';
  const records: R[] = [];
  const errors: RecordError[] = [];
  const itemOf: number[] = [];
  doc.forEach((item: unknown, at) => {
    const out = parseItem(item, ctx, parse);
    if (typeof out === 'string') return errors.push({ at, reason: out });
    for (const r of out) {
      records.push(r);
      itemOf.push(at);
    }
    return undefined;
  });
  return { records, errors, items: doc.length, itemOf };
}

function parseItem<M extends MetricIdentity, R>(item: unknown, ctx: ItemsContext<M>, parse: ItemParser<M, R>): R[] | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'an item must be a JSON object';
  const it = item as Item;
  const head = itemHead(it, ctx);
  return typeof head === 'string' ? head : parse(it, head);
}

function itemHead<M extends MetricIdentity>(it: Item, ctx: ItemsContext<M>): ItemHead<M> | string {
  if (typeof it.metric !== 'string' || it.metric.length === 0) return "'metric' must be a non-empty string";
  if (typeof it.id !== 'string') return "'id' must be the check uuid as a string";
  const uuid = normalizeUuid(it.id);
  if (uuid === null) return `'id' ${JSON.stringify(it.id)} is not a uuid`;
  const account = itemAccount(it, ctx.headerAccount);
  if (typeof account === 'string') return account;
  if (it.check_name !== undefined && typeof it.check_name !== 'string') return "'check_name' must be a string";
  const ts = itemOffset(it.offset, ctx.offset);
  if (typeof ts === 'string') return ts;
  if (ts > ctx.latestAllowed) return `'offset' ${String(it.offset)} is further in the future than the allowed clock skew`;
  const resolved = ctx.resolve(account, uuid, (it.check_name as string | undefined) ?? '', it.metric);
  return resolved.ok ? { metric: resolved.metric, ts } : resolved.reason;
}

function itemAccount(it: Item, headerAccount: AccountId | null): AccountId | string {
  if (it.account_id === undefined) return headerAccount ?? (0 as AccountId);
  const account = typeof it.account_id === 'number' || typeof it.account_id === 'string' ? parseAccountId(String(it.account_id)) : null;
  return account ?? `'account_id' ${JSON.stringify(it.account_id)} is not a non-negative integer`;
}

function itemOffset(raw: unknown, form: 'number' | 'string'): EpochMs | string {
  const value = form === 'string' && typeof raw === 'string' && /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  if (form === 'string' && typeof raw !== 'string') return "'offset' must be epoch seconds as a string";
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return "'offset' must be non-negative epoch seconds";
  return Math.round(value * 1000) as EpochMs;
}

/** A required positive integer field. */
export function positiveInt(it: Item, name: string): number | string {
  const v = it[name];
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : `'${name}' must be a positive integer`;
}
