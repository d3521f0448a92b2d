// The reference's global functions against a real node: each expected value is worked out by
// hand from the function's definition and the fixture's tables (cpu a = 1…6, b = 10, 20, –,
// 40, 50, 60, c = 5…; requests a = 100, 160, 220, 10, 70, 130; flag = 0, 1, 1, 1, 0, 1;
// phase = 1, 1, 2, 2, 2, 3), one slot per minute.
import test from 'ava';
import { at, rounded, T0, useCaqlNode } from './fixture.js';

const caql = useCaqlNode(test);
const A = 'find("cpu", "and(host:a)")';
const B = 'find("cpu", "and(host:b)")';

test('count and is_missing', async (t) => {
  // Streams with a value per slot: b is missing at minute 2.
  t.deepEqual(await caql.values('find("cpu") | count()'), [[3, 3, 2, 3, 3, 3]]);
  t.deepEqual(await caql.values(`${B} | is_missing()`), [[0, 0, 1, 0, 0, 0]]);
});

test('delay shifts later, one output per delay', async (t) => {
  t.deepEqual(await caql.values(`${A} | delay(2m)`), [[null, null, 1, 2, 3, 4]]);
  t.deepEqual(await caql.values(`${A} | delay(1m, 2m)`), [
    [null, 1, 2, 3, 4, 5],
    [null, null, 1, 2, 3, 4],
  ]);
});

test('diff, derivative and counter', async (t) => {
  // diff: v(t) − v(t−1); minute −1 has no sample, b's minute 2 is missing.
  t.deepEqual(await caql.values(`${A} | diff()`), [[null, 1, 1, 1, 1, 1]]);
  t.deepEqual(await caql.values(`${B} | diff()`), [[null, 10, null, null, 10, 10]]);
  // derivative: diff per second (60 s slots).
  t.deepEqual(rounded(await caql.values(`${B} | derivative()`)), rounded([[null, 10 / 60, null, null, 10 / 60, 10 / 60]]));
  // counter: +60 a minute is 1/s; the drop 220 → 10 is a reset, no rate.
  t.deepEqual(await caql.values('find("requests") | counter()'), [[null, 1, 1, null, 1, 1]]);
});

test('pass concatenates its sources; if chooses per slot; coalesce takes the first value', async (t) => {
  t.deepEqual(await caql.values(`pass{${A}, 7}`), [
    [1, 2, 3, 4, 5, 6],
    [7, 7, 7, 7, 7, 7],
  ]);
  // flag 0, 1, 1, 1, 0, 1 → a where non-zero, else 0.
  t.deepEqual(await caql.values(`if{find("flag"), ${A}, 0}`), [[0, 2, 3, 4, 0, 6]]);
  t.deepEqual(await caql.values(`coalesce{${B}, find("cpu", "and(host:c)")}`), [[10, 20, 5, 40, 50, 60]]);
});

test('wait(t) is 1 once the value has been non-zero for t', async (t) => {
  // Runs of non-zero flag: –, 1, 2, 3, –, 1 slots; 2m needs two.
  t.deepEqual(await caql.values('find("flag") | wait(2m)'), [[0, 0, 1, 1, 0, 0]]);
  t.deepEqual(await caql.values('find("flag") | wait(1m)'), [[0, 1, 1, 1, 0, 1]]);
});

test('normalize maps the view linearly onto [0, scale]', async (t) => {
  // a: (v − 1)/(6 − 1).
  t.deepEqual(rounded(await caql.values(`${A} | normalize()`)), [[0, 0.2, 0.4, 0.6, 0.8, 1]]);
  t.deepEqual(rounded(await caql.values(`${A} | normalize(10)`)), [[0, 2, 4, 6, 8, 10]]);
  // b: (v − 10)/50; its missing minute takes the default.
  t.deepEqual(rounded(await caql.values(`${B} | normalize(default=-1)`)), [[0, 0.2, -1, 0.6, 0.8, 1]]);
});

test('randomwalk stays in bounds, moves at most `change` a slot, repeats with a seed', async (t) => {
  const [walk] = (await caql.values('randomwalk(10, 0, 1, seed=7)')) as number[][];
  t.deepEqual(await caql.values('randomwalk(10, 0, 1, seed=7)'), [walk]);
  t.true(walk!.every((v) => v >= 0 && v <= 10));
  // It starts midway (5) and each step is at most 1.
  [5, ...walk!].slice(0, -1).forEach((v, i) => t.true(Math.abs(walk![i]! - v) <= 1));
});

test('top and bottom rank streams over the view by mean, max or min', async (t) => {
  // Means a 3.5, b 36, c 5; maxima 6, 60, 5; minima 1, 10, 5.
  t.deepEqual(await caql.labels('find("cpu") | top(1) | label("%tv{host}")'), ['b']);
  t.deepEqual(await caql.labels('find("cpu") | bottom(2, method="max") | label("%tv{host}")'), ['c', 'a']);
  t.deepEqual(await caql.labels('find("cpu") | top(2, method="min") | label("%tv{host}")'), ['b', 'c']);
});

