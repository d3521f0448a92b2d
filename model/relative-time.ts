// Times in /find activity parameters (irondb-reference §2.2): epoch seconds, or
// `[now|<epoch>] [<+|-> <duration>]` such as `now`, `-1d`, `+10s`, `now - 1h 5s`,
// `10000 + 1 h 5 s`. A missing base means now.
import { lookupTable } from './lookup-table.js';

const UNIT_SECONDS: Record<string, number> = lookupTable({
  s: 1, sec: 1, secs: 1, second: 1, seconds: 1,
  m: 60, min: 60, mins: 60, minute: 60, minutes: 60,
  h: 3600, hr: 3600, hrs: 3600, hour: 3600, hours: 3600,
  d: 86400, day: 86400, days: 86400,
  w: 604800, wk: 604800, week: 604800, weeks: 604800,
});

/** `1h 5s`, `1h5s`, `1 h 5 s` → seconds, or null. */
export function parseDurationSeconds(text: string): number | null {
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0) return null;
  let total = 0;
  const re = /(\d+)([a-z]+)/gy;
  let at = 0;
  for (let m = re.exec(compact); m !== null; m = re.exec(compact)) {
    const unit = UNIT_SECONDS[m[2]!];
    if (unit === undefined) return null;
    total += Number(m[1]) * unit;
    at = re.lastIndex;
  }
  return at === compact.length ? total : null;
}

/** Parses a find time relative to `nowSec`; null when malformed. */
export function parseRelativeTime(text: string, nowSec: number): number | null {
  const m = /^\s*(now|\d+)?\s*(?:([+-])\s*(.+?))?\s*$/.exec(text);
  if (m === null || (m[1] === undefined && m[2] === undefined)) return null;
  const base = m[1] === undefined || m[1] === 'now' ? nowSec : Number(m[1]);
  if (m[2] === undefined) return base;
  const offset = parseDurationSeconds(m[3]!);
  if (offset === null) return null;
  return m[2] === '+' ? base + offset : base - offset;
}
