// Carbon plaintext lines (irondb-reference §4.6, §5.4; IRONdb's graphite ingestion):
// `name value timestamp[.mmm]`, where the name may carry Graphite ≥ 1.1 tags as
// `name;tag=value;…`. Stored as `graphite.<check name>.<name>` with the tags as stream tags.
import { parseSampleValue } from '../sample-value.js';
import { parseReadTimestamp } from '../timestamp.js';
import type { EpochMs, NumericValue } from '../types.js';

export interface CarbonSample {
  /** The metric name to store, stream tags base64-wrapped (canonicalisation decodes what it can). */
  metricName: string;
  value: NumericValue;
  ts: EpochMs;
}

/** One line as a sample, or why it cannot be stored. */
export function parseCarbonLine(line: string, checkName: string): CarbonSample | string {
  const fields = line.trim().split(/[ \t]+/);
  if (fields.length !== 3) return `a line is 'name value timestamp', got ${fields.length} field(s)`;
  const [path, valueText, tsText] = fields as [string, string, string];
  const ts = parseReadTimestamp(tsText);
  if (ts === null) return `timestamp '${tsText}' must be epoch seconds, optionally with exactly 3 digits of milliseconds`;
  const value = parseSampleValue('n', valueText);
  if (!value.ok || value.kind !== 'numeric') return `value '${valueText}' is not a number`;
  const [name, ...tagParts] = path.split(';');
  if (name === undefined || name.length === 0) return 'the metric name is empty';
  const tags: string[] = [];
  for (const part of tagParts) {
    const eq = part.indexOf('=');
    if (eq <= 0) return `tag '${part}' is not tag=value`;
    tags.push(`${b64(part.slice(0, eq))}:${b64(part.slice(eq + 1))}`);
  }
  const stored = `graphite.${checkName}.${name}`;
  return { metricName: tags.length === 0 ? stored : `${stored}|ST[${tags.join(',')}]`, value: value.value, ts };
}

const b64 = (text: string) => `b"${Buffer.from(text, 'utf8').toString('base64')}"`;

/** A stored metric's Graphite name: the name, then `;tag=value` per stream tag (sorted, as stored). */
export function graphiteName(name: string, tags: readonly { category: string; value: string | null }[]): string {
  return name + tags.map((t) => `;${t.category}=${t.value ?? ''}`).join('');
}
