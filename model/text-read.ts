// The legacy text read `/read/<start>/<end>/<uuid>/<metric>` (interface §4.4).
import type { Series } from './series.js';
import { lowerBound } from './series.js';

export interface TextReadOptions {
  /** start inclusive, end exclusive, epoch ms. */
  start: number;
  end: number;
  /** get_specific_range=true: every sample within [start, end), nothing else. */
  specificRange: boolean;
  /** lead=true: include the value in force at `start` when no sample is exactly at start. */
  lead: boolean;
}

export type TextRow = [number, string | null];

/**
 * Selects the rows to return from a time-ordered series that holds every sample before
 * `end` the caller could find (at least back to the start of the run in force at `start`).
 *
 * Front-edge triggering: a run of identical consecutive values yields only its first
 * sample. The lead row is therefore the first sample of the run in force at `start`,
 * which is what a change-set store would return.
 */
export function selectTextRows(s: Series<string | null>, opts: TextReadOptions): TextRow[] {
  const from = lowerBound(s.ts, opts.start);
  const to = lowerBound(s.ts, opts.end);
  const rows: TextRow[] = [];
  if (opts.specificRange) {
    for (let i = from; i < to; i++) rows.push([s.ts[i]!, s.values[i]!]);
    return rows;
  }
  const hasSampleAtStart = from < s.ts.length && s.ts[from] === opts.start;
  if (opts.lead && !hasSampleAtStart && from > 0) {
    const runStart = runStartBefore(s, from);
    rows.push([s.ts[runStart]!, s.values[runStart]!]);
  }
  for (let i = from; i < to; i++) {
    const value = s.values[i]!;
    if (rows.length > 0 && rows[rows.length - 1]![1] === value) continue;
    rows.push([s.ts[i]!, value]);
  }
  return rows;
}

/** Index of the first sample of the run of equal values that ends at `before - 1`. */
export function runStartBefore(s: Series<string | null>, before: number): number {
  let i = before - 1;
  while (i > 0 && s.values[i - 1] === s.values[i]) i--;
  return i;
}

/** True when the series reaches back past the start of the run in force at `start`. */
export function leadRunComplete(s: Series<string | null>, start: number): boolean {
  const from = lowerBound(s.ts, start);
  if (from === 0) return false;
  return runStartBefore(s, from) > 0;
}
