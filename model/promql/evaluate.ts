// Evaluates a PromQL tree over a grid of evaluation times. Selectors read their series once
// for the whole grid (plus the lookback or range before it); functions, operators and
// aggregations then work on per-step values. Data comes from a PromSource.
import { Histogram } from '../histogram/index.js';
import type { SeriesData } from '../prometheus/types.js';
import { PromQLError, type AtModifier, type Expr, type MatrixSelector, type Selector, type Subquery } from './ast.js';
import { aggregate, AGGREGATIONS } from './aggregate.js';
import { binary } from './binary.js';
import { histogramQuantileOf, mapFloats, MATH_FUNCTIONS, roundTo } from './instant-functions.js';
import { KEEPS_NAME, RANGE_FUNCTIONS } from './range-functions.js';
import type { PromSource } from './source.js';
import { labelsKey, lastAtOrBefore, timeAt, typeName, withoutName, type Cell, type Grid, type RangeSeries, type Value, type VSeries } from './values.js';
import { maxOf, minOf } from '../extremes.js';

export interface EvalOptions {
  source: PromSource;
  /** How far back an instant selector looks for a sample (Prometheus: 5 minutes). */
  lookbackMs: number;
  /** The query's own start and end, for `@ start()` / `@ end()`. */
  queryStartMs: number;
  queryEndMs: number;
}

/** Subqueries without a step use this resolution (Prometheus' default evaluation interval). */
const DEFAULT_SUBQUERY_STEP_MS = 60_000;
/** Most evaluation steps one (sub)query may have, as Prometheus limits range queries. */
export const MAX_STEPS = 11_000;

export async function evaluate(expr: Expr, grid: Grid, opts: EvalOptions): Promise<Value> {
  const value = await new Evaluator(opts).eval(expr, grid);
  if (value.kind === 'vector') assertUniqueLabels(value.series);
  return value;
}

function assertUniqueLabels(series: VSeries[]): void {
  const seen = new Set<string>();
  for (const s of series) {
    const key = labelsKey(s.labels);
    if (seen.has(key)) throw new PromQLError(`vector cannot contain metrics with the same labelset ${key}`);
    seen.add(key);
  }
}

class Evaluator {
  constructor(private readonly opts: EvalOptions) {}

  async eval(e: Expr, grid: Grid): Promise<Value> {
    switch (e.type) {
      case 'number':
        return { kind: 'scalar', values: new Array<number>(grid.count).fill(e.value) };
      case 'string':
        return { kind: 'string', value: e.value };
      case 'selector':
        return this.selector(e, grid);
      case 'matrix':
        return this.matrix(e, grid);
      case 'subquery':
        return this.subquery(e, grid);
      case 'unary': {
        const v = await this.eval(e.expr, grid);
        if (e.op === '+') return v;
        if (v.kind === 'scalar') return { kind: 'scalar', values: v.values.map((x) => -x) };
        if (v.kind === 'vector') return { kind: 'vector', series: mapFloats(v.series, (x) => -x) };
        throw new PromQLError(`unary expression only allowed on expressions of type scalar or instant vector, got ${typeName(v)}`);
      }
      case 'binary': {
        const [lhs, rhs] = await Promise.all([this.eval(e.lhs, grid), this.eval(e.rhs, grid)]);
        return binary(e, lhs, rhs, grid.count);
      }
      case 'aggregate':
        return this.aggregate(e, grid);
      case 'call':
        return this.call(e.func, e.args, grid);
    }
  }

  /** When each step reads: at a fixed time (`@`) or at the step, minus the offset. */
  private evalTimes(grid: Grid, offsetMs: number, at: AtModifier | null): number[] {
    const fixed = at === null ? null : at.kind === 'time' ? at.ms : at.kind === 'start' ? this.opts.queryStartMs : this.opts.queryEndMs;
    return Array.from({ length: grid.count }, (_, i) => (fixed ?? timeAt(grid, i)) - offsetMs);
  }

  private async read(s: Selector, from: number, to: number): Promise<SeriesData[]> {
    return this.opts.source.select(s.matchers, from, to);
  }

  private async selector(s: Selector, grid: Grid): Promise<Value> {
    const times = this.evalTimes(grid, s.offsetMs, s.at);
    const lookback = this.opts.lookbackMs;
    const data = await this.read(s, minOf(times) - lookback, maxOf(times));
    const series = data.map((d): VSeries => {
      const values = times.map((t): Cell => {
        const i = lastAtOrBefore(d.samples.ts, t);
        if (i < 0 || d.samples.ts[i]! <= t - lookback) return undefined;
        return d.samples.values[i] ?? undefined; // a gap marker ends the series
      });
      return { labels: d.labels, values };
    });
    return { kind: 'vector', series: series.filter((s) => s.values.some((v) => v !== undefined)) };
  }

