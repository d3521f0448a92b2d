// Evaluates a PromQL tree over a grid of evaluation times. Selectors read their series once
// for the whole grid (plus the lookback or range before it); functions, operators and
// aggregations then work on per-step values. Data comes from a PromSource. The tree has been
// type-checked by the parser (signatures.ts), so arguments have the types their function takes.
import type { SeriesData } from '../prometheus/types.js';
import { PromQLError, type AtModifier, type Expr, type MatrixSelector, type Selector, type Subquery } from './ast.js';
import { aggregate, AGGREGATIONS } from './aggregate.js';
import { binary } from './binary.js';
import { HISTOGRAM_STATISTICS, histogramFractionOf, histogramQuantileOf, histogramQuantilesOf, histogramStatistic } from './histogram-functions.js';
import { absentLabels, DATE_FUNCTIONS, hasValueAt, labelJoin, labelReplace, mapFloats, MATH_FUNCTIONS, roundTo, sortByLabels, sortByValue } from './instant-functions.js';
import { KEEPS_NAME, RANGE_FUNCTIONS } from './range-functions.js';
import type { PromSource } from './source.js';
import { compareLabelSets, lastAtOrBefore, SeriesCollector, timeAt, withoutName, type Cell, type Grid, type RangeSeries, type Value, type VSeries } from './values.js';
import { maxOf, minOf } from '../extremes.js';

export interface EvalOptions {
  source: PromSource;
  /** How far back an instant selector looks for a sample (Prometheus: 5 minutes). */
  lookbackMs: number;
  /** The query's own start and end, for `@ start()` / `@ end()` and start()/end(). */
  queryStartMs: number;
  queryEndMs: number;
}

/** Subqueries without a step use this resolution (Prometheus' default evaluation interval). */
const DEFAULT_SUBQUERY_STEP_MS = 60_000;
/** Most evaluation steps one (sub)query may have, as Prometheus limits range queries. */
export const MAX_STEPS = 11_000;

export async function evaluate(expr: Expr, grid: Grid, opts: EvalOptions): Promise<Value> {
  return new Evaluator(opts).eval(expr, grid);
}

type Vector = Extract<Value, { kind: 'vector' }>;
type Matrix = Extract<Value, { kind: 'matrix' }>;
const vector = (series: VSeries[]): Vector => ({ kind: 'vector', series });
const scalar = (values: number[]): Value => ({ kind: 'scalar', values });

class Evaluator {
  constructor(private readonly opts: EvalOptions) {}

