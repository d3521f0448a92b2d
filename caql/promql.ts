// CAQL's `#lang="promql"` directive: the rest of the query is PromQL, evaluated by ferrite's
// PromQL engine (model/promql) at each slot's start, and its series become CAQL streams.
import { Histogram } from '../model/histogram/index.js';
import type { Labels } from '../model/prometheus/types.js';
import { PromQLError } from '../model/promql/ast.js';
import { evaluate } from '../model/promql/evaluate.js';
import { parsePromQL } from '../model/promql/parse.js';
import type { PromSource } from '../model/promql/source.js';
import { CaqlUserError } from './errors.js';
import { numeric, type Grid, type Stream } from './stream.js';

/** Prometheus' lookback for instant selectors. */
const LOOKBACK_MS = 5 * 60_000;

function labelText(labels: Labels): string {
  const { __name__: name, ...rest } = labels;
  const pairs = Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${name ?? ''}${pairs.length > 0 || name === undefined ? `{${pairs.join(',')}}` : ''}`;
}

export async function promqlStreams(text: string, grid: Grid, source: PromSource): Promise<Stream[]> {
  const startMs = grid.startS * 1000;
  const stepMs = grid.periodS * 1000;
  let value;
  try {
    value = await evaluate(parsePromQL(text), { startMs, stepMs, count: grid.count }, { source, lookbackMs: LOOKBACK_MS, queryStartMs: startMs, queryEndMs: startMs + (grid.count - 1) * stepMs });
  } catch (error) {
    if (error instanceof PromQLError) throw new CaqlUserError(`PromQL: ${error.message}`);
    throw error;
  }
  if (value.kind === 'scalar') return [numeric({ label: text }, value.values)];
  if (value.kind !== 'vector') throw new CaqlUserError(`PromQL: the query must give an instant vector or a scalar, not a ${value.kind === 'matrix' ? 'range vector' : 'string'}`);
  return value.series.map((s): Stream => {
    const label = labelText(s.labels);
    const tags = Object.entries(s.labels).map(([k, v]) => (k === '__name__' ? `__name:${v}` : `${k}:${v}`));
    const head = { label, tags, name: s.labels.__name__ ?? label, canonical: label };
    if (s.values.some((v) => v instanceof Histogram)) return { ...head, kind: 'histogram', values: s.values.map((v) => (v instanceof Histogram ? v : null)) };
    return numeric(head, s.values.map((v) => (typeof v === 'number' ? v : null)));
  });
}
