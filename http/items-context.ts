// The context every legacy JSON writer parses its items in (model/json-items.ts).
import type { FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import type { MetricInfo } from '../model/metric-info.js';
import type { ItemsContext } from '../model/json-items.js';
import { asEpochMs } from '../model/types.js';
import { accountHeader } from './headers.js';

export function itemsContext(node: FerriteNode, req: FastifyRequest, offset: 'number' | 'string'): ItemsContext<MetricInfo> {
  return {
    resolve: (account, uuid, checkName, name) => node.registry.intern(account, uuid, checkName, name),
    headerAccount: accountHeader(req),
    latestAllowed: asEpochMs(Date.now() + node.config.maxClockSkewMs),
    offset,
  };
}
