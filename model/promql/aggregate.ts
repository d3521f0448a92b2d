// Aggregation operators, each `by (labels)` or `without (labels)`, computed per step as
// Prometheus' engine does: sum, avg, min, max, count, group, stddev, stdvar, quantile,
// topk, bottomk, count_values, limitk, limit_ratio. Sums use Kahan summation (Prometheus 3).
import { Histogram } from '../histogram/index.js';
import { labelValue, type Labels } from '../prometheus/types.js';
import { PromQLError } from './ast.js';
import { formatGoFloat } from './format.js';
import { labelsHash } from './labels-hash.js';
import { kahanSum, quantileOf } from './range-functions.js';
import { labelsKey, METRIC_NAME, SeriesCollector, type Cell, type VSeries } from './values.js';

export const AGGREGATIONS = new Set(['sum', 'avg', 'min', 'max', 'count', 'group', 'stddev', 'stdvar', 'quantile', 'topk', 'bottomk', 'count_values', 'limitk', 'limit_ratio']);

export interface AggregateSpec {
  op: string;
  grouping: string[];
  without: boolean;
}

function groupLabels(labels: Labels, grouping: readonly string[], without: boolean): Labels {
  if (without) return Object.fromEntries(Object.entries(labels).filter(([k]) => k !== METRIC_NAME && !grouping.includes(k)));
  return Object.fromEntries(grouping.filter((k) => labelValue(labels, k) !== '').map((k) => [k, labels[k]!]));
}

interface Group {
  labels: Labels;
  members: VSeries[];
}

function groupsOf(series: VSeries[], grouping: readonly string[], without: boolean): Group[] {
  const groups = new Map<string, Group>();
  for (const s of series) {
    const labels = groupLabels(s.labels, grouping, without);
    const key = labelsKey(labels);
    const g = groups.get(key) ?? { labels, members: [] };
    g.members.push(s);
    groups.set(key, g);
  }
  return [...groups.values()];
}

type Reducer = (cells: Cell[], param: number) => Cell;

const floatsOf = (cells: Cell[]): number[] => cells.filter((v): v is number => typeof v === 'number');
const onFloats = (f: (v: number[], param: number) => number): Reducer => (cells, param) => {
  const v = floatsOf(cells);
  return v.length === 0 ? undefined : f(v, param);
};

/** sum of floats, or the merge of histograms; a mix of both has no sum. */
function sumOrMerge(cells: Cell[]): Cell {
  const hs = cells.filter((v): v is Histogram => v instanceof Histogram);
  if (hs.length === 0) return kahanSum(cells as number[]);
  if (hs.length !== cells.length) return undefined;
  return hs.slice(1).reduce((acc, h) => acc.merge(h), hs[0]!.clone());
}

/** Prometheus: the mean of the running Kahan sum, unless the sum overflows (then incrementally). */
function mean(v: number[]): number {
  const sum = kahanSum(v);
  if (Number.isFinite(sum) || v.some((x) => !Number.isFinite(x))) return sum / v.length;
  let m = 0;
  v.forEach((x, i) => (m += (x - m) / (i + 1)));
  return m;
}

/** Welford's variance; NaN or ±Inf as the first value makes it NaN (Prometheus' aggregation). */
function variance(v: number[]): number {
  if (!Number.isFinite(v[0]!)) return NaN;
  let m = 0;
  let m2 = 0;
  v.forEach((x, i) => {
    const delta = x - m;
    m += delta / (i + 1);
    m2 += delta * (x - m);
  });
  return m2 / v.length;
}

/** min/max: a NaN is replaced by any later value, so the result is NaN only if every value is. */
const extreme = (better: (a: number, b: number) => boolean) => (v: number[]): number => v.reduce((acc, x) => (better(x, acc) || Number.isNaN(acc) ? x : acc));

const REDUCERS: Record<string, Reducer> = {
  sum: sumOrMerge,
  avg: (cells) => (cells.some((c) => c instanceof Histogram) ? undefined : mean(cells as number[])),
  min: onFloats(extreme((a, b) => a < b)),
  max: onFloats(extreme((a, b) => a > b)),
  count: (cells) => cells.length,
  group: () => 1,
  stddev: onFloats((v) => Math.sqrt(variance(v))),
  stdvar: onFloats(variance),
  quantile: onFloats((v, q) => quantileOf(q, v)),
};

