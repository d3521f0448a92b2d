// The type of every PromQL function (Prometheus' parser/functions.go, 2.x and 3.x names) and
// the static type check Prometheus' parser runs before evaluation (checkAST): argument
// counts and types, operands of operators and aggregations. A query that fails it is a
// PromQLError before any data is read.
import { lookupTable } from '../lookup-table.js';
import { PromQLError, type Expr } from './ast.js';

export type ValueType = 'scalar' | 'vector' | 'matrix' | 'string';

export interface Signature {
  args: ValueType[];
  /** 0: exactly `args`; n > 0: the last argument repeats, up to n more times (-1: any number). */
  variadic: number;
  returns: ValueType;
}

const sig = (args: ValueType[], returns: ValueType = 'vector', variadic = 0): Signature => ({ args, variadic, returns });
const V = sig(['vector']);
const M = sig(['matrix']);
const DATE = sig(['vector'], 'vector', 1);

export const FUNCTIONS: Record<string, Signature> = lookupTable({
  abs: V, ceil: V, floor: V, exp: V, sqrt: V, ln: V, log2: V, log10: V, sgn: V, deg: V, rad: V,
  sin: V, cos: V, tan: V, asin: V, acos: V, atan: V, sinh: V, cosh: V, tanh: V, asinh: V, acosh: V, atanh: V,
  absent: V, timestamp: V, sort: V, sort_desc: V,
  histogram_count: V, histogram_sum: V, histogram_avg: V, histogram_stddev: V, histogram_stdvar: V,
  sort_by_label: sig(['vector', 'string'], 'vector', -1),
  sort_by_label_desc: sig(['vector', 'string'], 'vector', -1),
  absent_over_time: M, present_over_time: M, changes: M, resets: M, delta: M, deriv: M, idelta: M, increase: M, irate: M, rate: M,
  avg_over_time: M, count_over_time: M, last_over_time: M, first_over_time: M, max_over_time: M, min_over_time: M, sum_over_time: M,
  stddev_over_time: M, stdvar_over_time: M, mad_over_time: M,
  ts_of_first_over_time: M, ts_of_last_over_time: M, ts_of_max_over_time: M, ts_of_min_over_time: M,
  quantile_over_time: sig(['scalar', 'matrix']),
  predict_linear: sig(['matrix', 'scalar']),
  holt_winters: sig(['matrix', 'scalar', 'scalar']),
  double_exponential_smoothing: sig(['matrix', 'scalar', 'scalar']),
  clamp: sig(['vector', 'scalar', 'scalar']),
  clamp_max: sig(['vector', 'scalar']),
  clamp_min: sig(['vector', 'scalar']),
  round: sig(['vector', 'scalar'], 'vector', 1),
  day_of_month: DATE, day_of_week: DATE, day_of_year: DATE, days_in_month: DATE, hour: DATE, minute: DATE, month: DATE, year: DATE,
  histogram_quantile: sig(['scalar', 'vector']),
  histogram_fraction: sig(['scalar', 'scalar', 'vector']),
  histogram_quantiles: sig(['vector', 'string', 'scalar', 'scalar'], 'vector', 9),
  label_replace: sig(['vector', 'string', 'string', 'string', 'string']),
  label_join: sig(['vector', 'string', 'string', 'string'], 'vector', -1),
  scalar: sig(['vector'], 'scalar'),
  vector: sig(['scalar']),
  time: sig([], 'scalar'),
  pi: sig([], 'scalar'),
  start: sig([], 'scalar'),
  end: sig([], 'scalar'),
  range: sig([], 'scalar'),
  step: sig([], 'scalar'),
  min_of: sig(['scalar', 'scalar'], 'scalar'),
  max_of: sig(['scalar', 'scalar'], 'scalar'),
});

/** Functions Prometheus names that ferrite does not evaluate, with the reason. */
export const UNSUPPORTED_FUNCTIONS: Record<string, string> = lookupTable({
  info: 'info() needs target_info metadata series, which ferrite does not keep',
  start_timestamp: 'ferrite does not store created (start) timestamps',
});

export const AGGREGATIONS_WITH_PARAM: Record<string, ValueType> = lookupTable({
  topk: 'scalar', bottomk: 'scalar', quantile: 'scalar', limitk: 'scalar', limit_ratio: 'scalar', count_values: 'string',
});

const COMPARISONS = new Set(['==', '!=', '>', '<', '>=', '<=']);
const SET_OPS = new Set(['and', 'or', 'unless']);

