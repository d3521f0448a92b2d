// PromQL conformance: for each supported function and operator, ferrite's answer on a small
// data set equals the value worked out by hand (the working is in the comment beside it).
import test from 'ava';
import { Histogram } from '../../model/histogram/index.js';
import { compileMatcher, matchesAll } from '../../model/prometheus/matchers.js';
import type { Labels, PromValue, SeriesData } from '../../model/prometheus/types.js';
import { PromQLError } from '../../model/promql/ast.js';
import { evaluate } from '../../model/promql/evaluate.js';
import { parsePromQL } from '../../model/promql/parse.js';
import type { PromSource } from '../../model/promql/source.js';
import { labelsKey, type Value } from '../../model/promql/values.js';

const S = 1000;
const series = (labels: Labels, points: [number, PromValue | null][]): SeriesData => ({ labels, samples: { ts: points.map((p) => p[0] * S), values: points.map((p) => p[1]) } });
const hist = (...values: number[]): Histogram => values.reduce((h, v) => h.insert(v), Histogram.empty());
const every10 = (values: (number | null)[]): [number, number | null][] => values.map((v, i) => [i * 10, v]);

const DATA: SeriesData[] = [
  series({ __name__: 'c', job: 'a' }, every10([0, 10, 20, 30, 40, 50, 60])), // a counter rising 1/s
  series({ __name__: 'c', job: 'b' }, every10([0, 5, 10, 15, 0, 5, 10])), // a counter reset at 40 s
  series({ __name__: 'g', job: 'a' }, every10([1, 3, 2, 5, 4])), // a gauge, last sample at 40 s
  series({ __name__: 'd', job: 'a' }, [[60, 5]]),
  series({ __name__: 'd', job: 'b' }, [[60, 2]]),
  series({ __name__: 'h_bucket', le: '1' }, [[60, 2]]),
  series({ __name__: 'h_bucket', le: '2' }, [[60, 6]]),
  series({ __name__: 'h_bucket', le: '+Inf' }, [[60, 8]]),
  series({ __name__: 'nh', x: '1' }, [[50, hist(10)], [60, hist(20)]]),
  series({ __name__: 'nh', x: '2' }, [[60, hist(30, 40)]]),
  series({ __name__: 'gap' }, [[10, 1], [20, null]]),
  series({ __name__: 'info', job: 'a', team: 'x' }, [[60, 1]]),
  series({ __name__: 'info', job: 'b', team: 'y' }, [[60, 1]]),
];

const source: PromSource = {
  async select(matchers, startMs, endMs) {
    const compiled = matchers.map(compileMatcher);
    return DATA.filter((d) => matchesAll(compiled, d.labels)).map((d) => {
      const keep = d.samples.ts.map((t, i) => [t, i] as const).filter(([t]) => t >= startMs && t <= endMs);
      return { labels: d.labels, samples: { ts: keep.map(([t]) => t), values: keep.map(([, i]) => d.samples.values[i]!) } };
    });
  },
};

async function at(query: string, timeS = 60): Promise<Value> {
  return evaluate(parsePromQL(query), { startMs: timeS * S, stepMs: 1, count: 1 }, { source, lookbackMs: 300 * S, queryStartMs: timeS * S, queryEndMs: timeS * S });
}

/** An instant answer as { labelsKey: number } (histograms as their median), or a scalar. */
async function answer(query: string, timeS = 60): Promise<Record<string, number> | number> {
  const v = await at(query, timeS);
  if (v.kind === 'scalar') return v.values[0]!;
  if (v.kind !== 'vector') throw new Error(`unexpected ${v.kind}`);
  const out: Record<string, number> = {};
  for (const s of v.series) {
    const x = s.values[0];
    if (x === undefined) continue;
    out[labelsKey(s.labels)] = typeof x === 'number' ? x : x.quantiles([0.5])[0]!;
  }
  return out;
}

const L = (labels: Labels): string => labelsKey(labels);
const one = (labels: Labels, v: number): Record<string, number> => ({ [L(labels)]: v });
const A = { job: 'a' };
const B = { job: 'b' };

