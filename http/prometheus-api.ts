// A Prometheus-compatible query API over one account, so Grafana's Prometheus data source
// and `promtool query` work against ferrite: `/api/v1/query`, `query_range`, `series`,
// `labels`, `label/<name>/values` (GET or form POST), and what Grafana asks besides:
// `metadata`, `status/buildinfo`, `query_exemplars`, `rules`, `alerts`. The account is
// `x-svc-account-id`, or the `defaultAccount` option. Answers and errors take Prometheus' shapes
// (`{"status":"error","errorType":"bad_data","error":…}`, plus our `code`).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { promSource, selectSeries, type SelectScope } from '../actors/coordinators/sources/prometheus.js';
import { ferr, FerriteError } from '../model/errors.js';
import { MatcherError } from '../model/prometheus/matchers.js';
import { inferMetadata, type NamedSeries } from '../model/prometheus/metadata.js';
import type { LabelMatcher, Labels } from '../model/prometheus/types.js';
import { PromQLError } from '../model/promql/ast.js';
import { parseStepParam, parseTimeParam } from '../model/promql/api-params.js';
import { evaluate, MAX_STEPS } from '../model/promql/evaluate.js';
import { parsePromQL } from '../model/promql/parse.js';
import { instantResult, rangeResult } from '../model/promql/result-json.js';
import type { AccountId } from '../model/types.js';
import { accountHeader } from './headers.js';
import { compareLabels, sortedLabels } from '../model/prometheus/labels.js';
import { bodyText } from './request.js';

/** Prometheus' default lookback for instant selectors. */
const LOOKBACK_MS = 5 * 60_000;

type Params = URLSearchParams;

export async function prometheusApiRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  app.setErrorHandler((error: FastifyError | Error, req, reply) => promError(error, req, reply));

  const route = (url: string, handler: (p: Params, scope: SelectScope, req: FastifyRequest) => Promise<unknown>) =>
    app.route({ method: ['GET', 'POST'], url, handler: async (req) => ({ status: 'success', data: await handler(params(req), scopeOf(node, req), req) }) });

  route('/api/v1/query', async (p, scope) => {
    const expr = parsePromQL(required(p, 'query'));
    const time = p.has('time') && p.get('time') !== '' ? parseTimeParam('time', p.get('time')!) : Date.now();
    const value = await evaluate(expr, { startMs: time, stepMs: 1, count: 1 }, evalOptions(node, scope, time, time));
    const answer = instantResult(value, time);
    if (answer.resultType === 'matrix') (answer.result as { metric: Labels }[]).sort((a, b) => compareLabels(sortedLabels(a.metric), sortedLabels(b.metric)));
    return answer;
  });

  route('/api/v1/query_range', async (p, scope) => {
    const start = parseTimeParam('start', required(p, 'start'));
    const end = parseTimeParam('end', required(p, 'end'));
    const step = parseStepParam(required(p, 'step'));
    const expr = parsePromQL(required(p, 'query'), { stepMs: step, rangeMs: end - start });
    if (end < start) throw new PromQLError('end timestamp must not be before start time');
    const count = Math.floor((end - start) / step) + 1;
    if (count > MAX_STEPS) throw new PromQLError('exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)');
    const grid = { startMs: start, stepMs: step, count };
    const answer = rangeResult(await evaluate(expr, grid, evalOptions(node, scope, start, end)), grid);
    (answer.result as { metric: Labels }[]).sort((a, b) => compareLabels(sortedLabels(a.metric), sortedLabels(b.metric)));
    return answer;
  });

  route('/api/v1/series', async (p, scope) => {
    const selectors = p.getAll('match[]');
    if (selectors.length === 0) throw new PromQLError('no match[] parameter provided');
    return limited(p, (await seriesLabels(node, scope, selectors, p)).map((r) => r.labels).sort(compareLabels));
  });

  route('/api/v1/labels', async (p, scope) => {
    const names = new Set<string>();
    for (const { labels } of await seriesLabels(node, scope, p.getAll('match[]'), p)) for (const k of Object.keys(labels)) names.add(k);
    return limited(p, [...names].sort());
  });

  route('/api/v1/label/:name/values', async (p, scope, req) => {
    const name = unescapeLabelName((req.params as { name: string }).name);
    const values = new Set<string>();
    for (const { labels } of await seriesLabels(node, scope, p.getAll('match[]'), p)) if (labels[name] !== undefined) values.add(labels[name]);
    return limited(p, [...values].sort());
  });

  route('/api/v1/metadata', async (p, scope) => {
    const metric = p.get('metric');
    const selectors = metric === null || metric === '' ? [] : [`{__name__=${JSON.stringify(metric)}}`];
    const inferred = inferMetadata(await seriesLabels(node, scope, selectors, p));
    const perMetric = p.has('limit_per_metric') ? nonNegativeInt(p, 'limit_per_metric') : null;
    const entries = limited(p, [...inferred].filter(([name]) => metric === null || metric === '' || name === metric));
    return Object.fromEntries(entries.map(([name, m]) => [name, perMetric === 0 ? [] : [m]]));
  });

  // ferrite keeps no exemplars, recording or alerting rules: Prometheus' empty answers, so Grafana
  // (which asks at start) finds the features off rather than broken.
  route('/api/v1/query_exemplars', async (p) => {
    parsePromQL(required(p, 'query'));
    return [];
  });
  route('/api/v1/rules', async () => ({ groups: [] }));
  route('/api/v1/alerts', async () => ({ alerts: [] }));
  route('/api/v1/status/buildinfo', async () => BUILD_INFO);
}

