// Admission of writes (actors/node/admission.ts): decided when the request line and headers
// arrive, before the body is read, so an overloaded node holds no body it cannot take: it answers
// 503, or, when only the shards' backlog is over its limit, lets the write wait for room first.
// Every write route is recognised by method and path here, in one place.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IngestAdmission } from '../actors/node/admission.js';
import { ferr } from '../model/errors.js';

/** Paths whose PUT/POST store data. */
const WRITE_PATH = /^\/(?:raw|write\/[a-z]+|histogram\/write|graphite\/|opentsdb\/|api\/put|module\/prometheus\/write\/|v1\/metrics|api\/v1\/otlp\/)/;
/** Seconds a refused client is asked to wait. */
const RETRY_AFTER_S = 1;

export function isWrite(req: Pick<FastifyRequest, 'method' | 'url'>): boolean {
  return (req.method === 'PUT' || req.method === 'POST') && WRITE_PATH.test(req.url);
}

/** Whether the client of `req` has closed its connection. */
function gone(req: FastifyRequest): boolean {
  return req.raw.destroyed || req.raw.socket?.destroyed === true;
}

export function registerLoadShedding(app: FastifyInstance, admission: IngestAdmission): void {
  /** Admitted writes: their bytes, and when they were admitted (ms, performance.now()). */
  const admitted = new WeakMap<FastifyRequest, { bytes: number; at: number }>();
  const release = async (req: FastifyRequest) => {
    const entry = admitted.get(req);
    if (entry === undefined) return;
    admitted.delete(req);
    admission.release(entry.bytes);
  };
  const answered = async (req: FastifyRequest, reply: FastifyReply) => {
    // The latency budget measures the node's work on a write, not its wait for room to apply.
    const entry = admitted.get(req);
    if (entry !== undefined && reply.statusCode < 300) admission.acknowledged(performance.now() - entry.at);
    await release(req);
  };
  app.addHook('onRequest', async (req, reply) => {
    if (!isWrite(req)) return;
    const bytes = Number(req.headers['content-length'] ?? 0) || 0;
    await admission.roomToApply();
    // A write whose client left while it waited is not admitted: nothing would release it.
    if (gone(req)) return;
    const busy = admission.admit(bytes);
    if (busy === null) {
      admitted.set(req, { bytes, at: performance.now() });
      return;
    }
    void reply.header('retry-after', String(RETRY_AFTER_S));
    throw ferr('FER_ERR_OVERLOADED', `${busy}; retry after ${RETRY_AFTER_S} s`);
  });
  app.addHook('onResponse', answered);
  app.addHook('onRequestAbort', release);
}