const TABLE: [string, Record<string, number> | number, number?][] = [
  // Selectors: the latest sample within 5 minutes; four matchers.
  ['c{job="a"}', one({ __name__: 'c', job: 'a' }, 60)],
  ['c{job!="a"}', one({ __name__: 'c', job: 'b' }, 10)],
  ['{__name__=~"c|d", job=~"b"}', { [L({ __name__: 'c', job: 'b' })]: 10, [L({ __name__: 'd', job: 'b' })]: 2 }],
  ['c{job!~"a|b"}', {}],
  ['g', one({ __name__: 'g', job: 'a' }, 4)], // last sample at 40 s, within the lookback
  ['g', {}, 400], // 400 − 300 > 40: nothing within the lookback
  ['gap', {}, 30], // a gap marker (null) at 20 s ends the series
  ['c offset 30s', { [L({ __name__: 'c', job: 'a' })]: 30, [L({ __name__: 'c', job: 'b' })]: 15 }],
  ['c @ 30', { [L({ __name__: 'c', job: 'a' })]: 30, [L({ __name__: 'c', job: 'b' })]: 15 }],
  // rate over (0, 60]: samples 10..60 s; Δ=50 over 50 s, 10 s to the window start (< 1.1·10 s,
  // and no further than the counter's zero at 50·10/50 = 10 s), 0 s to the end: 50·60/50/60 = 1.
  ['rate(c{job="a"}[1m])', one(A, 1)],
  ['increase(c{job="a"}[1m])', one(A, 60)],
  // job b: 5,10,15,0,5,10: Δ=5, plus 15 at the reset = 20; zero point 50·5/20 = 12.5 s > 10 s: 20·1.2 = 24.
  ['increase(c{job="b"}[1m])', one(B, 24)],
  ['rate(c{job="b"}[1m])', one(B, 0.4)],
  ['irate(c{job="b"}[1m])', one(B, 0.5)], // (10 − 5) / 10 s
  ['irate(c{job="b"}[35s])', one(B, 0.5)],
  ['idelta(g[1m])', one(A, -1)], // 4 − 5
  // delta over (0, 60]: 3,2,5,4 at 10..40 s: Δ=1 over 30 s, 10 s to the start, 20 s to the end (> 11 s → 5 s): 1·45/30.
  ['delta(g[1m])', one(A, 1.5)],
  // deriv: points (0,3) (10,2) (20,5) (30,4): cov 30 / var 500.
  ['deriv(g[1m])', one(A, 0.06)],
  ['avg_over_time(g[1m])', one(A, 3.5)],
  ['min_over_time(g[1m])', one(A, 2)],
  ['max_over_time(g[1m])', one(A, 5)],
  ['sum_over_time(g[1m])', one(A, 14)],
  ['count_over_time(g[1m])', one(A, 4)],
  ['last_over_time(g[1m])', one({ __name__: 'g', job: 'a' }, 4)],
  ['stddev_over_time(g[1m])', one(A, Math.sqrt(1.25))], // deviations .25 + 2.25 + 2.25 + .25 = 5, / 4
  ['stdvar_over_time(g[1m])', one(A, 1.25)],
  ['quantile_over_time(0.5, g[1m])', one(A, 3.5)], // 2,3,4,5: rank 1.5
  ['present_over_time(g[1m])', one(A, 1)],
  ['changes(g[1m])', one(A, 3)],
  ['resets(c{job="b"}[1m])', one(B, 1)],
  // Subquery: g at 10..60 s (lookback carries 4 past 40 s): 3,2,5,4,4,4.
  ['max_over_time(g[1m:10s])', one(A, 5)],
  ['avg_over_time(g[1m:10s])', one(A, 22 / 6)],
  // Aggregations over c at 60 s: a = 60, b = 10.
  ['sum(c)', one({}, 70)],
  ['avg(c)', one({}, 35)],
  ['min(c)', one({}, 10)],
  ['max(c)', one({}, 60)],
  ['count(c)', one({}, 2)],
  ['stddev(c)', one({}, 25)],
  ['stdvar(c)', one({}, 625)],
  ['quantile(0.5, c)', one({}, 35)],
  ['sum by (job) (c)', { [L(A)]: 60, [L(B)]: 10 }],
  ['sum(c) by (job)', { [L(A)]: 60, [L(B)]: 10 }],
  ['sum without (job) (c)', one({}, 70)],
  ['count without () (c)', { [L(A)]: 1, [L(B)]: 1 }],
  ['topk(1, c)', one({ __name__: 'c', job: 'a' }, 60)],
  ['bottomk(1, c)', one({ __name__: 'c', job: 'b' }, 10)],
  ['topk(5, c)', { [L({ __name__: 'c', job: 'a' })]: 60, [L({ __name__: 'c', job: 'b' })]: 10 }],
  // Operators.
  ['c * 2', { [L(A)]: 120, [L(B)]: 20 }],
  ['100 - c', { [L(A)]: 40, [L(B)]: 90 }],
  ['-c{job="a"}', one(A, -60)],
  ['c > 20', one({ __name__: 'c', job: 'a' }, 60)],
  ['c > bool 20', { [L(A)]: 1, [L(B)]: 0 }],
  ['c == 10', one({ __name__: 'c', job: 'b' }, 10)],
  ['c / d', { [L(A)]: 12, [L(B)]: 5 }],
  ['c % d', { [L(A)]: 0, [L(B)]: 0 }],
  ['c - on(job) d', { [L(A)]: 55, [L(B)]: 8 }],
  ['c and d{job="a"}', one({ __name__: 'c', job: 'a' }, 60)],
  ['c unless d{job="a"}', one({ __name__: 'c', job: 'b' }, 10)],
  ['d or c', { [L({ __name__: 'd', job: 'a' })]: 5, [L({ __name__: 'd', job: 'b' })]: 2 }],
  ['2 ^ 3 + 10 % 3', 9],
  ['1 < bool 2', 1],
  // Functions of instant vectors.
  ['abs(g - 10)', one(A, 6)],
  ['ceil(g / 3)', one(A, 2)],
  ['floor(g / 3)', one(A, 1)],
  ['round(g / 3)', one(A, 1)],
  ['round(c{job="a"}, 25)', one(A, 50)],
  ['sqrt(c{job="b"} - 1)', one(B, 3)],
  ['exp(g - g)', one(A, 1)],
  ['ln(g - 3)', one(A, 0)],
  ['log2(g * 2)', one(A, 3)],
  ['log10(c{job="b"})', one(B, 1)],
  ['sgn(g - 5)', one(A, -1)],
  ['clamp_max(c, 20)', { [L(A)]: 20, [L(B)]: 10 }],
  ['clamp_min(c, 20)', { [L(A)]: 60, [L(B)]: 20 }],
  ['clamp(c, 15, 30)', { [L(A)]: 30, [L(B)]: 15 }],
  ['scalar(c{job="a"})', 60],
  ['scalar(c)', NaN], // more than one series
  ['vector(3)', one({}, 3)],
  ['time()', 60],
  // Classic buckets 1:2, 2:6, +Inf:8. φ=0.5: rank 4 in (1, 2], whose 4 observations start at 2: 1 + 1·(4−2)/4.
  ['histogram_quantile(0.5, h_bucket)', one({}, 1.5)],
  ['histogram_quantile(0.75, h_bucket)', one({}, 2)], // rank 6 = the top of (1, 2]
  ['histogram_quantile(0.99, h_bucket)', one({}, 2)], // in the +Inf bucket: the highest finite bound
  // ferrite histograms: 30 and 40 (bins [30,31) and [40,41)): the median is bin 1's lower 30 + 1/2 of its width.
  ['histogram_quantile(0.5, nh{x="2"})', one({ x: '2' }, 30.5)],
  // sum merges histograms: 20, 30, 40 → the median 30 + 0.5 (x="1" at 60 s holds 20).
  ['histogram_quantile(0.5, sum(nh))', one({}, 30.5)],
  // Over (0, 60]: x="1" merges 10 and 20 → median of {10, 20}: 10 + 1/2.
  ['histogram_quantile(0.5, sum_over_time(nh{x="1"}[1m]))', one({ x: '1' }, 10.5)],
  ['histogram_quantile(0.5, increase(nh{x="1"}[1m]))', one({ x: '1' }, 10.5)],
  ['histogram_quantile(0.5, sum(rate(nh[1m])))', one({}, 20.5)], // 10, 20, 30, 40: rank 2 → bin [20,21) + 1/2
  ['count_over_time(nh[1m])', { [L({ x: '1' })]: 2, [L({ x: '2' })]: 1 }],
  // Many-to-one matching: each c joins the d of its job (name dropped): 60 + 5, 10 + 2.
  ['c + on(job) group_left d', { [L(A)]: 65, [L(B)]: 12 }],
  // One-to-many: vector(1)'s empty signature is the "one" side for every d: 1 + 5, 1 + 2.
  ['vector(1) + on() group_right d', { [L(A)]: 6, [L(B)]: 3 }],
  // group_left(team) copies team from the matched info series.
  ['c * on(job) group_left(team) info', { [L({ job: 'a', team: 'x' })]: 60, [L({ job: 'b', team: 'y' })]: 10 }],
  // A filtering comparison keeps the left value and the left labels (name included).
  ['c > on(job) group_left d', { [L({ __name__: 'c', job: 'a' })]: 60, [L({ __name__: 'c', job: 'b' })]: 10 }],
  ['count_values("v", d)', { [L({ v: '5' })]: 1, [L({ v: '2' })]: 1 }],
  ['count_values("v", c - c)', one({ v: '0' }, 2)],
  ['count_values by (job) ("v", d)', { [L({ job: 'a', v: '5' })]: 1, [L({ job: 'b', v: '2' })]: 1 }],
  // predict_linear over (10,3) (20,2) (30,5) (40,4): slope 0.06; intercept at t = 60 s: mean 3.5 − 0.06·(−35) = 5.6; + 0.06·60.
  ['predict_linear(g[1m], 60)', one(A, 9.2)],
  // Double exponential smoothing, sf = tf = 0.5 over 3, 2, 5, 4: smoothed 2, 3, 3.5 (trends −1, −1, 0).
  ['holt_winters(g[1m], 0.5, 0.5)', one(A, 3.5)],
  ['double_exponential_smoothing(g[1m], 0.5, 0.5)', one(A, 3.5)],
  ['label_replace(d, "x", "$1-y", "job", "(.*)")', { [L({ __name__: 'd', job: 'a', x: 'a-y' })]: 5, [L({ __name__: 'd', job: 'b', x: 'b-y' })]: 2 }],
  ['label_replace(d, "job", "", "job", "a")', { [L({ __name__: 'd' })]: 5, [L({ __name__: 'd', job: 'b' })]: 2 }], // "" removes the label
  ['label_join(d, "x", "-", "job", "job")', { [L({ __name__: 'd', job: 'a', x: 'a-a' })]: 5, [L({ __name__: 'd', job: 'b', x: 'b-b' })]: 2 }],
  ['absent(nothing{job="z", x=~"y"})', one({ job: 'z' }, 1)], // only = matchers give labels
  ['absent(c)', {}],
  ['absent_over_time(nothing[1m])', one({}, 1)],
  ['absent_over_time(g[1m])', {}],
  ['timestamp(g)', one(A, 40)], // the sample's own time (40 s), not the evaluation time
  ['timestamp(g + 1)', one(A, 60)], // of an expression: the evaluation time
  ['deg(vector(pi()))', one({}, 180)],
  ['sin(d - d)', { [L(A)]: 0, [L(B)]: 0 }],
  ['year(vector(0))', one({}, 1970)],
  ['day_of_week(vector(3 * 86400))', one({}, 0)], // 1970-01-04 was a Sunday
  ['days_in_month(vector(40 * 86400))', one({}, 28)], // February 1970
  ['hour()', one({}, 0)], // of the evaluation time, 60 s past midnight
  ['minute()', one({}, 1)],
  ['limitk(1, c)', one({ __name__: 'c', job: 'a' }, 60)], // the first in label order
  ['limit_ratio(1, c)', { [L({ __name__: 'c', job: 'a' })]: 60, [L({ __name__: 'c', job: 'b' })]: 10 }],
  ['limit_ratio(-1, c)', { [L({ __name__: 'c', job: 'a' })]: 60, [L({ __name__: 'c', job: 'b' })]: 10 }],
  ['mad_over_time(g[1m])', one(A, 1)], // 2,3,4,5: median 3.5, deviations .5 1.5 1.5 .5 → 1
  ['first_over_time(g[1m])', one({ __name__: 'g', job: 'a' }, 3)],
  ['ts_of_max_over_time(g[1m])', one(A, 30)],
  ['ts_of_last_over_time(g[1m])', one(A, 40)],
  ['histogram_count(nh{x="2"})', one({ x: '2' }, 2)],
  ['histogram_fraction(0, 35, nh{x="2"})', one({ x: '2' }, 0.5)], // 30 below 35, 40 above
  // Classic buckets 1:2, 2:6, +Inf:8: rank at 1.5 = 2 + 4·0.5 = 4 of 8.
  ['histogram_fraction(0, 1.5, h_bucket)', one({}, 0.5)],
  ['clamp(c, 30, 15)', {}], // min above max: nothing
  ['topk by (job) (1, c)', { [L({ __name__: 'c', job: 'a' })]: 60, [L({ __name__: 'c', job: 'b' })]: 10 }],
  ['c offset 10s + on(job) group_left c', { [L(A)]: 110, [L(B)]: 15 }], // 50 + 60, 5 + 10
  ['sum(c @ 30)', one({}, 45)], // 30 + 15
  ['max_over_time(c[30s:10s] offset 20s)', { [L(A)]: 40, [L(B)]: 15 }], // steps 20, 30, 40: a 20..40, b 10, 15, 0
];

