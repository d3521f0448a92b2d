// Words a failed schema validation (http/schemas.ts) as ferrite's own errors: the same codes
// and messages the handlers give for the same mistake, so the schemas change no reply.
import type { FastifyError, FastifyRequest } from 'fastify';
import { ferr, type FerriteError } from '../model/errors.js';
import { EPOCH_S_PATTERN, SEC_MS_PATTERN, UUID_PATTERN } from './schemas.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  params: { missingProperty?: string; pattern?: string; allowedValues?: unknown[] };
  message?: string;
}

type Context = 'querystring' | 'params' | 'headers' | 'body';

export function isValidationError(error: FastifyError): boolean {
  return Array.isArray(error.validation) && error.validation.length > 0;
}

export function validationError(error: FastifyError, req: FastifyRequest): FerriteError {
  const e = error.validation![0] as AjvError;
  const context = (error.validationContext ?? 'querystring') as Context;
  const header = context === 'headers';
  if (e.keyword === 'required') return ferr(header ? 'FER_ERR_MISSING_HEADER' : 'FER_ERR_MISSING_PARAM', e.params.missingProperty ?? '?');
  const name = e.instancePath.replace(/^\//, '').replace(/~1/g, '/').replace(/~0/g, '~');
  const raw = valueOf(req, context, name);
  const shown = `'${raw}'`;
  if (e.keyword === 'pattern') {
    if (e.params.pattern === UUID_PATTERN) return ferr('FER_ERR_BAD_UUID', shown);
    if (e.params.pattern === SEC_MS_PATTERN) return ferr('FER_ERR_BAD_TIMESTAMP', name, shown);
    if (e.params.pattern === EPOCH_S_PATTERN) return ferr('FER_ERR_BAD_EPOCH', name, shown);
  }
  const why = e.keyword === 'enum' ? `${shown} is not one of ${(e.params.allowedValues ?? []).filter((v) => v !== '').join(', ')}` : `${shown} ${e.message ?? 'is invalid'}`;
  return ferr(header ? 'FER_ERR_BAD_HEADER' : 'FER_ERR_BAD_PARAM', name, why);
}

function valueOf(req: FastifyRequest, context: Context, name: string): string {
  const source = { querystring: req.query, params: req.params, headers: req.headers, body: {} }[context] as Record<string, unknown> | undefined;
  const v = source?.[name];
  return Array.isArray(v) ? v.join(',') : String(v ?? '');
}
