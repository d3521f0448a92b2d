import type { AccountId } from './types.js';

/** What the UUID field of a TSV record says about the check a metric belongs to. */
export interface CheckRef {
  accountId: AccountId;
  /** Lower-cased, validated check uuid. */
  uuid: string;
  /** `c_<account>_<bundle>::<module>`, or '' for a bare uuid. */
  checkName: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CHECK_NAME = /^c_(\d+)_(\d+)::(.*)$/;
const MAX_ACCOUNT = 2 ** 31 - 1;
/** A check name is stored with every metric of its check; bounded like a canonical name (metric-name.ts). */
export const MAX_CHECK_NAME_BYTES = 4094;

/** Why a check name cannot be stored, or null when it can. */
export function checkNameProblem(checkName: string): string | null {
  if (checkName.length <= MAX_CHECK_NAME_BYTES / 3) return null;
  const bytes = Buffer.byteLength(checkName, 'utf8');
  return bytes > MAX_CHECK_NAME_BYTES ? `check name is ${bytes} bytes; at most ${MAX_CHECK_NAME_BYTES} are allowed` : null;
}

/** Lower-cases and validates a check uuid (8-4-4-4-12 hex); null when it is not one. */
export function normalizeUuid(text: string): string | null {
  const lower = text.toLowerCase();
  return UUID.test(lower) ? lower : null;
}

export type CheckFieldResult = { ok: true; check: CheckRef } | { ok: false; reason: string };

/**
 * Parses ``TARGET`MODULE`c_<account>_<bundle>::<module>`<uuid>`` (interface §2.8).
 * A bare uuid is accepted when the request carried an account id header.
 */
export function parseCheckField(field: string, headerAccount: AccountId | null): CheckFieldResult {
  const parts = field.split('`');
  if (parts.length === 1) {
    const uuid = normalizeUuid(field);
    if (uuid === null) return { ok: false, reason: `invalid check uuid '${field}'` };
    if (headerAccount === null) {
      return { ok: false, reason: 'bare uuid needs an x-svc-account-id header (or use TARGET`MODULE`CHECKNAME`UUID)' };
    }
    return { ok: true, check: { accountId: headerAccount, uuid, checkName: '' } };
  }
  if (parts.length !== 4) {
    return { ok: false, reason: `UUID field must be TARGET\`MODULE\`CHECKNAME\`UUID, got ${parts.length} parts` };
  }
  const checkName = parts[2]!;
  const tooLong = checkNameProblem(checkName);
  if (tooLong !== null) return { ok: false, reason: tooLong };
  const m = CHECK_NAME.exec(checkName);
  if (m === null) return { ok: false, reason: `check name '${checkName}' is not c_<account>_<bundle>::<module>` };
  const account = Number(m[1]);
  if (account > MAX_ACCOUNT) return { ok: false, reason: `account id ${m[1]} out of range` };
  const uuid = normalizeUuid(parts[3]!);
  if (uuid === null) return { ok: false, reason: `invalid check uuid '${parts[3]}'` };
  return { ok: true, check: { accountId: account as AccountId, uuid, checkName } };
}

/** Parses an account id header value (a non-negative int32). */
export function parseAccountId(text: string): AccountId | null {
  if (!/^\d{1,10}$/.test(text)) return null;
  const n = Number(text);
  return n <= MAX_ACCOUNT ? (n as AccountId) : null;
}
