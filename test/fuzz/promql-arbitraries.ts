// PromQL text for fuzzing: a small grammar of selectors, range vectors, subqueries, functions
// (with the arguments each takes, and now and then wrong ones), aggregations with parameters,
// binary operators with every matching modifier, offset, @ and duration expressions; plus the
// same damaged, and hostile strings.
import fc from 'fast-check';
import { damagedText, hostileNumber, shortHostileString } from './arbitraries.js';

export const labelName = fc.oneof({ arbitrary: fc.constantFrom('job', 'instance', 'le', 'host', '__name__', '__check_uuid', 'a b', ''), weight: 4 }, { arbitrary: shortHostileString, weight: 1 });
export const labelValue = fc.oneof({ arbitrary: fc.constantFrom('api', 'localhost:9090', '/a b', '0.5', '+Inf', ''), weight: 4 }, { arbitrary: shortHostileString, weight: 1 });
export const metricName = fc.oneof({ arbitrary: fc.constantFrom('up', 'http_requests_total', 'fuzz_m', 'x:y'), weight: 4 }, { arbitrary: shortHostileString, weight: 1 });

export const selector = fc
  .tuple(metricName.filter((n) => /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(n)), fc.array(fc.tuple(labelName.filter((n) => /^[a-zA-Z_]\w*$/.test(n)), fc.constantFrom('=', '!=', '=~', '!~'), labelValue), { maxLength: 2 }))
  .map(([name, ms]) => `${name}${ms.length === 0 ? '' : `{${ms.map(([l, op, v]) => `${l}${op}${JSON.stringify(v)}`).join(',')}}`}`);
const range = fc.constantFrom('[5m]', '[1s]', '[1h:1m]', '[0s]', '[100000d]', '[5m:0s]');
const FUNCS = ['rate', 'irate', 'increase', 'delta', 'deriv', 'changes', 'resets', 'avg_over_time', 'sum_over_time', 'quantile_over_time', 'stddev_over_time', 'last_over_time', 'mad_over_time', 'absent_over_time', 'ts_of_max_over_time', 'predict_linear', 'holt_winters'];
const INSTANT = ['abs', 'ceil', 'sqrt', 'ln', 'sort', 'scalar', 'vector', 'histogram_quantile', 'clamp', 'round', 'label_replace', 'label_join', 'timestamp', 'absent', 'acosh', 'day_of_week', 'sort_by_label', 'histogram_fraction', 'histogram_count', 'info', 'unknown_fn'];
/** A call of function f on x, with the extra arguments it takes (and now and then wrong ones). */
const instantCall = (f: string, x: string): string =>
  (({
    histogram_quantile: `${f}(0.9, ${x})`,
    histogram_fraction: `${f}(0, 0.5, ${x})`,
    clamp: `${f}(${x}, 0, 1)`,
    label_replace: `${f}(${x}, "dst", "$1-$\{2}", "job", "(.*)")`,
    label_join: `${f}(${x}, "dst", ",", "job", "instance")`,
    sort_by_label: `${f}(${x}, "job")`,
  }) as Record<string, string>)[f] ?? `${f}(${x})`;
const rangeCall = (f: string, m: string): string =>
  (({ quantile_over_time: `${f}(0.9, ${m})`, predict_linear: `${f}(${m}, 3600)`, holt_winters: `${f}(${m}, 0.5, 0.5)` }) as Record<string, string>)[f] ?? `${f}(${m})`;
export const { promql } = fc.letrec<{ promql: string }>((tie) => ({
  promql: fc.oneof(
    { depthSize: 'xsmall', withCrossShrink: true },
    { arbitrary: selector, weight: 4 },
    { arbitrary: fc.oneof(hostileNumber.map(String), fc.constantFrom('1', '0.5', 'NaN', 'Inf', '-Inf', '1e308')), weight: 1 },
    { arbitrary: fc.tuple(fc.constantFrom(...FUNCS), selector, range).map(([f, s, r]) => rangeCall(f, s + r)), weight: 3 },
    { arbitrary: fc.tuple(fc.constantFrom(...INSTANT), tie('promql')).map(([f, x]) => instantCall(f, x)), weight: 2 },
    {
      arbitrary: fc
        .tuple(fc.constantFrom('sum', 'avg', 'max', 'count', 'topk', 'quantile', 'stddev', 'count_values', 'limitk', 'limit_ratio', 'group'), fc.constantFrom('', ' by (job)', ' without (instance)'), tie('promql'))
        .map(([a, g, x]) => (({ topk: `${a}${g}(3, ${x})`, limitk: `${a}${g}(2, ${x})`, limit_ratio: `${a}${g}(-0.5, ${x})`, quantile: `${a}${g}(0.5, ${x})`, count_values: `${a}${g}("value", ${x})` }) as Record<string, string>)[a] ?? `${a}${g}(${x})`),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(tie('promql'), fc.constantFrom('+', '-', '*', '/', '%', '^', '==', '> bool', 'and', 'or', 'unless', '+ on(job)', '* ignoring(le)', 'atan2', '/ on(job) group_left', '* on(job) group_left(instance)', '- ignoring(le) group_right(job)', 'and on(job) group_left', '+ on(job, job) group_left(job)'), tie('promql'))
        .map(([a, op, b]) => `${a} ${op} ${b}`),
      weight: 2,
    },
    { arbitrary: fc.tuple(selector, fc.constantFrom(' offset 5m', ' offset -1h', ' @ 1700000000', ' @ start()', ' @ 1e300', ' offset 100000000d', '[5m * 2]', '[step() + 1m:]', '[1m / 0]', '[-5m]', ' offset (1h - 2h)', '[max(1m, range())]')).map(([s, m]) => s + m), weight: 1 },
    { arbitrary: tie('promql').map((x) => `(${x})`), weight: 1 },
  ),
}));
export const promqlText = fc.oneof({ arbitrary: promql, weight: 8 }, { arbitrary: damagedText(promql), weight: 2 }, { arbitrary: shortHostileString, weight: 1 });

