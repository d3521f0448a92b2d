// OpenTSDB ingest: IRONdb's `POST /opentsdb/<acct>/<uuid>/<check_name>` (reply as `/raw`'s)
// and OpenTSDB's own `POST /api/put` (account from x-svc-account-id or `defaultAccount`, check
// from x-svc-check-uuid or `defaultCheckUuid`; 204 when every point is stored, OpenTSDB's
// `?summary` / `?details` bodies when asked). Good points are stored even when others fail.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { ferr } from '../model/errors.js';
import { parseOpenTsdbPut } from '../model/opentsdb.js';
import { taggedRecords } from '../model/tagged-sample.js';
import { ingestAndReply, requireSomething, withinLimits } from './ingest-reply.js';
import { bodyText } from './request.js';
import { defaultScope, scopeFromPath, taggedContext } from './tagged-ingest.js';

export async function openTsdbRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.post('/opentsdb/:account/:uuid/:checkName', async (req, reply) => {
    const { account, uuid, checkName } = req.params as { account: string; uuid: string; checkName: string };
    const scope = scopeFromPath(account, uuid, checkName);
    const items = parsedPoints(req);
    const tagged = taggedRecords(items, taggedContext(node, scope));
    return reply.send(await ingestAndReply(node, { ...tagged, submitted: items.length }, 'item'));
  });

  app.post('/api/put', async (req, reply) => {
    const scope = defaultScope(node, req);
    const items = parsedPoints(req);
    const { records, errors, admission } = await withinLimits(node, taggedRecords(items, taggedContext(node, scope)));
    const query = req.query as Record<string, string | undefined>;
    const wantsBody = query.summary !== undefined || query.details !== undefined;
    try {
      if (!wantsBody) requireSomething(records.length, errors, 'item');
      if (records.length > 0) await node.ingest(records, admission);
    } finally {
      admission?.release();
    }
    if (wantsBody) {
      const body: Record<string, unknown> = { failed: errors.length, success: records.length };
      if (query.details !== undefined) body.errors = errors.map((e) => ({ datapoint: e.at, error: e.reason }));
      return reply.status(errors.length > 0 ? 400 : 200).send(body);
    }
    if (errors.length > 0) throw ferr('FER_ERR_REJECTED_POINTS', errors.length, items.length, `${errors[0]!.at}: ${errors[0]!.reason}`);
    return reply.status(204).send();
  });
}

function parsedPoints(req: FastifyRequest) {
  const items = parseOpenTsdbPut(bodyText(req));
  if (typeof items === 'string') throw ferr('FER_ERR_BAD_BODY', items);
  return items;
}
