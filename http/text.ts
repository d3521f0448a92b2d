// `GET /read/<start>/<end>/<uuid>/<metric>`: the legacy text read (interface §4.4).
import type { FastifyInstance } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { ferr } from '../model/errors.js';
import type { MetricInfo } from '../model/metric-info.js';
import { parseItems, type ItemParser } from '../model/json-items.js';
import { ingestAndReply } from './ingest-reply.js';
import { itemsContext } from './items-context.js';
import { epochSecParam, knownMetricFromPath } from './metric-param.js';
import { bodyText } from './request.js';
import { proxyToOwner, type MetricSegments } from './proxy.js';
import { readLegacyNumeric, type LegacyNumericRead } from './rollup-read.js';
import { accountHeaders, booleanQuery, epochS, fields, jsonItems, metricNameParam, str, TAG } from './schemas.js';

/** `/write/text` items: `value` is the text, stored like an `s` record (truncated at the size limit). */
function textItem(limit: number): ItemParser<MetricInfo> {
  return (item, head) => {
    const v = item.value;
    if (v !== null && typeof v !== 'string') return "'value' must be a string (or null)";
    const value = v !== null && v.length > limit ? v.slice(0, limit) : v;
    return [{ kind: 'text', metric: head.metric, ts: head.ts, value }];
  };
}

export async function textRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.route({
    method: ['PUT', 'POST'],
    url: '/write/text',
    schema: { tags: [TAG.ingest], summary: 'Write text samples (legacy JSON writer)', headers: fields(accountHeaders) },
    config: { rawBody: jsonItems('{metric, id, offset, value, account_id?, check_name?}') },
    handler: async (req, reply) => {
      const parsed = parseItems(bodyText(req), itemsContext(node, req, 'string'), textItem(node.config.textSizeLimit));
      if (typeof parsed === 'string') throw ferr('FER_ERR_BAD_BODY', parsed);
      return reply.send(await ingestAndReply(node, { ...parsed, submitted: parsed.items }, 'item'));
    },
  });

  const read = {
    tags: [TAG.read],
    summary: 'Text samples [start, end) as [[epoch_ms, text], ...], runs of one value collapsed to their first sample; with a period third, the deprecated numeric read',
    params: fields(
      {
        start: epochS('start, inclusive'),
        end: epochS('end, exclusive'),
        third: str('the check uuid (text read), or a period in seconds for the deprecated numeric read `/read/<start>/<end>/<period>/<uuid>/<type>/<metric>`'),
        '*': metricNameParam,
      },
      ['start', 'end', 'third', '*'],
    ),
    querystring: fields({
      get_specific_range: booleanQuery('text: every sample in the range, no lead, no collapsing (default false)'),
      lead: booleanQuery('text: include the sample in force at start (default true)'),
    }),
  };
  // One route serves the text read `/read/<start>/<end>/<uuid>/<metric>` and the deprecated
  // numeric read `/read/<start>/<end>/<period>/<uuid>/<type>/<metric>`: the third segment of
  // the numeric form is an integer period, which no uuid is.
  app.get('/read/:start/:end/:third/*', { schema: read, preHandler: proxyToOwner(node, readSegments) }, async (req, reply) => {
    const numeric = legacyNumericRead(req.params as ReadParams);
    if (numeric !== null) return reply.type('application/json').send(await readLegacyNumeric(node, numeric));
    const params = { ...(req.params as ReadParams), uuid: (req.params as ReadParams).third };
    const query = req.query as Record<string, string | undefined>;
    const start = epochSecParam(params.start, 'start');
    const end = epochSecParam(params.end, 'end');
    const options = {
      start: start * 1000,
      end: end * 1000,
      specificRange: booleanParam(query, 'get_specific_range', false),
      lead: booleanParam(query, 'lead', true),
    };
    const metric = await knownMetricFromPath(node, params.uuid, params['*']);
    return reply.send(await node.shards.about(metric, 'readText', options));
  });
}

interface ReadParams {
  start: string;
  end: string;
  third: string;
  '*': string;
}

/** The numeric form's segments, or null for the text form. */
function legacyNumericRead(p: ReadParams): LegacyNumericRead | null {
  if (!/^\d+$/.test(p.third)) return null;
  const m = /^([^/]*)\/([^/]*)\/(.*)$/s.exec(p['*']);
  if (m === null) throw ferr('FER_ERR_BAD_PARAM', 'path', 'the numeric read is /read/<start>/<end>/<period>/<uuid>/<type>/<metric>');
  return { start: p.start, end: p.end, period: p.third, uuid: m[1]!, type: m[2]!, metric: m[3]! };
}

const readSegments: MetricSegments = (req) => {
  const p = req.params as ReadParams;
  const numeric = legacyNumericRead(p);
  return numeric === null ? { uuid: p.third, name: p['*'] } : { uuid: numeric.uuid, name: numeric.metric };
};

export function booleanParam(query: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw ferr('FER_ERR_BAD_PARAM', name, `'${raw}' is not true or false`);
}
