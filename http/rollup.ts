// `GET /rollup/<uuid>/<metric>` and `PUT|POST /write/nnt` (interface §4.4, §4.6).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MetricInfo } from '../model/metric-info.js';
import type { FerriteNode } from '../actors/node/node.js';
import type { RollupEngine } from '../storage/rollups.js';
import { ferr } from '../model/errors.js';
import { parseItems, type ItemParser } from '../model/json-items.js';
import type { RollupAccumulator } from '../model/rollup/accumulator.js';
import { nntRecords } from '../model/rollup/nnt.js';
import { parseRollupType, ROLLUP_TYPE_NAMES } from '../model/rollup/types.js';
import { requireSomething, summarize, withinLimits } from './ingest-reply.js';
import { itemsContext } from './items-context.js';
import { knownMetricFromPath } from './metric-param.js';
import { bodyText, requiredSecMs } from './request.js';
import { periodLimit, readRollupJson } from './rollup-read.js';
import { proxyToOwner } from './proxy.js';
import { accountHeaders, fields, jsonItems, metricPath, secMs, str, TAG } from './schemas.js';

const ENGINES: readonly RollupEngine[] = ['dispatch', 'nnt', 'recalc'];

/** One accepted item: its metric and its rollup records (one, or one per part) as [start ms, data]. */
interface NntItem {
  metric: MetricInfo;
  records: [number, RollupAccumulator][];
}

const nntItem: ItemParser<MetricInfo, NntItem> = (item, head) => {
  const records = nntRecords(item);
  return typeof records === 'string' ? records : [{ metric: head.metric, records: records.map(([at, acc]) => [head.ts + at, acc]) }];
};

export async function rollupRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  const rollupRead = {
    tags: [TAG.read],
    summary: 'Numeric rollups per span for periods starting in [start_ts, end_ts) as [[ts_s, value], ...]',
    params: metricPath,
    querystring: fields(
      {
        start_ts: secMs('start, inclusive'),
        end_ts: secMs('end, exclusive'),
        rollup_span: str('the period: `<n>s` or `<n>ms`, n > 0'),
        get_engine: str('dispatch (default), nnt or recalc', { enum: ENGINES }),
        type: str('the value of each period (default average)', { enum: ['', ...ROLLUP_TYPE_NAMES] }),
      },
      ['start_ts', 'end_ts', 'rollup_span'],
    ),
  };
  app.get('/rollup/:uuid/*', { schema: rollupRead, preHandler: proxyToOwner(node) }, async (req, reply) => {
    const { uuid, '*': name } = req.params as { uuid: string; '*': string };
    const q = req.query as Record<string, string | undefined>;
    const start = requiredSecMs(q, 'start_ts');
    const end = requiredSecMs(q, 'end_ts');
    if (end < start) throw ferr('FER_ERR_BAD_PARAM', 'end_ts', 'is before start_ts');
    const span = rollupSpan(q.rollup_span);
    const engine = (q.get_engine ?? 'dispatch') as RollupEngine;
    if (!ENGINES.includes(engine)) throw ferr('FER_ERR_BAD_PARAM', 'get_engine', `'${q.get_engine}' is not one of ${ENGINES.join(', ')}`);
    const type = parseRollupType(q.type);
    if (type === null) throw ferr('FER_ERR_BAD_PARAM', 'type', `'${q.type}' is not one of ${ROLLUP_TYPE_NAMES.join(', ')}`);
    periodLimit(start, end, span, 'rollup_span');
    const metric = await knownMetricFromPath(node, uuid, name);
    return reply.type('application/json').send(await readRollupJson(node, metric, span, start, end, engine, type));
  });

  const nntDocs = {
    schema: { tags: [TAG.ingest], summary: 'Write rollup records (legacy JSON writer)', headers: fields(accountHeaders) },
    config: { rawBody: jsonItems('{metric, id, offset, count, value, derivative, counter, stddev, derivative_stddev, counter_stddev} (or parts: [sub_period_s, [...]], one record per sub-interval)') },
  };
  // gosnowth's WriteNumeric posts the same items to /write/numeric.
  app.route({
    method: ['PUT', 'POST'],
    url: '/write/nnt',
    ...nntDocs,
    handler: writeNnt,
  });
  app.post('/write/numeric', nntDocs, writeNnt);

  async function writeNnt(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const parsed = parseItems(bodyText(req), itemsContext(node, req, 'number'), nntItem);
    if (typeof parsed === 'string') throw ferr('FER_ERR_BAD_BODY', parsed);
    const { records, errors, admission } = await withinLimits(node, parsed);
    const byMetric = new Map<MetricInfo, [number, RollupAccumulator][]>();
    try {
      requireSomething(records.length, errors, 'item');
      for (const r of records) {
        const list = byMetric.get(r.metric) ?? [];
        list.push(...r.records);
        byMetric.set(r.metric, list);
      }
      // An item whose parts all count 0 is accepted and stores nothing.
      const written = [...byMetric].filter(([, rs]) => rs.length > 0);
      await Promise.all(written.map(([metric, rs]) => node.writeNnt(metric, rs)));
    } finally {
      admission?.release();
    }
    return reply.send(summarize(parsed.items, records.length, errors, 'item'));
  }
}

/** `<n>s` or `<n>ms`, n > 0; in ms. */
function rollupSpan(raw: string | undefined): number {
  if (raw === undefined || raw === '') throw ferr('FER_ERR_MISSING_PARAM', 'rollup_span');
  const m = /^(\d+)(s|ms)$/.exec(raw);
  const ms = m === null ? 0 : Number(m[1]) * (m[2] === 's' ? 1000 : 1);
  if (ms <= 0 || !Number.isSafeInteger(ms)) throw ferr('FER_ERR_BAD_PARAM', 'rollup_span', `'${raw}' must be a positive <n>s or <n>ms`);
  return ms;
}
