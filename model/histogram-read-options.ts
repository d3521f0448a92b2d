// The options of `GET /histogram/<start>/<end>/<period>/<uuid>/<metric>` that IRONdb's
// reference names (irondb-reference §4.4: `format=hex|double`, `min_granularity`); their
// meaning is ferrite's reading, written down in the README's "Reads".
import type { RollupLevel } from './config.js';

/**
 * `min_granularity` in seconds (null: none given), or why it is wrong. `auto` is the finest
 * level whose retention still holds `startS` (retention 0 = kept forever), so an old range is
 * read from a level that has it rather than answered empty from one that aged it out.
 */
export function minGranularity(raw: string | undefined, levels: readonly RollupLevel[], startS: number, nowMs: number): number | null | string {
  if (raw === undefined || raw === '') return null;
  if (raw === 'auto') {
    const holding = levels.find((l) => l.retention === 0 || startS * 1000 >= nowMs - l.retention * 1000);
    return (holding ?? levels[levels.length - 1]!).period;
  }
  const s = /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
  return s > 0 ? s : `'${raw}' is not a positive number of seconds or auto`;
}

/** The period answered: the smallest multiple of `min` that is at least `period` (`period` itself without a minimum). */
export const coarsened = (period: number, min: number | null): number => (min === null ? period : Math.ceil(period / min) * min);