const DOCUMENTED: Record<ValueType, string> = { scalar: 'scalar', vector: 'instant vector', matrix: 'range vector', string: 'string' };

/** The type of `e`, after checking it and everything under it as Prometheus' parser does. */
export function typeOf(e: Expr): ValueType {
  switch (e.type) {
    case 'number':
      return 'scalar';
    case 'string':
      return 'string';
    case 'selector':
      return 'vector';
    case 'matrix':
    case 'subquery':
      if (e.type === 'subquery') expect(e.expr, 'vector', 'subquery', (got) => `subquery is only allowed on instant vector, got ${got} instead`);
      return 'matrix';
    case 'unary': {
      const t = typeOf(e.expr);
      if (t !== 'scalar' && t !== 'vector') throw new PromQLError(`unary expression only allowed on expressions of type scalar or instant vector, got ${JSON.stringify(DOCUMENTED[t])}`);
      return t;
    }
    case 'aggregate': {
      expect(e.expr, 'vector', 'aggregation expression');
      const paramType = AGGREGATIONS_WITH_PARAM[e.op];
      if (paramType !== undefined) expect(e.param!, paramType, 'aggregation parameter');
      return 'vector';
    }
    case 'binary':
      return binaryType(e);
    case 'call':
      return callType(e.func, e.args);
  }
}

function expect(e: Expr, want: ValueType, context: string, message?: (got: string) => string): void {
  const got = typeOf(e);
  if (got !== want) throw new PromQLError(message?.(DOCUMENTED[got]) ?? `expected type ${DOCUMENTED[want]} in ${context}, got ${DOCUMENTED[got]}`);
}

function binaryType(e: Extract<Expr, { type: 'binary' }>): ValueType {
  const lt = typeOf(e.lhs);
  const rt = typeOf(e.rhs);
  if (e.bool && !COMPARISONS.has(e.op)) throw new PromQLError('bool modifier can only be used on comparison operators');
  if (COMPARISONS.has(e.op) && !e.bool && lt === 'scalar' && rt === 'scalar') throw new PromQLError('comparisons between scalars must use BOOL modifier');
  for (const t of [lt, rt]) if (t !== 'scalar' && t !== 'vector') throw new PromQLError('binary expression must contain only scalar and instant vector types');
  const m = e.matching;
  if (m.on) for (const l of m.include) if (m.labels.includes(l)) throw new PromQLError(`label ${JSON.stringify(l)} must not occur in ON and GROUP clause at once`);
  if (lt !== 'vector' || rt !== 'vector') {
    if (m.labels.length > 0 || m.on) throw new PromQLError('vector matching only allowed between instant vectors');
    if (SET_OPS.has(e.op)) throw new PromQLError(`set operator ${JSON.stringify(e.op)} not allowed in binary scalar expression`);
  } else if (SET_OPS.has(e.op) && (m.card === 'many-to-one' || m.card === 'one-to-many')) {
    throw new PromQLError(`no grouping allowed for ${JSON.stringify(e.op)} operation`);
  }
  return lt === 'scalar' && rt === 'scalar' ? 'scalar' : 'vector';
}

function callType(name: string, args: Expr[]): ValueType {
  const reason = UNSUPPORTED_FUNCTIONS[name];
  if (reason !== undefined) throw new PromQLError(`function ${JSON.stringify(name)} is not supported by ferrite: ${reason}`);
  const s = FUNCTIONS[name];
  if (s === undefined) throw new PromQLError(`unknown function with name ${JSON.stringify(name)}`);
  const fixed = s.args.length;
  if (s.variadic === 0 && args.length !== fixed) throw new PromQLError(`expected ${fixed} argument(s) in call to ${JSON.stringify(name)}, got ${args.length}`);
  if (s.variadic !== 0) {
    if (args.length < fixed - 1) throw new PromQLError(`expected at least ${fixed - 1} argument(s) in call to ${JSON.stringify(name)}, got ${args.length}`);
    if (s.variadic > 0 && args.length > fixed - 1 + s.variadic) throw new PromQLError(`expected at most ${fixed - 1 + s.variadic} argument(s) in call to ${JSON.stringify(name)}, got ${args.length}`);
  }
  args.forEach((a, i) => expect(a, s.args[Math.min(i, fixed - 1)]!, `call to function ${JSON.stringify(name)}`));
  return s.returns;
}
