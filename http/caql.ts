// `caql_v1` (spec/caql.md §1): `/extension/lua/caql_v1` and `/extension/lua/public/caql_v1`,
// GET with a query string or POST with a JSON body. Answers DF1 (default) or DF4 (with
// `head.explain` when asked), or for `#lang="promql"` also PQ/PQR (Prometheus' API shapes); a
// bad query is a 400 with IRONdb's user-error body, soft problems go to DF4 `head.warning`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { caqlSource } from '../actors/coordinators/sources/caql.js';
import type { FerriteNode } from '../actors/node/node.js';
import { CaqlSyntaxError } from '../caql/ast.js';
import { CaqlTimeoutError, CaqlUserError } from '../caql/errors.js';
import { run, type Context } from '../caql/evaluate.js';
import { explainJson } from '../caql/explain.js';
import { parseDirectives, parseQuery } from '../caql/parser.js';
import { DEFAULT_LOOKBACK_MS, promqlInstant, promqlRange, promqlStreams } from '../caql/promql.js';
import { promSource } from '../actors/coordinators/sources/prometheus.js';
import { MAX_GRID_SLOTS, type Grid, type Stream } from '../caql/stream.js';
import { parseAccountId } from '../model/check-field.js';
import { df4Json } from '../model/fetch/df4.js';
import { FerriteError } from '../model/errors.js';
import type { AccountId } from '../model/types.js';
import { accountHeader, requestDeadline } from './headers.js';
import { MAX_EPOCH_S } from '../model/fetch/request.js';
import { CAQL_METHOD, requestParams, type Params } from './caql-request.js';
import { accountHeaders, fields, JSON_BODY, str, TAG } from './schemas.js';

const DEFAULT_TIMEOUT_S = 4.5;
/** CAQL's native granularity; finer periods need `#min_period` (§2). */
const NATIVE_PERIOD_S = 60;


// Documented only: a bad parameter is a CAQL user error (its own body), worded by the handler.
const caqlQuery = fields({
  query: str('the CAQL query (or q)'),
  start: str('start, epoch seconds, inclusive (or start_time)'),
  end: str('end, epoch seconds, exclusive (or end_time)'),
  period: str('seconds per slot (default 60; finer only with #min_period)'),
  format: str('DF1 (default) or DF4; PQ (instant at end) or PQR (range, step = period) for #lang="promql"'),
  _timeout: str('seconds (default 4.5)'),
  explain: str('true: DF4 head.explain reports each call (its arguments, streams, time)'),
  account_id: str('account (else x-svc-account-id or X-Circonus-Account)'),
});
const caqlDocs = {
  schema: { tags: [TAG.caql], summary: 'Evaluate a CAQL query over [start, end) at a period: DF1 or DF4', querystring: caqlQuery, headers: fields(accountHeaders) },
  config: { rawBody: { description: 'POST: the same parameters as a JSON object (they override the query string)', types: { [JSON_BODY]: '{query, start, end, period?, format?, _timeout?, explain?, account_id?}' } } },
};

export async function caqlRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  for (const url of ['/extension/lua/caql_v1', '/extension/lua/public/caql_v1']) {
    app.route({ method: ['GET', 'POST'], url, ...caqlDocs, handler: (req, reply) => answer(node, req, reply) });
  }
}

type Format = 'DF1' | 'DF4' | 'PQ' | 'PQR';
const FORMATS: readonly Format[] = ['DF1', 'DF4', 'PQ', 'PQR'];