/** `params[i]`: the aggregation's numeric parameter (k, φ, ratio) at step i; `label`: count_values' label. */
export function aggregate(spec: AggregateSpec, series: VSeries[], steps: number, params: number[], label: string): VSeries[] {
  const { op } = spec;
  if (op === 'count_values') return countValues(spec, series, steps, label);
  const groups = groupsOf(series, spec.grouping, spec.without);
  if (op === 'topk' || op === 'bottomk') return selectK(groups, series.length, steps, params, op === 'topk');
  if (op === 'limitk') return limitK(groups, series.length, steps, params);
  if (op === 'limit_ratio') return limitRatio(groups, steps, params);
  const reduce = REDUCERS[op];
  if (reduce === undefined) throw new PromQLError(`aggregation ${JSON.stringify(op)} is not supported by ferrite`);
  const out = new SeriesCollector(steps);
  for (const g of groups) {
    for (let i = 0; i < steps; i++) {
      const cells = g.members.map((m) => m.values[i]).filter((v) => v !== undefined);
      if (cells.length > 0) out.set(g.labels, i, reduce(cells, params[i] ?? NaN));
    }
  }
  return out.series();
}

/** k as Prometheus takes it: int64(param), at most the input's size; NaN and out-of-range values give none. */
function kOf(param: number, inputSize: number): number {
  if (!Number.isFinite(param) || Math.abs(param) >= 2 ** 63) return 0;
  return Math.min(Math.trunc(param), inputSize);
}

/** Floats ranked for topk (descending) or bottomk (ascending); NaN ranks last either way. */
const ranking = (top: boolean) => (a: number, b: number): number => (Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : Number.isNaN(b) ? -1 : top ? b - a : a - b);

/** topk/bottomk: per step the k largest (smallest) floats of each group keep their series' labels. */
function selectK(groups: Group[], inputSize: number, steps: number, ks: number[], top: boolean): VSeries[] {
  const out = new SeriesCollector(steps);
  const rank = ranking(top);
  for (let i = 0; i < steps; i++) {
    const k = kOf(ks[i]!, inputSize);
    if (k < 1) continue;
    for (const g of groups) {
      const present = g.members.filter((m) => typeof m.values[i] === 'number');
      present.sort((a, b) => rank(a.values[i] as number, b.values[i] as number));
      for (const m of present.slice(0, k)) out.set(m.labels, i, m.values[i]);
    }
  }
  return out.series();
}

/** limitk: per step the first k series of each group that have a value (in input order). */
function limitK(groups: Group[], inputSize: number, steps: number, ks: number[]): VSeries[] {
  const out = new SeriesCollector(steps);
  for (let i = 0; i < steps; i++) {
    const k = kOf(ks[i]!, inputSize);
    if (k < 1) continue;
    for (const g of groups) for (const m of g.members.filter((s) => s.values[i] !== undefined).slice(0, k)) out.set(m.labels, i, m.values[i]);
  }
  return out.series();
}

/**
 * limit_ratio(r, v): series whose label hash, as a fraction of 2^64, is below r (r ≥ 0) or at
 * least 1 + r (r < 0): a stable sample of about |r| of the series, the complement for −r.
 */
function limitRatio(groups: Group[], steps: number, ratios: number[]): VSeries[] {
  const out = new SeriesCollector(steps);
  const offsets = new Map<VSeries, number>();
  for (const g of groups) for (const m of g.members) offsets.set(m, Number(labelsHash(m.labels)) / 2 ** 64);
  for (let i = 0; i < steps; i++) {
    const r = Math.max(-1, Math.min(1, ratios[i]!));
    if (r === 0 || Number.isNaN(r)) continue;
    for (const [m, offset] of offsets) {
      if (m.values[i] === undefined) continue;
      if ((r >= 0 && offset < r) || (r < 0 && offset >= 1 + r)) out.set(m.labels, i, m.values[i]);
    }
  }
  return out.series();
}

/** count_values("label", v): per group, how many series have each value, the value (Go's %f form) in `label`. */
function countValues(spec: AggregateSpec, series: VSeries[], steps: number, label: string): VSeries[] {
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(label) && !(label !== '' && isValidUtf8Name(label))) throw new PromQLError(`invalid label name ${JSON.stringify(label)}`);
  const grouping = spec.without ? spec.grouping : [...spec.grouping, label];
  const counts = new Map<string, { labels: Labels; n: number[] }>();
  for (const s of series) {
    s.values.forEach((v, i) => {
      if (typeof v !== 'number') return;
      const labels = groupLabels({ ...s.labels, [label]: formatGoFloat(v) }, grouping, spec.without);
      const key = labelsKey(labels);
      const c = counts.get(key) ?? { labels, n: new Array<number>(steps).fill(0) };
      c.n[i]!++;
      counts.set(key, c);
    });
  }
  const out = new SeriesCollector(steps);
  for (const c of counts.values()) out.add(c.labels, c.n.map((n) => (n === 0 ? undefined : n)));
  return out.series();
}

const isValidUtf8Name = (s: string): boolean => !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));
