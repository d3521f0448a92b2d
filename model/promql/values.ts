// What PromQL expressions evaluate to, over a grid of evaluation times (one time for an
// instant query, start..end by step for a range query). Every value is computed for all
// steps at once, so a range query reads each series once.
import type { Labels, PromValue } from '../prometheus/types.js';
import { PromQLError } from './ast.js';

export interface Grid {
  /** Epoch ms of step 0. */
  startMs: number;
  stepMs: number;
  count: number;
}

export const timeAt = (g: Grid, i: number): number => g.startMs + i * g.stepMs;

/** A series' value at one step; undefined = no value there. */
export type Cell = PromValue | undefined;

export interface VSeries {
  labels: Labels;
  values: Cell[];
}

/** Samples of one series (gap markers removed), for range functions. */
export interface RangeSeries {
  labels: Labels;
  ts: number[];
  values: PromValue[];
}

export type Value =
  | { kind: 'scalar'; values: number[] }
  | { kind: 'string'; value: string }
  | { kind: 'vector'; series: VSeries[] }
  /** Per step i, the window (ends[i] - rangeMs, ends[i]] of each series. */
  | { kind: 'matrix'; series: RangeSeries[]; rangeMs: number; ends: number[] };

export const METRIC_NAME = '__name__';

export function withoutName(labels: Labels): Labels {
  if (!(METRIC_NAME in labels)) return labels;
  const { [METRIC_NAME]: _drop, ...rest } = labels;
  return rest;
}

/** A stable identity for a label set. */
export function labelsKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export const typeName = (v: Value): string => ({ scalar: 'scalar', string: 'string', vector: 'instant vector', matrix: 'range vector' })[v.kind];

/** Index of the last timestamp <= t in ascending `ts` (-1 if none). */
export function lastAtOrBefore(ts: readonly number[], t: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * Gathers result series by label set, as Prometheus' rangeEval does: series with equal labels
 * merge, and two values for one label set at one step are its "same labelset" error.
 * Series keep the order in which they first had a value.
 */
export class SeriesCollector {
  private readonly byKey = new Map<string, VSeries>();

  constructor(private readonly steps: number) {}

  set(labels: Labels, step: number, value: Cell): void {
    if (value === undefined) return;
    const target = this.target(labels);
    if (target.values[step] !== undefined) throw new PromQLError('vector cannot contain metrics with the same labelset');
    target.values[step] = value;
  }

  add(labels: Labels, values: readonly Cell[]): void {
    values.forEach((v, i) => this.set(labels, i, v));
  }

  series(): VSeries[] {
    return [...this.byKey.values()];
  }

  private target(labels: Labels): VSeries {
    const key = labelsKey(labels);
    let s = this.byKey.get(key);
    if (s === undefined) {
      s = { labels, values: new Array<Cell>(this.steps).fill(undefined) };
      this.byKey.set(key, s);
    }
    return s;
  }
}

/** Prometheus' order of label sets (labels.Compare): by sorted names and values, pairwise. */
export function compareLabelSets(a: Labels, b: Labels): number {
  const x = Object.entries(a).sort(byName);
  const y = Object.entries(b).sort(byName);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [xn, xv] = x[i]!;
    const [yn, yv] = y[i]!;
    if (xn !== yn) return xn < yn ? -1 : 1;
    if (xv !== yv) return xv < yv ? -1 : 1;
  }
  return x.length - y.length;
}

const byName = ([a]: [string, string], [b]: [string, string]): number => (a < b ? -1 : a > b ? 1 : 0);