test('label formats: %d %n %cn %t{} %tv{} {*} and the varying-tag forms', async (t) => {
  t.deepEqual(await caql.labels('find("cpu") | label("%d %n %tv{host}")'), ['0 cpu a', '1 cpu b', '2 cpu c']);
  t.deepEqual(await caql.labels('find("cpu") | label("%t{dc}", "last")'), ['dc:east', 'last', 'last']);
  t.deepEqual(await caql.labels(`${A} | label("%cn")`), ['cpu|ST[dc:east,host:a]']);
  t.deepEqual(await caql.labels(`${A} | label("%n [%t{*}]")`), ['cpu [dc:east,host:a]']);
  // Within dc:east only the host varies; %-t and %t- are the same.
  t.deepEqual(await caql.labels('find("cpu", "and(dc:east)") | label("%-t{*}")'), ['host:a', 'host:b']);
  t.deepEqual(await caql.labels('find("cpu", "and(dc:east)") | label("%tv-{*}")'), ['a', 'b']);
  t.deepEqual(await caql.labels('find("cpu") | label("%-tv{*}")'), ['east,a', 'east,b', 'west,c']);
  // label:name rewrites %cn, and so %n.
  t.deepEqual(await caql.labels(`${A} | label:name("load|ST[host:x]") | label("%n / %cn")`), ['load / load|ST[host:x]']);
});

test('integrate sums per-minute values; integrate:while restarts when the condition breaks', async (t) => {
  t.deepEqual(await caql.values(`${A} | integrate()`), [[1, 3, 6, 10, 15, 21]]);
  t.deepEqual(await caql.values(`${A} | integrate(base=100)`), [[101, 103, 106, 110, 115, 121]]);
  // At 2-minute slots each average counts for 2 minutes: (1+2)/2·2 = 3, then +7, +11.
  t.deepEqual(await caql.values(`${A} | integrate()`, { period: 120 }), [[3, 10, 21]]);
  // phase 1, 1, 2, 2, 2, 3 changes at minutes 2 and 5: sums restart there.
  t.deepEqual(await caql.values(`integrate:while{find("phase"), ${A}}`), [[1, 3, 3, 7, 12, 6]]);
  // rising holds at minutes 2 and 5 only, so every other minute restarts.
  t.deepEqual(await caql.values(`integrate:while(condition="rising"){find("phase"), ${A}}`), [[1, 2, 5, 4, 5, 11]]);
});

test('fill and fill:forward', async (t) => {
  t.deepEqual(await caql.values(`${B} | fill(0)`), [[10, 20, 0, 40, 50, 60]]);
  t.deepEqual(await caql.values(`${B} | fill:forward()`), [[10, 20, 20, 40, 50, 60]]);
  // Delayed b is –, 10, 20, –, 40, 50: the gap is one minute, within the limit.
  t.deepEqual(await caql.values(`${B} | delay(1m) | fill:forward(limit=1m)`), [[null, 10, 20, 20, 40, 50]]);
});

test('metriccluster selects nothing and says so', async (t) => {
  const r = await caql.df4('metriccluster(5)');
  t.deepEqual(r.meta, []);
  t.regex(r.head.warning![0]!, /metriccluster\(5\) is deprecated and selects nothing/);
});

/** steady: 10 a minute from an hour before T0, 50 in minutes 15–19; 5-minute rollups. */
test('anomaly_detection scores the residual of the model forecast, as the README states', async (t) => {
  const view = { start: T0, end: at(40), period: 300 };
  // Constant model: rollups 10 … 10, 50 (slot 3), 10 …. Residuals are 0 until the 50, where
  // σ = 0 makes z = ∞ (score 100) for the three slots whose 15-minute mean includes it. Then
  // level 14 → 13.6 → 13.24 → 12.916, σ 4 → 4 → 3.96 → 3.888, z 1, 0.9, 3.24/3.96, 2.916/3.888;
  // slot 6: mean(1, 0.9, 0.8181…) / k=3 → 30.2020…; slot 7: mean(0.9, 0.8181…, 0.75)/3 → 27.4242….
  const constant = [0, 0, 0, 100, 100, 100, 100 * ((1 + 0.9 + 3.24 / 3.96) / 3 / 3), 100 * ((0.9 + 3.24 / 3.96 + 2.916 / 3.888) / 3 / 3)];
  t.deepEqual(rounded(await caql.values('find("steady") | anomaly_detection(prefill_period=1h)', view)), rounded([constant]));
  // Sensitivity 100: any deviation is an anomaly; 0: none ever is.
  t.deepEqual(await caql.values('find("steady") | anomaly_detection(100, prefill_period=1h)', view), [[0, 0, 0, 100, 100, 100, 100, 100]]);
  t.deepEqual(await caql.values('find("steady") | anomaly_detection(0, prefill_period=1h)', view), [[0, 0, 0, 0, 0, 0, 0, 0]]);
  // Trending and periodic models forecast 10 for a flat history too: the same until the 50.
  for (const model of ['model="trending"', 'model="periodic", model_period=10m']) {
    const [scores] = (await caql.values(`find("steady") | anomaly_detection(${model}, prefill_period=1h)`, view)) as number[][];
    t.deepEqual(scores!.slice(0, 4), [0, 0, 0, 100], model);
  }
  // 10-minute slots show the highest score inside; 1-minute slots the score of their rollup.
  t.deepEqual(rounded(await caql.values('find("steady") | anomaly_detection(prefill_period=1h)', { ...view, period: 600 })), rounded([[0, 100, 100, constant[6]!]]));
  t.deepEqual(await caql.values('find("steady") | anomaly_detection(prefill_period=1h)', { start: at(14), end: at(16), period: 60 }), [[0, 100]]);
});
