// Known metrics by the characters of their TSV line, so a line naming a metric seen before costs
// a hash and a compare of its check and name fields: no substring, no string hash, no map probe
// keyed by a fresh string. The strings compared against are the ones the resolver already keeps.
import type { MetricIdentity, MetricResolution } from './ingest-record.js';

interface Known<M extends MetricIdentity> {
  check: string;
  name: string;
  resolution: MetricResolution<M>;
}

/** FNV-1a over the UTF-16 code units of s[from, to). */
function hashOf(s: string, from: number, to: number, seed: number): number {
  let h = seed;
  for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function sameText(s: string, from: number, to: number, text: string): boolean {
  if (to - from !== text.length) return false;
  for (let i = 0; i < text.length; i++) if (s.charCodeAt(from + i) !== text.charCodeAt(i)) return false;
  return true;
}

export class LineNames<M extends MetricIdentity> {
  private readonly byHash = new Map<number, Known<M> | Known<M>[]>();

  /** The resolution remembered for check field s[checkStart, checkEnd) and name s[checkEnd + 1, nameEnd), if any. */
  find(s: string, checkStart: number, checkEnd: number, nameEnd: number): MetricResolution<M> | undefined {
    const entry = this.byHash.get(hashOf(s, checkStart, nameEnd, 0x811c9dc5));
    if (entry === undefined) return undefined;
    for (const known of Array.isArray(entry) ? entry : [entry]) {
      if (sameText(s, checkStart, checkEnd, known.check) && sameText(s, checkEnd + 1, nameEnd, known.name)) return known.resolution;
    }
    return undefined;
  }

  /** Remembers a resolution; `check` and `name` are the fields' texts (joined by one TAB on the line). */
  remember(check: string, name: string, resolution: MetricResolution<M>): void {
    const line = `${check}\t${name}`;
    const hash = hashOf(line, 0, line.length, 0x811c9dc5);
    const known = { check, name, resolution };
    const entry = this.byHash.get(hash);
    if (entry === undefined) this.byHash.set(hash, known);
    else if (Array.isArray(entry)) entry.push(known);
    else this.byHash.set(hash, [entry, known]);
  }
}
