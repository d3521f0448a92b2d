// `PUT|POST /raw` (TSV submission) and `GET /raw/<uuid>/<metric>` (interface §4.4, §4.6).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { ferr } from '../model/errors.js';
import type { NumericValue } from '../model/types.js';
import { encodeRawJournalEntry, type RawContext } from '../model/journal-entry.js';
import { asEpochMs } from '../model/types.js';
import { MetricListFormatError } from '../model/metric-list/decode.js';
import { accountHeader, mediaType, svcHeader } from './headers.js';
import { ingestParsed } from './ingest-reply.js';
import { numberJson, rowsJson } from '../model/json-out.js';
import { knownMetricFromPath } from './metric-param.js';
import { proxyToOwner } from './proxy.js';
import { bodyText, requiredSecMs } from './request.js';
import { accountHeaders, fields, metricPath, secMs, svcHeaders, TAG, TSV_BODY } from './schemas.js';

const FLATBUFFER_TYPES = new Set([
  'application/x-svc-metric-list-flatbuffer',
  'application/x-circonus-metric-list-flatbuffer',
]);

export async function rawRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.route({
    method: ['PUT', 'POST'],
    url: '/raw',
    schema: {
      tags: [TAG.ingest],
      summary: 'Submit samples: TSV M/H1 lines, or a FlatBuffer MetricList',
      headers: fields({ ...accountHeaders, ...svcHeaders({ datapoints: 'FlatBuffer bodies: the number of samples (a hint; required)' }) }),
    },
    config: {
      rawBody: {
        description: 'TSV lines `M TIMESTAMP UUID NAME TYPE VALUE` and `H1 TIMESTAMP UUID NAME HISTOGRAM` (TAB-separated), or a FlatBuffer MetricList (v1 CIML or v2 CMLS). Reply: {records, updated, misdirected, discarded, errors, error_details?}.',
        types: {
          [TSV_BODY]: 'TSV records, one per line',
          'application/x-svc-metric-list-flatbuffer': 'FlatBuffer MetricList',
          'application/x-circonus-metric-list-flatbuffer': 'FlatBuffer MetricList (IRONdb spelling)',
        },
      },
    },
    handler: async (req, reply) => {
      if (FLATBUFFER_TYPES.has(mediaType(req))) return reply.send(await ingestMetricList(node, req));
      const ctx = rawContext(node, req);
      const parsed = await node.parseRaw('tsv', ctx, rawBody(req));
      return reply.send(await ingestParsed(node, parsed, encodeRawJournalEntry('tsv', parsed.ctx, parsed.body), 'line'));
    },
  });

  const rawRead = {
    tags: [TAG.read],
    summary: 'Raw numeric samples [start_ts, end_ts) as [[epoch_ms, value], ...]',
    params: metricPath,
    querystring: fields({ start_ts: secMs('start, inclusive'), end_ts: secMs('end, exclusive') }, ['start_ts', 'end_ts']),
  };
  app.get('/raw/:uuid/*', { schema: rawRead, preHandler: proxyToOwner(node) }, async (req, reply) => {
    const { uuid, '*': name } = req.params as { uuid: string; '*': string };
    const query = req.query as Record<string, string | undefined>;
    const start = requiredSecMs(query, 'start_ts');
    const end = requiredSecMs(query, 'end_ts');
    const metric = await knownMetricFromPath(node, uuid, name);
    const rows = await node.shards.about(metric, 'read', 'numeric', start, end);
    return reply.type('application/json').send(rowsJson(rows.ts, rows.values as NumericValue[], numberJson));
  });
}

/** A FlatBuffer MetricList body (either layout); `x-svc-datapoints` is required but only a hint. */
async function ingestMetricList(node: FerriteNode, req: FastifyRequest): Promise<Record<string, unknown>> {
  const hint = svcHeader(req, 'datapoints')?.trim();
  if (hint === undefined || hint === '') throw ferr('FER_ERR_MISSING_HEADER', 'x-svc-datapoints');
  if (!/^\d+$/.test(hint)) throw ferr('FER_ERR_BAD_HEADER', 'x-svc-datapoints', `'${hint}' is not a non-negative integer`);
  const ctx = rawContext(node, req);
  let parsed;
  try {
    parsed = await node.parseRaw('metriclist', ctx, rawBody(req));
  } catch (error) {
    if (error instanceof MetricListFormatError) throw ferr('FER_ERR_BAD_BODY', `malformed MetricList: ${error.message}`);
    throw error;
  }
  if (Number(hint) !== parsed.submitted) req.log.debug({ hint: Number(hint), samples: parsed.submitted }, 'x-svc-datapoints differs from the samples in the body');
  return ingestParsed(node, parsed, encodeRawJournalEntry('metriclist', parsed.ctx, parsed.body), 'item');
}

/** What parsing a body depends on, journaled beside it (model/journal-entry.ts). */
function rawContext(node: FerriteNode, req: FastifyRequest): RawContext {
  return { latestAllowed: asEpochMs(Date.now() + node.config.maxClockSkewMs), textSizeLimit: node.config.textSizeLimit, headerAccount: accountHeader(req) };
}

function rawBody(req: FastifyRequest): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.from(bodyText(req));
}