async function answer(node: FerriteNode, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  let params: Params = {};
  try {
    params = requestParams(req);
    const text = stringParam(params, ['query', 'q']);
    const { directives, at } = parseDirectives(text);
    const format = formatOf(params);
    const lang = directives.lang ?? 'caql';
    if (lang !== 'caql' && lang !== 'promql') throw new CaqlUserError(lang === true ? '#lang needs a value: #lang="promql" or #lang="caql"' : `#lang=${lang}: only caql and promql are served`);
    if ((format === 'PQ' || format === 'PQR') && lang !== 'promql') throw new CaqlUserError(`format ${format} answers #lang="promql" queries; use DF1 or DF4 for CAQL`);
    const account = accountOf(req, params);
    if (lang === 'promql') {
      if (account === null) throw new CaqlUserError('#lang="promql" needs an account: send account_id or x-svc-account-id');
      const source = promSource(node, { account, uuid: null });
      const lookbackMs = directives.lookback_window === undefined ? DEFAULT_LOOKBACK_MS : periodSeconds(directives.lookback_window) * 1000;
      const promql = text.slice(at);
      if (format === 'PQ') return reply.send(await promqlInstant(promql, instantTime(params), source, lookbackMs));
      if (format === 'PQR') return reply.send(await promqlRange(promql, numberParam(params, ['start', 'start_time']), numberParam(params, ['end', 'end_time']), numberParam(params, ['period'], NATIVE_PERIOD_S), source, lookbackMs));
      const grid = gridOf(params, directives.min_period);
      return sendStreams(reply, format, grid, await promqlStreams(promql, grid, source, lookbackMs), [], undefined);
    }
    const grid = gridOf(params, directives.min_period);
    const timeoutS = numberParam(params, ['_timeout'], DEFAULT_TIMEOUT_S);
    if (!(timeoutS > 0)) throw new CaqlUserError('_timeout must be a positive number of seconds');
    // x-svc-timeout / x-svc-deadline (as on /fetch) can only shorten `_timeout`.
    const now = Date.now();
    const deadline = Math.min(now + timeoutS * 1000, requestDeadline(req, Infinity));
    // The limit the timeout message names: `_timeout`, or what the header left of it.
    const limitS = deadline === now + timeoutS * 1000 ? timeoutS : (deadline - now) / 1000;
    const query = parseQuery(text);
    const ctx: Context = { source: caqlSource(node, account), warnings: [], deadline, timeoutS: limitS, view: grid };
    if (booleanParam(params, 'explain')) ctx.explain = new Map();
    const streams = await run(query, grid, ctx);
    return sendStreams(reply, format, grid, streams, ctx.warnings, ctx.explain === undefined ? undefined : explainJson(text, query, ctx.explain));
  } catch (error) {
    if (error instanceof CaqlTimeoutError) return reply.status(504).send(userError('504 (Timeout)', error.message, params));
    if (error instanceof CaqlUserError || error instanceof CaqlSyntaxError) return reply.status(400).send(userError('400 (User facing error)', error.message, params));
    // A bad tag query inside find(), a bad account header: still the caller's mistake, in CAQL's shape.
    if (error instanceof FerriteError && error.status < 500) return reply.status(error.status).send(userError(`${error.status} (User facing error)`, error.message, params));
    throw error;
  }
}

/** DF4 (with `head.explain` when asked) or DF1. */
function sendStreams(reply: FastifyReply, format: Format, grid: Grid, streams: Stream[], warnings: string[], explain: unknown): FastifyReply {
  if (format === 'DF1') return reply.send(df1(grid, streams));
  const head = { startMs: grid.startS * 1000, periodMs: grid.periodS * 1000, count: grid.count, errors: [], warnings, explain };
  return reply.type('application/json').send(df4Json(head, streams));
}

function formatOf(params: Params): Format {
  const raw = params.format ?? 'DF1';
  const format = String(raw).toUpperCase() as Format;
  if (!FORMATS.includes(format)) throw new CaqlUserError(`format must be DF1, DF4, PQ or PQR, not '${String(raw)}'`);
  return format;
}

/** `format=PQ` evaluates at `end` (gosnowth sends start = t − 1, end = t), else `start`, else now. */
function instantTime(params: Params): number {
  for (const names of [['end', 'end_time'], ['start', 'start_time']]) {
    if (names.some((n) => params[n] !== undefined && params[n] !== '')) return numberParam(params, names);
  }
  return Date.now() / 1000;
}

