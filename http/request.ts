// What many routes parse from a request: its body as text, `<seconds>[.<3 digits>]` query
// parameters, and the advisory limit header. (Route files never import each other.)
import type { FastifyRequest } from 'fastify';
import { ferr } from '../model/errors.js';
import { parseReadTimestamp } from '../model/timestamp.js';
import { svcHeader } from './headers.js';

export function bodyText(req: FastifyRequest): string {
  const body = req.body;
  if (body === undefined || body === null) return '';
  return Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
}

/** A required `<seconds>[.<3 digits>]` query parameter (`start_ts`, `end_ts`), in epoch ms. */
export function requiredSecMs(query: Record<string, string | undefined>, name: string): number {
  const raw = query[name];
  if (raw === undefined || raw === '') throw ferr('FER_ERR_MISSING_PARAM', name);
  const ms = parseReadTimestamp(raw);
  if (ms === null) throw ferr('FER_ERR_BAD_TIMESTAMP', name, `'${raw}'`);
  return ms;
}

/** `x-svc-advisory-limit`: a positive integer; unset, -1 or `none` means `fallback` (null = no limit). */
export function advisoryLimit(req: FastifyRequest, fallback: number | null): number | null {
  const raw = svcHeader(req, 'advisory-limit')?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (raw === '-1' || raw.toLowerCase() === 'none') return null;
  if (!/^\d+$/.test(raw) || Number(raw) === 0) throw ferr('FER_ERR_BAD_HEADER', 'x-svc-advisory-limit', `'${raw}' must be a positive integer, -1 or none`);
  return Number(raw);
}
