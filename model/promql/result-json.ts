// Query results in the Prometheus HTTP API's JSON shapes: `vector`, `matrix`, `scalar`,
// `string`; sample values as strings, ferrite histograms in the native-histogram shape
// (`{count, sum, buckets: [[boundary_rule, lower, upper, count]]}`, rule 1: closed left, open right).
import { binLower, binUpper, Histogram } from '../histogram/index.js';
import type { Labels, PromValue } from '../prometheus/types.js';
import { PromQLError } from './ast.js';
import { formatGoFloat } from './format.js';
import { timeAt, type Grid, type Value } from './values.js';

const formatFloat = formatGoFloat;

function histogramJson(h: Histogram): Record<string, unknown> {
  const buckets = h.entries().map(({ bin, count }) => [1, formatFloat(binLower(bin)), formatFloat(binUpper(bin)), String(count)]);
  return { count: String(h.sampleCount()), sum: formatFloat(h.approxSum()), buckets };
}

const seconds = (ms: number): number => ms / 1000;

/** `[t, "v"]` or `{histogram: [t, {...}]}` member of a sample. */
function point(t: number, v: PromValue): { key: 'value' | 'histogram'; cell: [number, unknown] } {
  return v instanceof Histogram ? { key: 'histogram', cell: [seconds(t), histogramJson(v)] } : { key: 'value', cell: [seconds(t), formatFloat(v)] };
}

/** An instant query's answer at `timeMs`. */
export function instantResult(value: Value, timeMs: number): { resultType: string; result: unknown } {
  switch (value.kind) {
    case 'scalar':
      return { resultType: 'scalar', result: [seconds(timeMs), formatFloat(value.values[0]!)] };
    case 'string':
      return { resultType: 'string', result: [seconds(timeMs), value.value] };
    case 'vector':
      return {
        resultType: 'vector',
        result: value.series.flatMap((s) => {
          const v = s.values[0];
          if (v === undefined) return [];
          const p = point(timeMs, v);
          return [{ metric: s.labels, [p.key]: p.cell }];
        }),
      };
    case 'matrix':
      return {
        resultType: 'matrix',
        result: value.series.flatMap((s) => {
          const lo = value.ends[0]! - value.rangeMs;
          const idx = s.ts.flatMap((t, i) => (t > lo && t <= value.ends[0]! ? [i] : []));
          return idx.length === 0 ? [] : [seriesJson(s.labels, idx.map((i) => [s.ts[i]!, s.values[i]!]))];
        }),
      };
  }
}

/** A range query's answer: one series per label set with its points. */
export function rangeResult(value: Value, grid: Grid): { resultType: string; result: unknown } {
  if (value.kind === 'scalar') return { resultType: 'matrix', result: [seriesJson({}, value.values.map((v, i) => [timeAt(grid, i), v]))] };
  if (value.kind !== 'vector') throw new PromQLError(`invalid expression type ${JSON.stringify(value.kind === 'matrix' ? 'range vector' : 'string')} for range query, must be Scalar or instant Vector`);
  return {
    resultType: 'matrix',
    result: value.series.flatMap((s) => {
      const points = s.values.flatMap((v, i): [number, PromValue][] => (v === undefined ? [] : [[timeAt(grid, i), v]]));
      return points.length === 0 ? [] : [seriesJson(s.labels, points)];
    }),
  };
}

function seriesJson(labels: Labels, points: [number, PromValue][]): Record<string, unknown> {
  const out: Record<string, unknown> = { metric: labels };
  const floats = points.filter(([, v]) => typeof v === 'number');
  const hists = points.filter(([, v]) => v instanceof Histogram);
  if (floats.length > 0) out.values = floats.map(([t, v]) => point(t, v).cell);
  if (hists.length > 0) out.histograms = hists.map(([t, v]) => point(t, v).cell);
  return out;
}