  private async matrix(m: MatrixSelector, grid: Grid): Promise<Value> {
    const ends = this.evalTimes(grid, m.selector.offsetMs, m.selector.at);
    const data = await this.read(m.selector, minOf(ends) - m.rangeMs, maxOf(ends));
    const series = data.map((d): RangeSeries => {
      const ts: number[] = [];
      const values: RangeSeries['values'] = [];
      d.samples.ts.forEach((t, i) => {
        const v = d.samples.values[i];
        if (v === null || v === undefined) return; // range vectors leave gap markers out
        ts.push(t);
        values.push(v);
      });
      return { labels: d.labels, ts, values };
    });
    return { kind: 'matrix', series, rangeMs: m.rangeMs, ends };
  }

  /** The inner expression at every multiple of the step that falls in some step's window. */
  private async subquery(q: Subquery, grid: Grid): Promise<Value> {
    const ends = this.evalTimes(grid, q.offsetMs, q.at);
    const step = q.stepMs ?? DEFAULT_SUBQUERY_STEP_MS;
    if (step <= 0) throw new PromQLError('zero or negative subquery step');
    const first = Math.floor((minOf(ends) - q.rangeMs) / step) + 1;
    const last = Math.floor(maxOf(ends) / step);
    const inner: Grid = { startMs: first * step, stepMs: step, count: Math.max(0, last - first + 1) };
    if (inner.count > MAX_STEPS * 10) throw new PromQLError(`the subquery needs ${inner.count} evaluation steps; use a larger step`);
    const v = inner.count === 0 ? ({ kind: 'vector', series: [] } as Value) : await this.eval(q.expr, inner);
    if (v.kind !== 'vector') throw new PromQLError(`subquery is only allowed on instant vector, got ${typeName(v)} instead`);
    const series = v.series.map((s): RangeSeries => {
      const ts: number[] = [];
      const values: RangeSeries['values'] = [];
      s.values.forEach((x, i) => {
        if (x === undefined) return;
        ts.push(timeAt(inner, i));
        values.push(x);
      });
      return { labels: s.labels, ts, values };
    });
    return { kind: 'matrix', series, rangeMs: q.rangeMs, ends };
  }

  private async aggregate(e: Extract<Expr, { type: 'aggregate' }>, grid: Grid): Promise<Value> {
    if (!AGGREGATIONS.has(e.op)) throw new PromQLError(`aggregation ${JSON.stringify(e.op)} is not supported by ferrite`);
    const [v, param] = await Promise.all([this.eval(e.expr, grid), e.param === null ? null : this.eval(e.param, grid)]);
    if (v.kind !== 'vector') throw new PromQLError(`expected type instant vector in aggregation expression, got ${typeName(v)}`);
    if (param !== null && param.kind !== 'scalar') throw new PromQLError(`expected type scalar in aggregation parameter, got ${typeName(param)}`);
    const params = param?.kind === 'scalar' ? param.values : [];
    return { kind: 'vector', series: aggregate(e.op, v.series, e.grouping, e.without, grid.count, params) };
  }

