// `POST /fetch` (interface §4.3): a fetch document in JSON or FlatBuffer form in, DF4 in
// JSON (default) or FlatBuffer form out, chosen by Content-Type and Accept.
import { parseJsonBody } from '../model/json-body.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { settledStamps } from '../actors/coordinators/fetch-answers.js';
import { endOf, keepableStreams, runFetch } from '../actors/coordinators/fetch.js';
import type { FerriteNode } from '../actors/node/node.js';
import { ferr } from '../model/errors.js';
import { df4FlatBuffer, df4Json } from '../model/fetch/df4.js';
import { FetchRequestError } from '../model/fetch/errors.js';
import { decodeFetchFlatBuffer } from '../model/fetch/fetch-flatbuffer.js';
import { planFetch, type FetchDocument } from '../model/fetch/request.js';
import { mediaType, requestDeadline } from './headers.js';
import { bodyText } from './request.js';
import { JSON_BODY, TAG } from './schemas.js';

const FETCH_FLATBUFFER = new Set(['x-irondb-fetch-flatbuffer', 'application/x-irondb-fetch-flatbuffer', 'application/x-svc-fetch-flatbuffer']);
// IRONdb's examples send the document with `curl -d`, which labels it form-urlencoded: the body is JSON all the same.
const JSON_TYPES = new Set(['', 'application/json', 'text/json', 'text/plain', 'application/x-www-form-urlencoded']);
const DF4_FLATBUFFER = /(^|[\s,/])x-(irondb|svc)-df4-flatbuffer\b/i;
export const DF4_FLATBUFFER_TYPE = 'application/x-irondb-df4-flatbuffer';

export async function fetchRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  const docs = {
    schema: { tags: [TAG.fetch], summary: 'Read streams at a period, transform and reduce them: DF4 in JSON (default) or FlatBuffer (Accept: x-irondb-df4-flatbuffer)' },
    config: {
      rawBody: {
        description: 'the fetch document {start, period, count, streams: [{uuid, name, kind, transform, transform_params, label?}], reduce: [{label, method, method_params}]}',
        types: { [JSON_BODY]: 'the fetch document in JSON', 'application/x-irondb-fetch-flatbuffer': 'the fetch document as a FlatBuffer Fetch table (ms)' },
      },
    },
  };
  app.post('/fetch', docs, async (req, reply) => {
    const flatBuffer = DF4_FLATBUFFER.test(req.headers.accept ?? '');
    const answers = node.fetchAnswers;
    // The body as text once: the answer's key and the JSON document both read it.
    const text = documentText(req);
    const key = answers.enabled ? answerKey(req, text, flatBuffer, node.ring.topology.hash) : null;
    const kept = key === null ? undefined : await answers.lookup(node, key);
    if (kept !== undefined) return reply.type(kept.type).send(kept.body);
    const plan = withFieldErrors(() => planFetch(fetchDocument(req, text)));
    const end = endOf(plan);
    const keepable = key === null ? null : withFieldErrors(() => keepableStreams(node, plan));
    // Asked before the read, not waited for: each shard takes its epoch as the question arrives,
    // ahead of the read's questions, and whatever changes the streams after that moves it.
    const stamping = keepable === null ? null : settledStamps(node, keepable, end);
    const reading = withFieldErrors(() => runFetch(node, plan, requestDeadline(req), { json: !flatBuffer }));
    const [stamps, columns] = await Promise.all([stamping, reading]);
    const head = { startMs: plan.startMs, periodMs: plan.periodMs, count: plan.count, errors: [], warnings: [] };
    const answer = flatBuffer ? { type: DF4_FLATBUFFER_TYPE, body: Buffer.from(df4FlatBuffer(head, columns)) } : { type: 'application/json', body: df4Json(head, columns) };
    if (stamps !== null) answers.keep(key!, stamps, end, answer);
    return reply.type(answer.type).send(answer.body);
  });
}

/**
 * What identifies a fetch's answer: the document as sent, how it was labelled, the answer's form,
 * and the topology (after a rebalance its streams may be read from other nodes).
 */
function answerKey(req: FastifyRequest, text: string, flatBuffer: boolean, topology: string): string {
  return `${topology}\n${flatBuffer ? 'df4-flatbuffer' : 'df4-json'}\n${mediaType(req)}\n${text}`;
}

/**
 * The body as the text that identifies the document: a FlatBuffer's bytes one character each, a
 * JSON body decoded (two bodies decoding to one text are one document).
 */
function documentText(req: FastifyRequest): string {
  return FETCH_FLATBUFFER.has(mediaType(req)) && req.body instanceof Buffer ? req.body.toString('latin1') : bodyText(req);
}

function fetchDocument(req: FastifyRequest, text: string): FetchDocument {
  const type = mediaType(req);
  if (FETCH_FLATBUFFER.has(type)) return decodeFetchFlatBuffer(req.body instanceof Buffer ? req.body : Buffer.alloc(0));
  if (!JSON_TYPES.has(type)) throw ferr('FER_ERR_UNSUPPORTED_MEDIA_TYPE', `'${type}' (send application/json or x-irondb-fetch-flatbuffer)`);
  const parsed = parseJsonBody(text);
  if (!parsed.ok) throw ferr('FER_ERR_BAD_BODY', `not acceptable JSON: ${parsed.reason}`);
  return parsed.value as FetchDocument;
}

/** A FetchRequestError becomes a 400 naming its field. */
function withFieldErrors<T>(fn: () => T): T {
  const rethrow = (e: unknown): never => {
    if (e instanceof FetchRequestError) throw ferr('FER_ERR_BAD_PARAM', e.field, e.reason);
    throw e;
  };
  try {
    const out = fn();
    return (out instanceof Promise ? out.catch(rethrow) : out) as T;
  } catch (e) {
    return rethrow(e);
  }
}
