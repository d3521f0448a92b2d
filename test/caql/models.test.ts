// Packages forecasting and outlier against a real node, expected values worked out by hand
// from the definitions the README states: trend = 2·minute + 1 (from minute −10), season =
// 1, 5, 3 repeating (from minute −3), cpu a = 1…6, b = 10, 20, –, 40, 50, 60, c = 5….
import test from 'ava';
import { rounded, useCaqlNode } from './fixture.js';

const caql = useCaqlNode(test);
const A = 'find("cpu", "and(host:a)")';
const B = 'find("cpu", "and(host:b)")';
const C = 'find("cpu", "and(host:c)")';

const near = async (query: string, expected: (number | null)[][]): Promise<[unknown, unknown]> => [rounded(await caql.values(query)), rounded(expected)];

test('forecasting:ewma smooths s ← α·x + (1 − α)·s; fill decides the gaps', async (t) => {
  // trend from minute 0 (1, 3, 5, …), α = ½: 1, 2, 3.5, 5.25, 7.125, 9.0625.
  t.deepEqual(await caql.values('find("trend") | forecasting:ewma(0.5)'), [[1, 2, 3.5, 5.25, 7.125, 9.0625]]);
  // b: 10, 15, (gap: the forecast 15), 27.5, 38.75, 49.375.
  t.deepEqual(await caql.values(`${B} | forecasting:ewma(0.5)`), [[10, 15, 15, 27.5, 38.75, 49.375]]);
  t.deepEqual(await caql.values(`${B} | forecasting:ewma(0.5, fill=2)`), [[10, 20, 15, 40, 50, 60]]);
  t.deepEqual(await caql.values(`${B} | forecasting:ewma(0.5, 0)`), [[10, 15, null, 27.5, 38.75, 49.375]]);
  t.regex(await caql.error(`${B} | forecasting:ewma(1.5)`), /forecasting:ewma: alpha must be in \[0, 1\], got 1.5/);
  t.regex(await caql.error(`${B} | forecasting:ewma(0.5, fill=3)`), /fill must be 0, 1 or 2, got 3/);
});

test('forecasting:dewma follows level and trend', async (t) => {
  // α = β = ½ on 1, 3, 5, 7, 9, 11 from ℓ = 1, b = 0:
  //   ℓ 2, 3.75, 5.9375, 8.296875, 10.65234375; b 0.5, 1.125, 1.65625, 2.0078125, 2.181640625.
  const level = [1, 2, 3.75, 5.9375, 8.296875, 10.65234375];
  const trend = [0, 0.5, 1.125, 1.65625, 2.0078125, 2.181640625];
  t.deepEqual(await caql.values('find("trend") | forecasting:dewma(0.5, 0.5)'), [level]);
  // Two minutes ahead: ℓ + 2·b.
  t.deepEqual(await caql.values('find("trend") | forecasting:dewma(0.5, 0.5, forecast_duration=2m)'), [level.map((l, i) => l + 2 * trend[i]!)]);
});

test('forecasting:holt_winters fits a season it has seen before the view', async (t) => {
  // Season 1, 5, 3 (3 minutes): the minutes before the view give ℓ = 3, b = 0, s = −2, 2, 0 and
  // the data then fits exactly, so the estimate is the data, and one minute ahead the next value.
  t.deepEqual(await caql.values('find("season") | forecasting:holt_winters(0.5, 0.5, 0.5, period=3m)'), [[1, 5, 3, 1, 5, 3]]);
  t.deepEqual(await caql.values('find("season") | forecasting:holt_winters(0.5, 0.5, 0.5, 1m, period=3m)'), [[5, 3, 1, 5, 3, 1]]);
  t.regex(await caql.error('find("season") | forecasting:holt_winters(0.5, 0.5, 0.5, period=1m)'), /the season \(period=60 s\) must span at least two periods of 60 s/);
});

