// A joining node's client requests (actors/cluster/joining.ts): while it joins a cluster in a
// rebalance, every request for data — writes, reads, searches, deletes, extensions — goes to a
// node not yet running its topology, which answers it whole; the reply says who answered
// (`x-svc-proxied-to`). Requests about the node itself and the cluster (`/state`, `/stats.json`,
// `/gossip`, `/topology`, `/toporing`, `/locate`, `/rebalance`, `/admin`, `/surrogate`, the
// console and the API docs) are answered here, as are requests another node sent (`x-svc-proxied`
// reads, and requests a joining node forwarded, marked `x-svc-forwarded-by`). When no such node
// answers, the request is answered here after all.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { FerriteError } from '../model/errors.js';
import { svcHeader } from './headers.js';
import { forward } from './proxy.js';

/** First path segments of what a node answers about itself and the cluster. */
const LOCAL = new Set(['', 'state', 'stats.json', 'gossip', 'topology', 'toporing', 'locate', 'rebalance', 'admin', 'surrogate', 'console']);
/** Under `/api`, the data endpoints (Prometheus queries, OpenTSDB puts); the rest is the API docs. */
const API_DATA = new Set(['v1', 'put']);

/** True for a request about the node or the cluster, not for data. */
export function isLocalPath(url: string): boolean {
  const [first = '', second = ''] = url.split('?')[0]!.split('/').slice(1);
  if (LOCAL.has(first)) return true;
  if (first === 'api') return !API_DATA.has(second);
  // The console's files (`/index.html`, `/main.js`, …) sit at the root.
  return second === '' && first.includes('.');
}

function forwardedBefore(req: FastifyRequest): boolean {
  return svcHeader(req, 'proxied')?.trim() === '1' || svcHeader(req, 'forwarded-by') !== undefined;
}

export function registerJoinForwarding(app: FastifyInstance, node: FerriteNode): void {
  app.addHook('preHandler', async (req, reply) => {
    if (!node.joining.active || forwardedBefore(req) || isLocalPath(req.url)) return;
    const targets = node.joining.targets(node.ring.topology, node.gossip, node.identity);
    if (targets.length === 0) return;
    try {
      await forward(node, req, reply, targets, req.url, { 'x-svc-forwarded-by': node.identity });
      node.joining.forwarded++;
      return reply;
    } catch (error) {
      if (!(error instanceof FerriteError)) throw error;
      req.log.warn({ err: error, url: req.url }, 'joining: no node not yet running this topology answered; answering here');
    }
  });
}
