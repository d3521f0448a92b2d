// What the CAQL route and the extension routes share: the built-in caql_v1 extension's name and
// listing, and its parameters as a request carries them (query string, overridden by a JSON body).
import type { FastifyRequest } from 'fastify';
import { CaqlUserError } from '../caql/errors.js';
import { parseJsonBody } from '../model/json-body.js';
import { bodyText } from './request.js';

export const CAQL_METHOD = 'caql_v1';

export type Params = Record<string, unknown>;

/** The built-in extension's entry in `GET /extension/lua`. */
export const CAQL_EXTENSION = {
  description: 'CAQL (Circonus Analytics Query Language) v1: evaluates a query over [start, end) at period',
  params: {
    query: { name: 'query', type: 'string' },
    start: { name: 'start', type: 'number' },
    end: { name: 'end', type: 'number' },
    period: { name: 'period', type: 'number' },
    format: { name: 'format', type: 'string' },
    _timeout: { name: '_timeout', type: 'number' },
    explain: { name: 'explain', type: 'boolean' },
  },
};

/** Query-string parameters, overridden by a JSON body's (trailing whitespace allowed). */
export function requestParams(req: FastifyRequest): Params {
  const params: Params = { ...(req.query as Params) };
  if (req.method !== 'POST') return params;
  const text = bodyText(req).trim();
  if (text === '') return params;
  const parsed = parseJsonBody(text);
  if (!parsed.ok) throw new CaqlUserError(`the body is not acceptable JSON: ${parsed.reason}`);
  const body = parsed.value;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new CaqlUserError('the body must be a JSON object');
  return { ...params, ...(body as Params) };
}
