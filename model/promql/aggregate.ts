// Aggregation operators: sum, avg, min, max, count, stddev, stdvar, group, topk, bottomk,
// quantile, each `by (labels)` or `without (labels)`, computed per step.
import { Histogram } from '../histogram/index.js';
import type { Labels } from '../prometheus/types.js';
import { PromQLError } from './ast.js';
import { quantileOf } from './range-functions.js';
import { labelsKey, METRIC_NAME, type Cell, type VSeries } from './values.js';
import { lookupTable } from '../lookup-table.js';

export const AGGREGATIONS = new Set(['sum', 'avg', 'min', 'max', 'count', 'stddev', 'stdvar', 'group', 'topk', 'bottomk', 'quantile']);

function groupLabels(labels: Labels, grouping: string[], without: boolean): Labels {
  if (without) return Object.fromEntries(Object.entries(labels).filter(([k]) => k !== METRIC_NAME && !grouping.includes(k)));
  return Object.fromEntries(grouping.filter((k) => labels[k] !== undefined && labels[k] !== '').map((k) => [k, labels[k]!]));
}

type Reducer = (values: Cell[]) => Cell;

const floatsOf = (values: Cell[]): number[] => values.filter((v): v is number => typeof v === 'number');
const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
const variance = (v: number[]): number => {
  const m = mean(v);
  return v.reduce((a, b) => a + (b - m) ** 2, 0) / v.length;
};
const onFloats = (f: (v: number[]) => number): Reducer => (values) => {
  const v = floatsOf(values);
  return v.length === 0 ? undefined : f(v);
};

function sum(values: Cell[]): Cell {
  const hs = values.filter((v): v is Histogram => v instanceof Histogram);
  if (hs.length > 0 && hs.length === values.length) return hs.slice(1).reduce((acc, h) => acc.merge(h), hs[0]!.clone());
  return onFloats((v) => v.reduce((a, b) => a + b, 0))(values);
}

const REDUCERS: Record<string, Reducer> = lookupTable({
  sum,
  avg: onFloats(mean),
  min: onFloats((v) => v.reduce((a, b) => (b < a || Number.isNaN(a) ? b : a))),
  max: onFloats((v) => v.reduce((a, b) => (b > a || Number.isNaN(a) ? b : a))),
  count: (values) => values.length,
  group: () => 1,
  stddev: onFloats((v) => Math.sqrt(variance(v))),
  stdvar: onFloats(variance),
});

/** `params[i]`: the aggregation's parameter (k, φ) at step i. */
export function aggregate(op: string, series: VSeries[], grouping: string[], without: boolean, steps: number, params: number[]): VSeries[] {
  const groups = new Map<string, { labels: Labels; members: VSeries[] }>();
  for (const s of series) {
    const labels = groupLabels(s.labels, grouping, without);
    const key = labelsKey(labels);
    const g = groups.get(key) ?? { labels, members: [] };
    g.members.push(s);
    groups.set(key, g);
  }
  if (op === 'topk' || op === 'bottomk') return [...groups.values()].flatMap((g) => selectK(g.members, steps, params, op === 'topk'));
  const out: VSeries[] = [];
  for (const g of groups.values()) {
    const values = Array.from({ length: steps }, (_, i) => {
      const cells = g.members.map((m) => m.values[i]).filter((v) => v !== undefined);
      if (cells.length === 0) return undefined;
      if (op === 'quantile') return onFloats((v) => quantileOf(params[i]!, v))(cells);
      const reduce = REDUCERS[op];
      if (reduce === undefined) throw new PromQLError(`BUG: no reducer for ${op}`);
      return reduce(cells);
    });
    out.push({ labels: g.labels, values });
  }
  return out;
}

/** topk/bottomk: per step the k largest (smallest) floats of the group keep their series' labels; NaN ranks last. */
function selectK(members: VSeries[], steps: number, ks: number[], top: boolean): VSeries[] {
  const kept = members.map((m) => ({ labels: m.labels, values: new Array<Cell>(steps).fill(undefined) }));
  for (let i = 0; i < steps; i++) {
    const k = Math.trunc(ks[i]!);
    if (!(k >= 1)) continue;
    const ranked = members
      .map((m, at) => ({ at, v: m.values[i] }))
      .filter((x): x is { at: number; v: number } => typeof x.v === 'number')
      .sort((a, b) => (Number.isNaN(a.v) ? 1 : Number.isNaN(b.v) ? -1 : top ? b.v - a.v : a.v - b.v));
    for (const { at, v } of ranked.slice(0, k)) kept[at]!.values[i] = v;
  }
  return kept.filter((s) => s.values.some((v) => v !== undefined));
}