/**
 * What buildinfo answers: the Prometheus version whose API ferrite's answers follow (Grafana
 * reads features from it) and no `features` (Grafana then takes it for Prometheus, not Mimir).
 */
const BUILD_INFO = { version: '3.0.0', revision: 'ferrite', branch: 'ferrite', buildUser: 'ferrite', buildDate: '', goVersion: '' };

function nonNegativeInt(p: Params, name: string): number {
  const raw = p.get(name)!;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new PromQLError(`invalid parameter ${JSON.stringify(name)}: cannot parse ${JSON.stringify(raw)} to a non-negative integer`);
  return n;
}

/** The first `limit` items (Prometheus 2.51+'s `limit`; 0 or absent: all). */
function limited<T>(p: Params, items: T[]): T[] {
  if (!p.has('limit') || p.get('limit') === '') return items;
  const n = nonNegativeInt(p, 'limit');
  return n === 0 ? items : items.slice(0, n);
}

/**
 * A label name from the URL: Prometheus 3 (and Grafana) write names that are not plain
 * identifiers as `U__` + the name with `_` doubled and other characters as `_<hex code point>_`.
 */
export function unescapeLabelName(name: string): string {
  if (!name.startsWith('U__')) return name;
  let out = '';
  const body = name.slice(3);
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== '_') {
      out += body[i];
      continue;
    }
    if (body[i + 1] === '_') {
      out += '_';
      i++;
      continue;
    }
    const end = body.indexOf('_', i + 1);
    const hex = end < 0 ? '' : body.slice(i + 1, end);
    if (!/^[0-9a-fA-F]+$/.test(hex) || parseInt(hex, 16) > 0x10ffff) return name; // not an escaped name after all
    out += String.fromCodePoint(parseInt(hex, 16));
    i = end;
  }
  return out;
}

function evalOptions(node: FerriteNode, scope: SelectScope, queryStartMs: number, queryEndMs: number) {
  return { source: promSource(node, scope), lookbackMs: LOOKBACK_MS, queryStartMs, queryEndMs };
}

/** Query string and, for POST, a form-encoded body. */
function params(req: FastifyRequest): Params {
  const out = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  if (req.method === 'POST') for (const [k, v] of new URLSearchParams(bodyText(req))) out.append(k, v);
  return out;
}

function required(p: Params, name: string): string {
  const v = p.get(name);
  if (v === null || v === '') throw new PromQLError(`invalid parameter ${JSON.stringify(name)}: missing`);
  return v;
}

function scopeOf(node: FerriteNode, req: FastifyRequest): SelectScope {
  const account = accountHeader(req) ?? (node.config.defaultAccount as AccountId | null);
  if (account === null) throw ferr('FER_ERR_MISSING_HEADER', 'x-svc-account-id (or configure defaultAccount)');
  return { account, uuid: null };
}

/** Distinct series (label sets; numeric and histogram kinds apart) matching any of the selectors (every series when none). */
async function seriesLabels(node: FerriteNode, scope: SelectScope, selectors: string[], p: Params): Promise<NamedSeries[]> {
  const start = p.has('start') ? parseTimeParam('start', p.get('start')!) : 0;
  const end = p.has('end') ? parseTimeParam('end', p.get('end')!) : Date.now() + node.config.maxClockSkewMs;
  const matcherSets: LabelMatcher[][] = selectors.length === 0 ? [[{ type: '=~', name: '__name__', value: '.+' }]] : selectors.map(selectorMatchers);
  const seen = new Map<string, NamedSeries>();
  for (const matchers of matcherSets) {
    for (const ref of await selectSeries(node, scope, matchers, start, end)) {
      const labels = sortedLabels(ref.labels);
      const key = JSON.stringify(labels);
      seen.set(key, { labels, histogram: ref.kind === 'histogram' || seen.get(key)?.histogram === true });
    }
  }
  return [...seen.values()];
}

function selectorMatchers(text: string): LabelMatcher[] {
  const e = parsePromQL(text);
  if (e.type !== 'selector') throw new PromQLError(`invalid parameter "match[]": ${JSON.stringify(text)} is not a series selector`);
  return e.matchers;
}

/** Every failure in Prometheus' error shape; our code alongside. */
function promError(error: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  let wrapped: FerriteError;
  if (error instanceof FerriteError) wrapped = error;
  else if (error instanceof PromQLError || error instanceof MatcherError) wrapped = ferr('FER_ERR_BAD_PROMQL', error.message);
  else {
    req.log.error({ err: error }, 'query failed');
    wrapped = ferr('FER_ERR_BUG', error.message);
  }
  const errorType = wrapped.status >= 500 ? 'internal' : 'bad_data';
  return reply.status(wrapped.status).send({ status: 'error', errorType, error: wrapped.message, code: wrapped.code });
}
