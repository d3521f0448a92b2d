// `POST /surrogate/activity_rebuild` (irondb-reference §8.6, §10): recompute the activity
// windows of the listed metrics from the data this node stores.
import type { FastifyInstance } from 'fastify';
import type { MetricInfo } from '../model/metric-info.js';
import type { FerriteNode } from '../actors/node/node.js';
import { normalizeUuid } from '../model/check-field.js';
import { ferr } from '../model/errors.js';
import type { RecordError } from '../model/ingest-record.js';
import { requireSomething, summarize } from './ingest-reply.js';
import { bodyText } from './request.js';

export async function surrogateRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.post('/surrogate/activity_rebuild', async (req, reply) => {
    const items = parseBody(bodyText(req));
    const errors: RecordError[] = [];
    const metrics: { at: number; metric: MetricInfo }[] = [];
    items.forEach((item, at) => {
      const m = itemMetric(node, item);
      if (typeof m === 'string') errors.push({ at, reason: m });
      else metrics.push({ at, metric: m });
    });
    requireSomething(metrics.length, errors, 'item');
    let misdirected = 0;
    const rebuilt: Record<string, unknown>[] = [];
    for (const { at, metric } of metrics) {
      // In a cluster each owner rebuilds its own copy; a non-owner holds nothing to rebuild from.
      if (!node.routing.owns(metric)) misdirected++;
      else if (!(await node.knows(metric))) errors.push({ at, reason: `metric ${metric.name.canonical} is not stored on this node` });
      else rebuilt.push({ check_uuid: metric.uuid, metric_name: metric.name.canonical, activity: await node.shards.about(metric, 'rebuildActivity') });
    }
    const summary = summarize(items.length, rebuilt.length, errors.sort((a, b) => a.at - b.at), 'item');
    return reply.send({ ...summary, misdirected, rebuilt });
  });
}

function parseBody(text: string): unknown[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw ferr('FER_ERR_BAD_BODY', `the body is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(doc)) throw ferr('FER_ERR_BAD_BODY', 'the body must be a JSON array of {"check_uuid", "metric_name"}');
  return doc;
}

/** `{"check_uuid", "metric_name"}` as a metric, or why not. */
function itemMetric(node: FerriteNode, item: unknown): MetricInfo | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'an item must be a JSON object';
  const { check_uuid: id, metric_name: name } = item as Record<string, unknown>;
  if (typeof id !== 'string') return "'check_uuid' must be the check uuid as a string";
  const uuid = normalizeUuid(id);
  if (uuid === null) return `'check_uuid' ${JSON.stringify(id)} is not a uuid`;
  if (typeof name !== 'string' || name.length === 0) return "'metric_name' must be a non-empty string";
  const r = node.registry.lookup(uuid, name);
  return r.ok ? r.metric : r.reason;
}