test('forecasting:regression, slope and auto extrapolate a line fitted to the recent window', async (t) => {
  // trend is exactly 2·m + 1, so five minutes ahead is 2·(m + 5) + 1.
  t.deepEqual(await caql.values('find("trend") | forecasting:regression(5m, 10m)'), [[11, 13, 15, 17, 19, 21]]);
  // a over the last 3 minutes: one point at minute 0 (no line), then y = m + 1.
  t.deepEqual(await caql.values(`${A} | forecasting:regression(1m, 3m)`), [[null, 3, 4, 5, 6, 7]]);
  // Refitted every 2 minutes (at minutes 0, 2, 4), the line is reused in between.
  t.deepEqual(await caql.values(`${A} | forecasting:regression(1m, 3m, step=2m)`), [[null, null, 4, 5, 6, 7]]);
  // exp through two points: a(t)²/a(t − 1).
  t.deepEqual(...(await near(`${A} | forecasting:regression(1m, 2m, model="exp")`, [[null, 4, 4.5, 16 / 3, 6.25, 7.2]])));
  t.deepEqual(...(await near(`${A} | forecasting:slope(1m, 2m, model="exp")`, [[null, 4, 4.5, 16 / 3, 6.25, 7.2]])));
  // slope: the line through the window's first and last values, two minutes ahead.
  t.deepEqual(await caql.values(`${A} | forecasting:slope(2m, 3m)`), [[null, 4, 5, 6, 7, 8]]);
  // auto: a linear regression over max(d, 10m).
  t.deepEqual(await caql.values(`${A} | forecasting:auto(1m)`), [[null, 3, 4, 5, 6, 7]]);
  t.regex(await caql.error(`${A} | forecasting:regression(1m, model="cubic")`), /model must be linear or exp, not 'cubic'/);
});

test('outlier:std_score: (y − mean of the others) / NORM', async (t) => {
  // y = a; the others b, c have means 7.5, 12.5, 5 (b missing), 22.5, 27.5, 32.5.
  const rest = `pass{${A}, ${B}, ${C}}`;
  t.deepEqual(await caql.values(`${rest} | outlier:std_score()`), [[-6.5, -10.5, -2, -18.5, -22.5, -26.5]]);
  t.deepEqual(await caql.values(`${rest} | outlier:std_score(show_model=1)`), [[7.5, 12.5, 5, 22.5, 27.5, 32.5]]);
  // NORM = their population standard deviation |b − c|/2 (0 with one value: no score) …
  t.deepEqual(...(await near(`${rest} | outlier:std_score(normalize=1)`, [[-6.5 / 2.5, -10.5 / 7.5, null, -18.5 / 17.5, -1, -26.5 / 27.5]])));
  // … or their mean.
  t.deepEqual(...(await near(`${rest} | outlier:std_score(normalize=2)`, [[-6.5 / 7.5, -0.84, -0.4, -18.5 / 22.5, -22.5 / 27.5, -26.5 / 32.5]])));
  // trim=1 against a, b, c leaves the middle value: 5, 5, –, 5, 5, 6.
  t.deepEqual(await caql.values(`pass{${A}, find("cpu")} | outlier:std_score(trim=1)`), [[-4, -3, null, -1, 0, 0]]);
});

test('outlier:cluster_score: each stream against the mean of the others', async (t) => {
  t.deepEqual(await caql.values('find("cpu") | outlier:cluster_score()'), [
    [6.5, 10.5, 2, 18.5, 22.5, 26.5],
    [7, 16.5, null, 35.5, 45, 54.5],
    [0.5, 6, 2, 17, 22.5, 28],
  ]);
});

test('outlier:count and normal_range: distance from the median in robust deviations', async (t) => {
  // Per slot: values, median, MAD: [1,10,5] 5 4; [2,20,5] 5 3; [3,5] 4 1; [4,40,5] 5 1;
  // [5,50,5] 5 0; [6,60,5] 6 1. σ̂ = 1.4826·MAD, k = 3 at sensitivity 50.
  t.deepEqual(await caql.values('find("cpu") | outlier:count()'), [[0, 1, 0, 1, 1, 1]]);
  t.deepEqual(await caql.values('find("cpu") | outlier:count(100)'), [[2, 2, 2, 2, 1, 2]], 'anything off the median');
  t.deepEqual(await caql.values('find("cpu") | outlier:count(sensitivity=0)'), [[0, 0, 0, 0, 0, 0]]);
  const spread = [4, 3, 1, 1, 0, 1].map((mad) => 3 * 1.4826 * mad);
  const median = [5, 5, 4, 5, 5, 6];
  t.deepEqual(...(await near('find("cpu") | outlier:normal_range()', [median.map((m, i) => m - spread[i]!), median.map((m, i) => m + spread[i]!)])));
  t.deepEqual(await caql.labels('find("cpu") | outlier:normal_range()'), ['normal_range lower', 'normal_range upper']);
  t.regex(await caql.error('find("cpu") | outlier:count(101)'), /outlier:count: sensitivity must be between 0 and 100, got 101/);
});
