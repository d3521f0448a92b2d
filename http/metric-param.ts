// Path segments: `<uuid>/<metric>` into a metric this node may know, and epoch seconds.
import type { FerriteNode } from '../actors/node/node.js';
import type { MetricInfo } from '../model/metric-info.js';
import { normalizeUuid } from '../model/check-field.js';
import { ferr } from '../model/errors.js';
import { parseEpochSec } from '../model/timestamp.js';

/** Resolves path segments to a metric; 400 for a malformed uuid or name. */
export function metricFromPath(node: FerriteNode, uuidParam: string, metricParam: string): MetricInfo {
  const uuid = normalizeUuid(uuidParam);
  if (uuid === null) throw ferr('FER_ERR_BAD_UUID', `'${uuidParam}'`);
  if (metricParam.length === 0) throw ferr('FER_ERR_BAD_METRIC_NAME', 'the metric segment is empty');
  const r = node.registry.lookup(uuid, metricParam);
  if (!r.ok) throw ferr('FER_ERR_BAD_METRIC_NAME', r.reason);
  return r.metric;
}

/** Like metricFromPath, and 404 when this node has never stored the metric. */
export async function knownMetricFromPath(node: FerriteNode, uuidParam: string, metricParam: string): Promise<MetricInfo> {
  const metric = metricFromPath(node, uuidParam, metricParam);
  if (!(await node.knows(metric))) throw ferr('FER_ERR_METRIC_NOT_FOUND', metric.name.canonical);
  return metric;
}

/** A path segment of epoch seconds (a non-negative integer); 400 naming it otherwise. */
export function epochSecParam(raw: string, name: string): number {
  const sec = parseEpochSec(raw);
  if (sec === null) throw ferr('FER_ERR_BAD_EPOCH', name, `'${raw}'`);
  return sec;
}
