// Headers are matched case-insensitively (Node lower-cases them); `x-svc-*` is ours and
// every IRONdb spelling `x-snowth-*` is accepted as an alias (DESIGN.md).
import type { FastifyRequest } from 'fastify';
import { parseAccountId } from '../model/check-field.js';
import { deadlineOf } from '../model/deadline.js';
import { ferr } from '../model/errors.js';
import type { AccountId } from '../model/types.js';

const OURS = 'x-svc-';
const IRONDB = 'x-snowth-';

/** The value of `x-svc-<name>` (or `x-snowth-<name>`), or undefined. */
export function svcHeader(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[OURS + name] ?? req.headers[IRONDB + name];
  return Array.isArray(value) ? value[0] : value;
}

/** The account id header, validated when present. */
export function accountHeader(req: FastifyRequest): AccountId | null {
  const raw = svcHeader(req, 'account-id');
  if (raw === undefined) return null;
  const account = parseAccountId(raw.trim());
  if (account === null) throw ferr('FER_ERR_BAD_HEADER', 'x-svc-account-id', `'${raw}' is not a non-negative integer`);
  return account;
}

/** The media type of the request body, lower-cased, without parameters. */
export function mediaType(req: FastifyRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Default time a fetch or find may take (IRONdb: 60 s). */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** The request's deadline (epoch ms) from x-svc-deadline or x-svc-timeout (and their X-Snowth- spellings). */
export function requestDeadline(req: FastifyRequest, defaultMs = DEFAULT_TIMEOUT_MS): number {
  return deadlineOf(svcHeader(req, 'timeout'), svcHeader(req, 'deadline'), defaultMs);
}