for (const [query, expected, time] of TABLE) {
  test(`${query}${time === undefined ? '' : ` @ ${time}s`}`, async (t) => {
    const got = await answer(query, time);
    if (typeof expected === 'number') {
      t.is(typeof got, 'number');
      if (Number.isNaN(expected)) t.true(Number.isNaN(got as number));
      else t.true(Math.abs((got as number) - expected) < 1e-9, `got ${got}, expected ${expected}`);
      return;
    }
    t.deepEqual(Object.keys(got as Record<string, number>).sort(), Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected)) t.true(Math.abs((got as Record<string, number>)[k]! - v) < 1e-9, `${k}: got ${(got as Record<string, number>)[k]}, expected ${v}`);
  });
}

test('a range query: rate(c{job="a"}[30s]) every 30 s is 1 at each step', async (t) => {
  const v = await evaluate(parsePromQL('rate(c{job="a"}[30s])'), { startMs: 30 * S, stepMs: 30 * S, count: 2 }, { source, lookbackMs: 300 * S, queryStartMs: 30 * S, queryEndMs: 60 * S });
  t.is(v.kind, 'vector');
  t.deepEqual((v as Extract<Value, { kind: 'vector' }>).series.map((s) => s.values), [[1, 1]]);
});

test('a range query of 500k steps evaluates (selectors and ranges no longer spread the grid into call arguments)', async (t) => {
  const count = 500_000;
  for (const query of ['g', 'rate(c{job="a"}[30s])']) {
    const v = await evaluate(parsePromQL(query), { startMs: 0, stepMs: 1, count }, { source, lookbackMs: 300 * S, queryStartMs: 0, queryEndMs: count });
    t.is(v.kind, 'vector', query);
  }
});

