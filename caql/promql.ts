// CAQL's `#lang="promql"` directive: the rest of the query is PromQL, evaluated by ferrite's
// PromQL engine (model/promql). With DF1/DF4 it is evaluated at each slot's start and its
// series become CAQL streams; with `format=PQ` (an instant query at `end`) or `PQR` (a range
// query from `start` to `end` every `period` seconds) the answer is the Prometheus API's
// `{"status":"success","data":{"resultType":…,"result":…}}`, as gosnowth's
// PromQLInstantQuery / PromQLRangeQuery send and read them.
import { Histogram } from '../model/histogram/index.js';
import type { Labels } from '../model/prometheus/types.js';
import { PromQLError } from '../model/promql/ast.js';
import { evaluate, MAX_STEPS } from '../model/promql/evaluate.js';
import { parsePromQL } from '../model/promql/parse.js';
import { instantResult, rangeResult } from '../model/promql/result-json.js';
import type { PromSource } from '../model/promql/source.js';
import type { Grid as PromGrid, Value } from '../model/promql/values.js';
import { CaqlUserError } from './errors.js';
import { numeric, type Grid, type Stream } from './stream.js';

/** Prometheus' lookback for instant selectors, unless `#lookback_window=` says otherwise. */
export const DEFAULT_LOOKBACK_MS = 5 * 60_000;

function labelText(labels: Labels): string {
  const { __name__: name, ...rest } = labels;
  const pairs = Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${name ?? ''}${pairs.length > 0 || name === undefined ? `{${pairs.join(',')}}` : ''}`;
}

/** PromQL errors are the caller's: CAQL user errors. */
async function run(text: string, grid: PromGrid, source: PromSource, lookbackMs: number, queryEndMs: number): Promise<Value> {
  try {
    return await evaluate(parsePromQL(text), grid, { source, lookbackMs, queryStartMs: grid.startMs, queryEndMs });
  } catch (error) {
    if (error instanceof PromQLError) throw new CaqlUserError(`PromQL: ${error.message}`);
    throw error;
  }
}

export async function promqlStreams(text: string, grid: Grid, source: PromSource, lookbackMs = DEFAULT_LOOKBACK_MS): Promise<Stream[]> {
  const startMs = grid.startS * 1000;
  const stepMs = grid.periodS * 1000;
  const value = await run(text, { startMs, stepMs, count: grid.count }, source, lookbackMs, startMs + (grid.count - 1) * stepMs);
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

export interface PromAnswer {
  status: 'success';
  data: { resultType: string; result: unknown };
}

/** `format=PQ`: the query evaluated at one instant, epoch seconds. */
export async function promqlInstant(text: string, timeS: number, source: PromSource, lookbackMs = DEFAULT_LOOKBACK_MS): Promise<PromAnswer> {
  const timeMs = Math.round(timeS * 1000);
  const value = await run(text, { startMs: timeMs, stepMs: 1, count: 1 }, source, lookbackMs, timeMs);
  return { status: 'success', data: instantResult(value, timeMs) };
}

/** `format=PQR`: the query evaluated at start, start + step, … up to end (inclusive), epoch seconds. */
export async function promqlRange(text: string, startS: number, endS: number, stepS: number, source: PromSource, lookbackMs = DEFAULT_LOOKBACK_MS): Promise<PromAnswer> {
  if (!(stepS > 0)) throw new CaqlUserError('PQR: period (the step) must be positive');
  if (endS < startS) throw new CaqlUserError('PQR: end must not be before start');
  const count = Math.floor((endS - startS) / stepS) + 1;
  if (count > MAX_STEPS) throw new CaqlUserError(`PQR: ${count} steps; at most ${MAX_STEPS} (raise period)`);
  const grid = { startMs: Math.round(startS * 1000), stepMs: Math.round(stepS * 1000), count };
  const value = await run(text, grid, source, lookbackMs, Math.round(endS * 1000));
  try {
    return { status: 'success', data: rangeResult(value, grid) };
  } catch (error) {
    if (error instanceof PromQLError) throw new CaqlUserError(`PromQL: ${error.message}`);
    throw error;
  }
}
