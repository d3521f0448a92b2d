// `GET /read/<start>/<end>/<uuid>/<metric>`: the legacy text read (interface §4.4).
import type { FastifyInstance } from 'fastify';
import type { FerriteNode } from '../actors/node.js';
import { ferr } from '../model/errors.js';
import { parseEpochSec } from '../model/timestamp.js';
import { knownMetricFromPath } from './metric-param.js';

export async function textRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  app.get('/read/:start/:end/:uuid/*', async (req, reply) => {
    const params = req.params as { start: string; end: string; uuid: string; '*': string };
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
    return reply.send(await node.readText(metric, options));
  });
}

function epochSecParam(raw: string, name: string): number {
  const sec = parseEpochSec(raw);
  if (sec === null) throw ferr('FER_ERR_BAD_EPOCH', name, `'${raw}'`);
  return sec;
}

export function booleanParam(query: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw ferr('FER_ERR_BAD_PARAM', name, `'${raw}' is not true or false`);
}
