// Carbon's plaintext protocol (graphite): one `name value timestamp` line per sample, space
// separated; `name;tag=value;tag2=value2` carries tags (graphite 1.1), which become stream
// tags. The timestamp is epoch seconds, optionally with `.mmm` milliseconds (IRONdb's variant).
import { looseEpochMs, type TaggedSample } from './tagged-sample.js';

/** One line's sample, or why the line is rejected. */
export function parseCarbonLine(line: string): TaggedSample | string {
  const fields = line.trim().split(/\s+/);
  if (fields.length !== 3) return `expected 'name value timestamp', got ${fields.length} field${fields.length === 1 ? '' : 's'}`;
  const [path, rawValue, rawTs] = fields as [string, string, string];
  const [name, ...tagParts] = path.split(';');
  if (name === undefined || name === '') return 'the metric name is empty';
  const tags: [string, string][] = [];
  for (const part of tagParts) {
    const eq = part.indexOf('=');
    if (eq <= 0 || eq === part.length - 1) return `tag '${part}' is not name=value`;
    tags.push([part.slice(0, eq), part.slice(eq + 1)]);
  }
  const value = Number(rawValue);
  if (rawValue === '' || !Number.isFinite(value)) return `value '${rawValue}' is not a number`;
  if (!/^\d+(\.\d+)?$/.test(rawTs)) return `timestamp '${rawTs}' is not epoch seconds`;
  const ts = looseEpochMs(rawTs);
  if (ts === null) return `timestamp '${rawTs}' is not epoch seconds`;
  return { name, tags, ts: rawTs.includes('.') ? ts : Number(rawTs) * 1000, value };
}
