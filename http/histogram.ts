// Histograms: `PUT|POST /histogram/write` (legacy JSON writer) and
// `GET /histogram/<start>/<end>/<period>/<uuid>/<metric>` (interface §4.4, §4.6).
import type { FastifyInstance } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import type { MetricInfo } from '../model/metric-info.js';
import { ferr } from '../model/errors.js';
import { histogramProblem } from '../model/histogram-check.js';
import { binHexLabel, binLabel, deserializeHistogram } from '../model/histogram/index.js';
import { coarsened, minGranularity } from '../model/histogram-read-options.js';
import { parseItems, positiveInt, type ItemParser } from '../model/json-items.js';
import { ingestAndReply } from './ingest-reply.js';
import { itemsContext } from './items-context.js';
import { epochSecParam, knownMetricFromPath } from './metric-param.js';
import { bodyText } from './request.js';
import { proxyToOwner } from './proxy.js';
import { accountHeaders, epochS, fields, jsonItems, metricNameParam, str, TAG, uuidParam } from './schemas.js';

/** `format`: bin labels as the reference library prints them (double, the default) or as C's `%a`. */
const LABELS = { double: binLabel, hex: binHexLabel } as const;

/** `histogram`: base64 of the serialized circllhist, validated here so storage never sees a bad one. */
const histogramItem: ItemParser<MetricInfo> = (item, head) => {
  const period = positiveInt(item, 'period');
  if (typeof period === 'string') return period;
  if (typeof item.histogram !== 'string') return "'histogram' must be a base64 string";
  const problem = histogramProblem(item.histogram);
  if (problem !== null) return `'histogram' ${problem}`;
  return [{ kind: 'histogram', metric: head.metric, ts: head.ts, value: item.histogram }];
};


export async function histogramRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.route({
    method: ['PUT', 'POST'],
    url: '/histogram/write',
    schema: { tags: [TAG.ingest], summary: 'Write histograms (legacy JSON writer)', headers: fields(accountHeaders) },
    config: { rawBody: jsonItems('{metric, id, offset, period, histogram (base64 circllhist), account_id?, check_name?}') },
    handler: async (req, reply) => {
      const parsed = parseItems(bodyText(req), itemsContext(node, req, 'number'), histogramItem);
      if (typeof parsed === 'string') throw ferr('FER_ERR_BAD_BODY', parsed);
      return reply.send(await ingestAndReply(node, { ...parsed, submitted: parsed.items }, 'item'));
    },
  });

  const histogramRead = {
    tags: [TAG.read],
    summary: 'Histograms per period starting in [start, end] as [[ts_s, period, {bin: count}], ...]',
    params: fields(
      { start: epochS('start, inclusive'), end: epochS('end, inclusive'), period: epochS('period, seconds (a histogram rollup level or a multiple of one)'), uuid: uuidParam, '*': metricNameParam },
      ['start', 'end', 'period', 'uuid', '*'],
    ),
    querystring: fields({
      format: str('bin labels: double (default, `+23e-004`) or hex (C `%a` of the bin edge, `0x1.8p+1`)', { enum: ['', ...Object.keys(LABELS)] }),
      min_granularity: str('the finest period answered, seconds, or auto (the finest level whose retention still holds start); the period used is the smallest multiple of it that is at least `period`'),
    }),
  };
  app.get('/histogram/:start/:end/:period/:uuid/*', { schema: histogramRead, preHandler: proxyToOwner(node) }, async (req, reply) => {
    const p = req.params as { start: string; end: string; period: string; uuid: string; '*': string };
    const start = epochSecParam(p.start, 'start');
    const end = epochSecParam(p.end, 'end');
    const period = epochSecParam(p.period, 'period');
    if (period <= 0) throw ferr('FER_ERR_BAD_PARAM', 'period', 'must be a positive number of seconds');
    if (end < start) throw ferr('FER_ERR_BAD_PARAM', 'end', `${end} is before start ${start}`);
    const q = req.query as { format?: string; min_granularity?: string };
    const label = labelsFor(q.format);
    const min = minGranularity(q.min_granularity, node.config.histogramRollups, start, Date.now());
    if (typeof min === 'string') throw ferr('FER_ERR_BAD_PARAM', 'min_granularity', min);
    const used = coarsened(period, min);
    const metric = await knownMetricFromPath(node, p.uuid, p['*']);
    const rows = await node.shards.about(metric, 'histograms', used, start * 1000, end * 1000);
    return reply.send(rows.map(([ts, bytes]) => [ts / 1000, used, deserializeHistogram(bytes).toLabelCounts(label)]));
  });
}

function labelsFor(format: string | undefined): (typeof LABELS)[keyof typeof LABELS] {
  if (format === undefined || format === '') return LABELS.double;
  if (format === 'double' || format === 'hex') return LABELS[format];
  throw ferr('FER_ERR_BAD_PARAM', 'format', `'${format}' is not double or hex`);
}
