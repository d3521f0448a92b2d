// Rollup reads shared by `/rollup` and the deprecated numeric `/read` (interface §4.4, irondb-reference §4.5).
import type { FerriteNode } from '../actors/node/node.js';
import { ferr } from '../model/errors.js';
import { MAX_PERIODS } from '../model/fetch/request.js';
import type { MetricInfo } from '../model/metric-info.js';
import { parseRollupType, rollupValuesJson, ROLLUP_TYPE_NAMES, type RollupType } from '../model/rollup/types.js';
import type { RollupEngine } from '../storage/rollups.js';
import { epochSecParam, knownMetricFromPath } from './metric-param.js';

/** The path segments of the deprecated `GET /read/<start>/<end>/<period>/<uuid>/<type>/<metric>`. */
export interface LegacyNumericRead {
  start: string;
  end: string;
  period: string;
  uuid: string;
  type: string;
  metric: string;
}

/**
 * The deprecated numeric read (irondb-reference §4.5): `/rollup`'s values per `period` s for
 * periods starting in [start, end) epoch s, read through the dispatch engine.
 */
export async function readLegacyNumeric(node: FerriteNode, r: LegacyNumericRead): Promise<string> {
  const start = epochSecParam(r.start, 'start') * 1000;
  const end = epochSecParam(r.end, 'end') * 1000;
  const span = epochSecParam(r.period, 'period') * 1000;
  if (span <= 0) throw ferr('FER_ERR_BAD_PARAM', 'period', 'must be a positive number of seconds');
  if (end < start) throw ferr('FER_ERR_BAD_PARAM', 'end', `${r.end} is before start ${r.start}`);
  periodLimit(start, end, span, 'period');
  const type = parseRollupType(r.type);
  if (type === null) throw ferr('FER_ERR_BAD_PARAM', 'type', `'${r.type}' is not one of ${ROLLUP_TYPE_NAMES.join(', ')}`);
  const metric = await knownMetricFromPath(node, r.uuid, r.metric);
  return readRollupJson(node, metric, span, start, end, 'dispatch', type);
}

/**
 * A rollup read's `[[ts, value], ...]` text, tuples aligned to the span (interface §4.4): the
 * metric's shard reads the values and this thread writes them (the 11-field objects of `all`
 * are written by the shard).
 */
export async function readRollupJson(node: FerriteNode, metric: MetricInfo, span: number, start: number, end: number, engine: RollupEngine, type: RollupType): Promise<string> {
  const first = start - (start % span);
  if (type === 'all') return node.shards.about(metric, 'rollupJson', span, first, end, engine, type);
  return rollupValuesJson(first, span, await node.shards.about(metric, 'rollupValues', span, first, end, engine, type));
}

/**
 * At most MAX_PERIODS tuples per read, as /fetch: 5.7 M (0 to now at 300 s) took 70 s and
 * 98 MB of JSON when the bound was 10 M (issue 17's fuzzers).
 */
export function periodLimit(startMs: number, endMs: number, spanMs: number, field: string): void {
  const periods = Math.ceil((endMs - startMs) / spanMs);
  if (periods > MAX_PERIODS) throw ferr('FER_ERR_BAD_PARAM', field, `${periods} periods exceeds the limit of ${MAX_PERIODS} per request`);
}