  async eval(e: Expr, grid: Grid): Promise<Value> {
    switch (e.type) {
      case 'number':
        return scalar(new Array<number>(grid.count).fill(e.value));
      case 'string':
        return { kind: 'string', value: e.value };
      case 'selector':
        return vector(await this.selector(e, grid, false));
      case 'matrix':
        return this.matrix(e, grid);
      case 'subquery':
        return this.subquery(e, grid);
      case 'unary': {
        const v = await this.eval(e.expr, grid);
        if (e.op === '+') return v;
        if (v.kind === 'scalar') return scalar(v.values.map((x) => -x));
        return vector(mapFloats((v as Vector).series, (x) => -x));
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

  /** Series in Prometheus' order (by label set), so order-dependent operators (limitk) agree. */
  private async read(s: Selector, from: number, to: number): Promise<SeriesData[]> {
    const data = await this.opts.source.select(s.matchers, from, to);
    return data.sort((a, b) => compareLabelSets(a.labels, b.labels));
  }

  /** An instant selector: per step the latest sample within the lookback, or (`timestamps`) its time in seconds. */
  private async selector(s: Selector, grid: Grid, timestamps: boolean): Promise<VSeries[]> {
    const times = this.evalTimes(grid, s.offsetMs, s.at);
    const lookback = this.opts.lookbackMs;
    const data = await this.read(s, minOf(times) - lookback, maxOf(times));
    const series = data.map((d): VSeries => {
      const values = times.map((t): Cell => {
        const i = lastAtOrBefore(d.samples.ts, t);
        if (i < 0 || d.samples.ts[i]! <= t - lookback) return undefined;
        const v = d.samples.values[i];
        if (v === null || v === undefined) return undefined; // a gap marker ends the series
        return timestamps ? d.samples.ts[i]! / 1000 : v;
      });
      return { labels: timestamps ? withoutName(d.labels) : d.labels, values };
    });
    return series.filter((s) => s.values.some((v) => v !== undefined));
  }

  private async matrix(m: MatrixSelector, grid: Grid): Promise<Matrix> {
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
  private async subquery(q: Subquery, grid: Grid): Promise<Matrix> {
    const ends = this.evalTimes(grid, q.offsetMs, q.at);
    const step = q.stepMs ?? DEFAULT_SUBQUERY_STEP_MS;
    if (step <= 0) throw new PromQLError('zero or negative subquery step');
    const first = Math.floor((minOf(ends) - q.rangeMs) / step) + 1;
    const last = Math.floor(maxOf(ends) / step);
    const inner: Grid = { startMs: first * step, stepMs: step, count: Math.max(0, last - first + 1) };
    if (inner.count > MAX_STEPS * 10) throw new PromQLError(`the subquery needs ${inner.count} evaluation steps; use a larger step`);
    const v = inner.count === 0 ? vector([]) : ((await this.eval(q.expr, inner)) as Vector);
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
    const params = param?.kind === 'scalar' ? param.values : [];
    const label = param?.kind === 'string' ? param.value : '';
    return vector(aggregate(e, (v as Vector).series, grid.count, params, label));
  }

  private async call(func: string, args: Expr[], grid: Grid): Promise<Value> {
    if (func === 'timestamp' && args[0]!.type === 'selector') return vector(await this.selector(args[0]!, grid, true));
    if (func === 'absent_over_time') return this.absentOverTime(args[0]!, grid);
    const vals = await Promise.all(args.map((a) => this.eval(a, grid)));
    const scalarAt = (i: number): number[] => (vals[i] as Extract<Value, { kind: 'scalar' }>).values;
    const vectorAt = (i: number): VSeries[] => (vals[i] as Vector).series;
    const stringAt = (i: number): string => (vals[i] as Extract<Value, { kind: 'string' }>).value;

    const range = RANGE_FUNCTIONS[func];
    if (range !== undefined) {
      const matrixIndex = vals.findIndex((v) => v.kind === 'matrix');
      const scalars = vals.flatMap((_v, i) => (i === matrixIndex ? [] : [scalarAt(i)]));
      return vector(applyRange(vals[matrixIndex] as Matrix, range, scalars, !KEEPS_NAME.has(func), grid));
    }
    const math = MATH_FUNCTIONS[func];
    if (math !== undefined) return vector(mapFloats(vectorAt(0), math));
    const date = DATE_FUNCTIONS[func];
    if (date !== undefined) {
      if (vals.length === 0) return vector([{ labels: {}, values: Array.from({ length: grid.count }, (_, i) => date(timeAt(grid, i) / 1000)) }]);
      return vector(mapFloats(vectorAt(0), date));
    }
    const statistic = HISTOGRAM_STATISTICS[func];
    if (statistic !== undefined) return vector(histogramStatistic(vectorAt(0), statistic));
    const steps = Array.from({ length: grid.count }, (_, i) => i);
    switch (func) {
      case 'round': {
        const to = vals.length === 2 ? scalarAt(1) : null;
        return vector(mapFloats(vectorAt(0), (x, i) => roundTo(x, to?.[i] ?? 1)));
      }
      case 'clamp':
      case 'clamp_min':
      case 'clamp_max': {
        const lo = func === 'clamp_max' ? null : scalarAt(1);
        const hi = func === 'clamp' ? scalarAt(2) : func === 'clamp_max' ? scalarAt(1) : null;
        return vector(mapFloats(vectorAt(0), (x, i) => {
          const min = lo?.[i] ?? -Infinity;
          const max = hi?.[i] ?? Infinity;
          return max < min ? undefined : Math.max(min, Math.min(max, x));
        }));
      }
      case 'scalar': {
        const series = vectorAt(0);
        return scalar(steps.map((i) => {
          const present = series.filter((s) => typeof s.values[i] === 'number');
          return present.length === 1 ? (present[0]!.values[i] as number) : NaN;
        }));
      }
      case 'vector':
        return vector([{ labels: {}, values: [...scalarAt(0)] }]);
      case 'time':
        return scalar(steps.map((i) => timeAt(grid, i) / 1000));
      case 'pi':
        return scalar(steps.map(() => Math.PI));
      case 'start':
      case 'end':
        return scalar(steps.map(() => (func === 'start' ? this.opts.queryStartMs : this.opts.queryEndMs) / 1000));
      case 'range':
        return scalar(steps.map(() => (this.opts.queryEndMs - this.opts.queryStartMs) / 1000));
      case 'step':
        return scalar(steps.map(() => (grid.count > 1 ? grid.stepMs / 1000 : 0)));
      case 'min_of':
      case 'max_of':
        return scalar(steps.map((i) => (func === 'min_of' ? Math.min : Math.max)(scalarAt(0)[i]!, scalarAt(1)[i]!)));
      case 'timestamp':
        return vector(mapFloats(vectorAt(0), (_x, i) => timeAt(grid, i) / 1000));
      case 'histogram_quantile':
        return vector(histogramQuantileOf(scalarAt(0), vectorAt(1)));
      case 'histogram_fraction':
        return vector(histogramFractionOf(scalarAt(0), scalarAt(1), vectorAt(2)));
      case 'histogram_quantiles':
        return vector(histogramQuantilesOf(vectorAt(0), stringAt(1), vals.slice(2).map((_v, k) => scalarAt(k + 2))));
      case 'sort':
      case 'sort_desc':
        return vector(sortByValue(vectorAt(0), func === 'sort_desc'));
      case 'sort_by_label':
      case 'sort_by_label_desc':
        return vector(sortByLabels(vectorAt(0), vals.slice(1).map((_v, k) => stringAt(k + 1)), func === 'sort_by_label_desc'));
      case 'label_replace':
        return vector(labelReplace(vectorAt(0), stringAt(1), stringAt(2), stringAt(3), stringAt(4)));
      case 'label_join':
        return vector(labelJoin(vectorAt(0), stringAt(1), stringAt(2), vals.slice(3).map((_v, k) => stringAt(k + 3))));
      case 'absent': {
        const series = vectorAt(0);
        const values = steps.map((i): Cell => (hasValueAt(series, i) ? undefined : 1));
        return vector(values.some((v) => v !== undefined) ? [{ labels: absentLabels(selectorMatchers(args[0]!)), values }] : []);
      }
      default:
        throw new PromQLError(`function ${JSON.stringify(func)} is not supported by ferrite`);
    }
  }

  /** absent_over_time(v[r]): 1 at the steps where no series has a sample in the window. */
  private async absentOverTime(arg: Expr, grid: Grid): Promise<Value> {
    const m = (await this.eval(arg, grid)) as Matrix;
    const present = applyRange(m, RANGE_FUNCTIONS.present_over_time!, [], true, grid);
    const values = Array.from({ length: grid.count }, (_, i): Cell => (hasValueAt(present, i) ? undefined : 1));
    if (values.every((v) => v === undefined)) return vector([]);
    return vector([{ labels: absentLabels(selectorMatchers(arg)), values }]);
  }
}

/** The matchers of a selector argument (absent's labels come from them); none for other expressions. */
function selectorMatchers(e: Expr): Selector['matchers'] | null {
  if (e.type === 'selector') return e.matchers;
  if (e.type === 'matrix') return e.selector.matchers;
  return null;
}

/** Applies a range function to each series of a range vector, at each step's window. */
function applyRange(m: Matrix, f: (typeof RANGE_FUNCTIONS)[string], scalars: number[][], dropName: boolean, grid: Grid): VSeries[] {
  const out = new SeriesCollector(m.ends.length);
  for (const s of m.series) {
    const values = m.ends.map((end, i): Cell => {
      const lo = lastAtOrBefore(s.ts, end - m.rangeMs) + 1;
      const hi = lastAtOrBefore(s.ts, end) + 1;
      if (hi <= lo) return undefined;
      return f({ ts: s.ts, values: s.values, lo, hi, end, rangeMs: m.rangeMs, evalTime: timeAt(grid, i) }, scalars.map((p) => p[i]!));
    });
    out.add(dropName ? withoutName(s.labels) : s.labels, values);
  }
  return out.series();
}
