// What the ecosystem's ingest endpoints (Prometheus remote write, OpenTSDB, carbon) share:
// an account and check taken from the path (or headers, or config), and tagged samples resolved within them.
import type { FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import type { MetricInfo } from '../model/metric-info.js';
import { normalizeUuid, parseAccountId } from '../model/check-field.js';
import { ferr } from '../model/errors.js';
import type { TaggedContext } from '../model/tagged-sample.js';
import { asEpochMs, type AccountId } from '../model/types.js';
import { accountHeader, svcHeader } from './headers.js';

export interface CheckScope {
  account: AccountId;
  uuid: string;
  checkName: string;
}

/** `<account>/<uuid>` path segments; 400 naming the bad one. */
export function scopeFromPath(accountParam: string, uuidParam: string, checkName = ''): CheckScope {
  const account = parseAccountId(accountParam);
  if (account === null) throw ferr('FER_ERR_BAD_PARAM', 'account', `'${accountParam}' is not a non-negative integer`);
  const uuid = normalizeUuid(uuidParam);
  if (uuid === null) throw ferr('FER_ERR_BAD_UUID', `'${uuidParam}'`);
  return { account, uuid, checkName };
}

export function taggedContext(node: FerriteNode, scope: CheckScope): TaggedContext<MetricInfo> {
  return {
    resolve: (spelling) => node.registry.intern(scope.account, scope.uuid, scope.checkName, spelling),
    latestAllowed: asEpochMs(Date.now() + node.config.maxClockSkewMs),
  };
}

/** Endpoints that name no account or check (`/api/put`, OTLP): headers, else the configured defaults. */
export function defaultScope(node: FerriteNode, req: FastifyRequest): CheckScope {
  const account = accountHeader(req) ?? node.config.defaultAccount;
  if (account === null) throw ferr('FER_ERR_MISSING_HEADER', 'x-svc-account-id (or configure defaultAccount)');
  const uuid = svcHeader(req, 'check-uuid') ?? node.config.defaultCheckUuid;
  if (uuid === null || uuid === undefined) throw ferr('FER_ERR_MISSING_HEADER', 'x-svc-check-uuid (or configure defaultCheckUuid)');
  return scopeFromPath(String(account), uuid);
}