/** `explain`: true, 1, "true" or "1" (gosnowth always sends a JSON boolean). */
function booleanParam(params: Params, name: string): boolean {
  const raw = params[name];
  if (raw === undefined || raw === false || raw === 0 || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === true || raw === 1 || raw === 'true' || raw === '1') return true;
  throw new CaqlUserError(`parameter ${name} must be true or false, got '${String(raw)}'`);
}

function userError(status: string, message: string, params: Params) {
  return { success: false, status, method: CAQL_METHOD, user_error: { message }, arguments: params, locals: [], trace: [] };
}

function stringParam(params: Params, names: string[]): string {
  for (const n of names) if (typeof params[n] === 'string' && (params[n] as string).trim() !== '') return params[n] as string;
  throw new CaqlUserError(`missing parameter ${names.join(' (or ')}${names.length > 1 ? ')' : ''}`);
}

function numberParam(params: Params, names: string[], fallback?: number): number {
  for (const n of names) {
    const raw = params[n];
    if (raw === undefined || raw === '') continue;
    const v = typeof raw === 'number' ? raw : Number(String(raw).trim());
    if (!Number.isFinite(v)) throw new CaqlUserError(`parameter ${n} must be a number, got '${String(raw)}'`);
    return v;
  }
  if (fallback === undefined) throw new CaqlUserError(`missing parameter ${names.join(' (or ')}${names.length > 1 ? ')' : ''}`);
  return fallback;
}

/** [start, end) at period, start aligned down to the period; `#min_period` allows finer than 1 min. */
function gridOf(params: Params, minPeriod: string | true | undefined): Grid {
  const start = numberParam(params, ['start', 'start_time']);
  const end = numberParam(params, ['end', 'end_time']);
  let period = numberParam(params, ['period'], NATIVE_PERIOD_S);
  if (!(period > 0)) throw new CaqlUserError('period must be positive');
  period = Math.max(period, minPeriod === undefined ? NATIVE_PERIOD_S : periodSeconds(minPeriod));
  if (!(end > start)) throw new CaqlUserError('end must be after start');
  if (start < 0 || end > MAX_EPOCH_S) throw new CaqlUserError(`start and end must be epoch seconds between 0 and ${MAX_EPOCH_S}`);
  const startS = Math.floor(start / period) * period;
  const count = Math.ceil((end - startS) / period);
  if (count > MAX_GRID_SLOTS) throw new CaqlUserError(`the range holds ${count} periods; at most ${MAX_GRID_SLOTS}`);
  return { startS, periodS: period, count };
}

function periodSeconds(raw: string | true): number {
  const m = typeof raw === 'string' ? /^([0-9.]+)\s*(s|m|h|d)?$/.exec(raw.trim()) : null;
  if (m === null) throw new CaqlUserError(`#min_period=${String(raw)} is not seconds or a duration such as 10s`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
}

function accountOf(req: FastifyRequest, params: Params): AccountId | null {
  const raw = params.account_id;
  if (raw !== undefined && raw !== '') {
    const id = parseAccountId(String(raw));
    if (id === null) throw new CaqlUserError(`account_id '${String(raw)}' is not a non-negative integer`);
    return id;
  }
  const circonus = req.headers['x-circonus-account'];
  if (typeof circonus === 'string' && circonus !== '') return parseAccountId(circonus) ?? null;
  return accountHeader(req);
}

/** DF1: `[[ts, [v…]], …]`, one row per period. */
function df1(grid: Grid, streams: Stream[]): [number, unknown[]][] {
  return Array.from({ length: grid.count }, (_, i) => [
    grid.startS + i * grid.periodS,
    streams.map((s) => {
      const v = s.values[i] ?? null;
      if (v === null) return null;
      if (typeof v === 'number') return Number.isFinite(v) ? v : null;
      return v.toLabelCounts();
    }),
  ]);
}
