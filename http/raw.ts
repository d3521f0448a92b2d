// `PUT|POST /raw` (TSV submission) and `GET /raw/<uuid>/<metric>` (interface §4.4, §4.6).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node.js';
import { ferr } from '../model/errors.js';
import type { NumericValue } from '../model/types.js';
import { parseSecMs } from '../model/timestamp.js';
import { parseTsv } from '../model/tsv.js';
import { asEpochMs } from '../model/types.js';
import { accountHeader, mediaType } from './headers.js';
import { numberJson, rowsJson } from './json-out.js';
import { knownMetricFromPath } from './metric-param.js';

/** How many rejected lines are described in a reply (all are counted). */
const MAX_ERROR_DETAILS = 10;

const FLATBUFFER_TYPES = new Set([
  'application/x-svc-metric-list-flatbuffer',
  'application/x-circonus-metric-list-flatbuffer',
]);

export async function rawRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.route({
    method: ['PUT', 'POST'],
    url: '/raw',
    handler: async (req, reply) => {
      if (FLATBUFFER_TYPES.has(mediaType(req))) {
        throw ferr('FER_ERR_UNSUPPORTED_MEDIA_TYPE', `${mediaType(req)} (FlatBuffer MetricList ingest is not implemented yet)`);
      }
      const body = bodyText(req);
      const result = parseTsv(body, {
        resolve: node.registry.resolver(accountHeader(req)),
        latestAllowed: asEpochMs(Date.now() + node.config.maxClockSkewMs),
        textSizeLimit: node.config.textSizeLimit,
      });
      if (result.records.length === 0) {
        const why = result.errors.length === 0 ? 'the body is empty' : `line ${result.errors[0]!.at}: ${result.errors[0]!.reason}`;
        throw ferr('FER_ERR_NO_VALID_RECORDS', why);
      }
      await node.ingest(result.records);
      const summary: Record<string, unknown> = {
        records: result.lines,
        updated: result.records.length,
        misdirected: 0,
        discarded: 0,
        errors: result.errors.length,
      };
      if (result.errors.length > 0) {
        summary.error_details = result.errors.slice(0, MAX_ERROR_DETAILS).map((e) => ({ line: e.at, reason: e.reason }));
      }
      return reply.send(summary);
    },
  });

  app.get('/raw/:uuid/*', async (req, reply) => {
    const { uuid, '*': name } = req.params as { uuid: string; '*': string };
    const query = req.query as Record<string, string | undefined>;
    const start = requiredSecMs(query, 'start_ts');
    const end = requiredSecMs(query, 'end_ts');
    const metric = await knownMetricFromPath(node, uuid, name);
    const rows = await node.read(metric, 'numeric', start, end);
    return reply.type('application/json').send(rowsJson(rows.ts, rows.values as NumericValue[], numberJson));
  });
}

export function bodyText(req: FastifyRequest): string {
  const body = req.body;
  if (body === undefined || body === null) return '';
  return Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
}

/** A required `<seconds>.<3 digits>` query parameter, in epoch ms. */
export function requiredSecMs(query: Record<string, string | undefined>, name: string): number {
  const raw = query[name];
  if (raw === undefined || raw === '') throw ferr('FER_ERR_MISSING_PARAM', name);
  const ms = parseSecMs(raw);
  if (ms === null) throw ferr('FER_ERR_BAD_TIMESTAMP', name, `'${raw}'`);
  return ms;
}
