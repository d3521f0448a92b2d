// Proxied reads (irondb-reference §8.3): a single-metric read on a node that does not own
// the metric is answered by an owner, live ones (by gossip) first. The forwarded request
// carries `x-svc-proxied: 1`, so the owner answers locally and never forwards again.
// An owner that does not answer within config peerTimeoutMs is skipped for the next; the
// reply names the owners that failed before it in `x-svc-proxy-failed`. An owner gossip
// presumes down is only tried once every live one has failed.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { ferr } from '../model/errors.js';
import type { TopologyNode } from '../model/topology/index.js';
import { svcHeader } from './headers.js';
import { metricFromPath } from './metric-param.js';

/** Request headers that describe the hop, not the request. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/** Where a request names its metric: the check uuid and metric name path segments. */
export type MetricSegments = (req: FastifyRequest) => { uuid: string; name: string };

const uuidAndWildcard: MetricSegments = (req) => {
  const { uuid, '*': name } = req.params as { uuid: string; '*': string };
  return { uuid, name };
};

/** A preHandler for routes with `:uuid` and `*` (metric name) params, or as `segments` finds them. */
export function proxyToOwner(node: FerriteNode, segments: MetricSegments = uuidAndWildcard): preHandlerAsyncHookHandler {
  return async function (req, reply) {
    if (node.ring.topology.nodes.length === 1) return;
    const rebuilding = !node.gossip.serves(node.identity);
    if (!rebuilding && svcHeader(req, 'proxied')?.trim() === '1') return;
    const { uuid, name } = segments(req);
    const metric = metricFromPath(node, uuid, name);
    if (node.routing.readsLocally(metric)) return;
    // A rebuilding node forwards even a proxied read of what it owns, to its other owners.
    await forward(node, req, reply, node.routing.liveOwners(metric).filter((o) => o.id !== node.identity), metric.name.canonical, { 'x-svc-proxied': '1' });
  };
}

/**
 * Sends `req` to each of `owners` in turn (with the `hop` headers added) until one answers, whose
 * answer becomes the reply (`x-svc-proxied-to` names it); FER_ERR_NO_OWNER naming each failure
 * when none did. Also how a joining node forwards client requests (http/join-forward.ts).
 */
export async function forward(node: FerriteNode, req: FastifyRequest, reply: FastifyReply, owners: TopologyNode[], what: string, hop: Record<string, string>): Promise<void> {
  const problems: string[] = [];
  const failed: string[] = [];
  for (const owner of owners) {
    try {
      const res = await fetch(`http://${owner.address}:${owner.apiport}${req.url}`, {
        method: req.method,
        headers: { ...forwardedHeaders(req), ...hop },
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : (req.body as Buffer | undefined),
        signal: AbortSignal.timeout(node.config.peerTimeoutMs),
      });
      const body = Buffer.from(await res.arrayBuffer());
      void reply.status(res.status).header('x-svc-proxied-to', owner.id);
      if (failed.length > 0) void reply.header('x-svc-proxy-failed', failed.join(','));
      const type = res.headers.get('content-type');
      if (type !== null) void reply.type(type);
      await reply.send(body);
      return;
    } catch (error) {
      failed.push(owner.id);
      problems.push(`${owner.id}: ${whyFailed(error, node.config.peerTimeoutMs)}`);
    }
  }
  throw ferr('FER_ERR_NO_OWNER', what, problems.join('; ') || `no owner in topology ${node.ring.topology.hash}`);
}

/** A failed forward in words: fetch says only "fetch failed" and keeps the reason in its cause. */
function whyFailed(error: unknown, timeoutMs: number): string {
  const e = error as Error & { cause?: Error };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs} ms, the peerTimeoutMs setting`;
  return e.cause?.message ?? e.message;
}

function forwardedHeaders(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || HOP_HEADERS.has(k)) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
