// HTTP requests answered and how many failed, counted for the operations console's rate
// chart. The console's own polling is left out, so watching the node does not move it.
import type { FastifyInstance } from 'fastify';

export interface Traffic {
  requests: number;
  /** Answers with status 400 or above. */
  errors: number;
}

/** Counts every request `app` answers from now on (a root hook: register it before routes). */
export function countTraffic(app: FastifyInstance): Traffic {
  const traffic: Traffic = { requests: 0, errors: 0 };
  app.addHook('onResponse', async (req, reply) => {
    if (req.url.startsWith('/console/')) return;
    traffic.requests++;
    if (reply.statusCode >= 400) traffic.errors++;
  });
  return traffic;
}