  private async call(func: string, args: Expr[], grid: Grid): Promise<Value> {
    const vals = await Promise.all(args.map((a) => this.eval(a, grid)));
    const want = (i: number, kind: Value['kind']): void => {
      const v = vals[i];
      if (v === undefined) throw new PromQLError(`expected at least ${i + 1} argument(s) in call to ${JSON.stringify(func)}, got ${vals.length}`);
      if (v.kind !== kind) throw new PromQLError(`expected type ${typeName({ kind } as Value)} in call to function ${JSON.stringify(func)}, got ${typeName(v)}`);
    };
    const arity = (n: number): void => {
      if (vals.length !== n) throw new PromQLError(`expected ${n} argument(s) in call to ${JSON.stringify(func)}, got ${vals.length}`);
    };
    const scalarAt = (i: number): number[] => (vals[i] as Extract<Value, { kind: 'scalar' }>).values;
    const vectorAt = (i: number): VSeries[] => (vals[i] as Extract<Value, { kind: 'vector' }>).series;

    const range = RANGE_FUNCTIONS[func];
    if (range !== undefined) {
      const takesParam = func === 'quantile_over_time';
      arity(takesParam ? 2 : 1);
      if (takesParam) want(0, 'scalar');
      want(takesParam ? 1 : 0, 'matrix');
      const m = vals[takesParam ? 1 : 0] as Extract<Value, { kind: 'matrix' }>;
      const params = takesParam ? scalarAt(0) : [];
      return { kind: 'vector', series: applyRange(m, range, params, !KEEPS_NAME.has(func)) };
    }
    const math = MATH_FUNCTIONS[func];
    if (math !== undefined) {
      arity(1);
      want(0, 'vector');
      return { kind: 'vector', series: mapFloats(vectorAt(0), math) };
    }
    switch (func) {
      case 'round': {
        if (vals.length < 1 || vals.length > 2) arity(1);
        want(0, 'vector');
        if (vals.length === 2) want(1, 'scalar');
        const to = vals.length === 2 ? scalarAt(1) : null;
        return { kind: 'vector', series: mapFloats(vectorAt(0), (x, i) => roundTo(x, to?.[i] ?? 1)) };
      }
      case 'clamp':
      case 'clamp_min':
      case 'clamp_max': {
        arity(func === 'clamp' ? 3 : 2);
        want(0, 'vector');
        for (let i = 1; i < vals.length; i++) want(i, 'scalar');
        const lo = func === 'clamp_max' ? null : scalarAt(1);
        const hi = func === 'clamp' ? scalarAt(2) : func === 'clamp_max' ? scalarAt(1) : null;
        const clamp = (x: number, i: number): number | undefined => {
          const min = lo?.[i] ?? -Infinity;
          const max = hi?.[i] ?? Infinity;
          return min > max ? undefined : Math.max(min, Math.min(max, x));
        };
        return { kind: 'vector', series: mapFloats(vectorAt(0), clamp) };
      }
      case 'scalar': {
        arity(1);
        want(0, 'vector');
        const series = vectorAt(0);
        return { kind: 'scalar', values: Array.from({ length: grid.count }, (_, i) => {
          const present = series.filter((s) => typeof s.values[i] === 'number');
          return present.length === 1 ? (present[0]!.values[i] as number) : NaN;
        }) };
      }
      case 'vector': {
        arity(1);
        want(0, 'scalar');
        return { kind: 'vector', series: [{ labels: {}, values: [...scalarAt(0)] }] };
      }
      case 'time':
        arity(0);
        return { kind: 'scalar', values: Array.from({ length: grid.count }, (_, i) => timeAt(grid, i) / 1000) };
      case 'histogram_quantile':
        arity(2);
        want(0, 'scalar');
        want(1, 'vector');
        return { kind: 'vector', series: histogramQuantileOf(scalarAt(0), vectorAt(1)) };
      case 'sort':
      case 'sort_desc':
        arity(1);
        want(0, 'vector');
        return { kind: 'vector', series: sortSeries(vectorAt(0), func === 'sort_desc') };
      default:
        throw new PromQLError(`function ${JSON.stringify(func)} is not supported by ferrite`);
    }
  }
}

/** Applies a range function to each series of a range vector, at each step's window. */
function applyRange(m: Extract<Value, { kind: 'matrix' }>, f: (typeof RANGE_FUNCTIONS)[string], params: number[], dropName: boolean): VSeries[] {
  const out: VSeries[] = [];
  for (const s of m.series) {
    const values = m.ends.map((end, i): Cell => {
      const lo = lastAtOrBefore(s.ts, end - m.rangeMs) + 1;
      const hi = lastAtOrBefore(s.ts, end) + 1;
      if (hi <= lo) return undefined;
      return f({ ts: s.ts, values: s.values, lo, hi, end, rangeMs: m.rangeMs }, params[i] ?? NaN);
    });
    if (values.some((v) => v !== undefined)) out.push({ labels: dropName ? withoutName(s.labels) : s.labels, values });
  }
  return out;
}

/** Instant-query order for sort/sort_desc (by the first step's value; NaN last). */
function sortSeries(series: VSeries[], desc: boolean): VSeries[] {
  const key = (s: VSeries): number => (typeof s.values[0] === 'number' ? s.values[0] : s.values[0] instanceof Histogram ? NaN : NaN);
  return [...series].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (Number.isNaN(x)) return 1;
    if (Number.isNaN(y)) return -1;
    return desc ? y - x : x - y;
  });
}
