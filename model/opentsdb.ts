// OpenTSDB's HTTP put body (`/api/put`, IRONdb's `/opentsdb/<acct>/<uuid>/<name>`): one data
// point object or an array of them, `{metric, timestamp, value, tags}`. `timestamp` is
// seconds or milliseconds (looseEpochMs), `value` a number or numeric string, and at least
// one tag is required (as OpenTSDB requires). Tags become stream tags.
import { looseEpochMs, type TaggedSample } from './tagged-sample.js';

/** Each data point's sample, or why it is rejected; a string when the body itself is not a put body. */
export function parseOpenTsdbPut(body: string): (TaggedSample[] | string)[] | string {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (error) {
    return `the body is not JSON: ${(error as Error).message}`;
  }
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) doc = [doc];
  if (!Array.isArray(doc)) return 'the body must be a data point object or an array of them';
  return doc.map((point: unknown) => {
    const sample = dataPoint(point);
    return typeof sample === 'string' ? sample : [sample];
  });
}

function dataPoint(point: unknown): TaggedSample | string {
  if (typeof point !== 'object' || point === null || Array.isArray(point)) return 'a data point must be a JSON object';
  const p = point as Record<string, unknown>;
  if (typeof p.metric !== 'string' || p.metric.length === 0) return "'metric' must be a non-empty string";
  const ts = typeof p.timestamp === 'number' || typeof p.timestamp === 'string' ? looseEpochMs(p.timestamp) : null;
  if (ts === null) return `'timestamp' ${JSON.stringify(p.timestamp)} is not epoch seconds or milliseconds`;
  const value = typeof p.value === 'number' ? p.value : typeof p.value === 'string' && p.value.trim() !== '' ? Number(p.value) : NaN;
  if (!Number.isFinite(value)) return `'value' ${JSON.stringify(p.value)} is not a number`;
  if (typeof p.tags !== 'object' || p.tags === null || Array.isArray(p.tags)) return "'tags' must be an object of at least one tag";
  const tags = Object.entries(p.tags as Record<string, unknown>);
  if (tags.length === 0) return "'tags' must hold at least one tag";
  for (const [k, v] of tags) if (typeof v !== 'string' || v === '') return `tag '${k}' must have a non-empty string value`;
  return { name: p.metric, tags: tags as [string, string][], ts, value };
}
