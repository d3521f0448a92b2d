// Every request body is read as bytes (each endpoint decodes its own formats) into one buffer
// with room in front for its journal entry's header (model/headroom.ts): a body is copied once,
// from the socket's chunks, and journaled where it lies.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorCodes } from 'fastify';
import { allocWithHeadroom } from '../model/headroom.js';
import { RAW_HEADROOM } from '../model/journal-entry.js';

/**
 * Bodies declaring at most this length get their memory as the request starts; a longer one
 * (up to the body limit) is gathered as it arrives, so a client that declares a large body and
 * sends nothing holds no memory for it.
 */
const PREALLOCATED_BYTES = 4 * 2 ** 20;

type Done = (error: Error | null, body?: Buffer) => void;

export function registerBodyReader(app: FastifyInstance, limit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (req: FastifyRequest, payload: NodeJS.ReadableStream, done: Done) => readBody(req, payload, limit, done));
}

function readBody(req: FastifyRequest, payload: NodeJS.ReadableStream, limit: number, done: Done): void {
  const header = req.headers['content-length'];
  const declared = header === undefined ? NaN : Number(header);
  if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  // With a length declared the bytes go straight to their place; without, chunks wait for the end.
  const body = Number.isSafeInteger(declared) && declared >= 0 && declared <= PREALLOCATED_BYTES ? allocWithHeadroom(RAW_HEADROOM, declared) : null;
  const chunks: Buffer[] = [];
  let received = 0;
  const finish = (error: Error | null, result?: Buffer) => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
    done(error, result);
  };
  const onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (received + bytes.length > limit) return finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    if (body === null) chunks.push(bytes);
    else if (received + bytes.length > body.length) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    else body.set(bytes, received);
    received += bytes.length;
  };
  const onEnd = () => {
    if (body === null) return finish(null, joined(chunks, received));
    if (received !== body.length) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    finish(null, body);
  };
  const onError = (error: Error & { statusCode?: number }) => {
    if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
    finish(error);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}

function joined(chunks: readonly Buffer[], length: number): Buffer {
  const body = allocWithHeadroom(RAW_HEADROOM, length);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return body;
}