test('sort, sort_desc and sort_by_label order an instant vector', async (t) => {
  const order = async (q: string) => ((await at(q)) as Extract<Value, { kind: 'vector' }>).series.map((s) => s.labels.job);
  t.deepEqual(await order('sort(c)'), ['b', 'a']); // 10, 60
  t.deepEqual(await order('sort_desc(c)'), ['a', 'b']);
  t.deepEqual(await order('sort_by_label_desc(d, "job")'), ['b', 'a']);
  t.deepEqual(await order('sort_by_label(d, "job")'), ['a', 'b']);
});

const ERRORS: [string, RegExp][] = [
  ['info(c)', /function "info" is not supported by ferrite/],
  ['foo(g)', /unknown function with name "foo"/],
  ['sum(', /parse error/],
  ['sum(c) @ 30', /@ modifier must be preceded by/],
  ['sum(1)', /expected type instant vector in aggregation expression, got scalar/],
  ['topk("a", c)', /expected type scalar in aggregation parameter, got string/],
  ['count_values(1, c)', /expected type string in aggregation parameter, got scalar/],
  ['c and on(job) group_left d', /no grouping allowed for "and" operation/],
  ['c * on() group_left d', /found duplicate series for the match group/], // both d have the empty signature
  ['c + on(job) group_left(job) d', /must not occur in ON and GROUP clause/],
  ['label_replace(c, "x", "y", "job", "(")', /invalid regular expression in label_replace/],
  ['holt_winters(g[1m], 1, 0.5)', /invalid smoothing factor/],
  ['round(c, 1, 2)', /expected at most 2 argument/],
  ['c{__name__="d"}', /metric name must not be set twice/],
  ['{job=~"a?"}', /at least one non-empty matcher/],
  ['rate(c)', /expected type range vector in call to function "rate", got instant vector/],
  ['c{job=~"("}', /invalid regular expression/],
  ['{job=""}', /at least one non-empty matcher/],
  ['1 > 2', /BOOL/],
  ['c + c{job="a"} * 0 + on() d', /many-to-many|duplicate/],
  ['c + ignoring(job) d{job="a"}', /many-to-one|duplicate/], // both c series have the signature {}
];

for (const [query, error] of ERRORS) {
  test(`error: ${query}`, async (t) => {
    await t.throwsAsync(() => at(query), { instanceOf: Error, message: error });
  });
}

test('errors are PromQLErrors (Prometheus bad_data)', async (t) => {
  const e = await t.throwsAsync(() => at('info(g)'));
  t.true(e instanceof PromQLError);
});
