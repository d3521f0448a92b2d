// Rebalance endpoints in IRONdb's shapes (IRONdb api/rebalance.md): `GET /rebalance/state`,
// `POST /rebalance/activate/<hash>` and `POST /rebalance/deactivate/<hash>`. The decisions are
// actors/cluster/rebalance.ts; this module only reads the path and answers.
import type { FastifyInstance } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { REBALANCE_STATES } from '../actors/cluster/rebalance.js';
import { fields, str, TAG } from './schemas.js';

const hashed = fields({ hash: str('the hash of the topology to rebalance to (64 hex), loaded first with POST /topology/<hash>') }, ['hash']);
const schema = (summary: string, params?: object) => ({ schema: { tags: [TAG.cluster], summary, ...(params ? { params } : {}) } });

export async function rebalanceRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { rebalance } = opts.node;
  app.get('/rebalance/state', schema(`This node's rebalance: {current, next ("-" when none), state}; state is one of ${REBALANCE_STATES.join(', ')}`), async () => rebalance.report());
  app.post('/rebalance/activate/:hash', schema('Starts a rebalance to a loaded topology', hashed), async (req) => rebalance.activate((req.params as { hash: string }).hash));
  app.post('/rebalance/deactivate/:hash', schema('Aborts the rebalance to <hash>; the node stays on its current topology', hashed), async (req) => rebalance.deactivate((req.params as { hash: string }).hash));
}
