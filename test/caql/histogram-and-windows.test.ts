// Packages histogram, window, rolling and aggregate against a real node, expected values worked
// out by hand from the reference's definitions and the fixture: latency holds samples
// [1, 2], [3], –, [4, 4], [5], [6] and lat2 [1], [1], [1], [4], [1], [1] in minutes 0–5; cpu
// a = 1…6, b = 10, 20, –, 40, 50, 60; flag = 0, 1, 1, 1, 0, 1; requests = 100, 160, 220, 10,
// 70, 130. A sample v lands in the log-linear bin [v, v + 0.1) (two significant digits), so
// sums and means use the bin's harmonic midpoint lo + w·lo/(lo + hi) (`mid` below), and
// percentiles the histogram's quantile walk: the k-th of n samples in [lo, lo + w) sits at
// lo + k/(n + 1)·w.
import test from 'ava';
import { at, rounded, T0, useCaqlNode } from './fixture.js';

const caql = useCaqlNode(test);
const A = 'find("cpu", "and(host:a)")';
const B = 'find("cpu", "and(host:b)")';
const LAT = 'find:histogram("latency")';

const near = async (query: string, expected: (number | null)[][], params?: Record<string, unknown>): Promise<[unknown, unknown]> => [rounded(await caql.values(query, params)), rounded(expected)];
/** The midpoint of the bin [v, v + 0.1). */
const mid = (v: number) => v + (0.1 * v) / (2 * v + 0.1);

test('histogram: build, merge, subtract, random', async (t) => {
  t.deepEqual(await caql.values('histogram{find("cpu")} | histogram:count()'), [[3, 3, 2, 3, 3, 3]]);
  t.deepEqual(await caql.values('find("cpu") | histogram:create() | histogram:count_bin(5)'), [[1, 1, 1, 1, 2, 1]]);
  t.deepEqual(await caql.values(`histogram:merge{${LAT}, find:histogram("lat2")} | histogram:count()`), [[3, 2, 1, 3, 2, 2]]);
  // latency minus lat2: the 1s and one of the 4s go; a bin absent from the first stays absent.
  t.deepEqual(await caql.values(`histogram:subtract{${LAT}, find:histogram("lat2")} | histogram:count()`), [[1, 1, null, 1, 1, 1]]);
  t.deepEqual(await caql.values('histogram:random(samples=100, seed=1) | histogram:count()'), [[100, 100, 100, 100, 100, 100]]);
  // A source gives each slot's number of samples.
  t.deepEqual(await caql.values(`histogram:random{${B}} | histogram:count()`), [[10, 20, null, 40, 50, 60]]);
  // Uniform draws in [0, 1) all fall at or below the bin of 0.99.
  t.deepEqual(await caql.values('histogram:random(method="uniform", samples=50, seed=3) | histogram:count_below(0.99)'), [[50, 50, 50, 50, 50, 50]]);
  t.deepEqual(
    await caql.values('histogram:random(samples=20, seed=9) | histogram:mean()'),
    await caql.values('histogram:random(samples=20, seed=9) | histogram:mean()'),
    'a seed repeats',
  );
  t.regex(await caql.error('histogram:random(method="zipf")'), /histogram:random: method must be one of normal, lognormal, uniform, exponential, not 'zipf'/);
});

test('histogram: counts and rates', async (t) => {
  t.deepEqual(await caql.values(`${LAT} | histogram:count()`), [[2, 1, null, 2, 1, 1]]);
  t.deepEqual(...(await near(`${LAT} | histogram:rate()`, [[2 / 60, 1 / 60, null, 2 / 60, 1 / 60, 1 / 60]])));
  t.deepEqual(await caql.values(`${LAT} | histogram:rate(period=1m)`), [[2, 1, null, 2, 1, 1]]);
  // The reference: "60 returns a per-minute rate".
  t.deepEqual(await caql.values(`${LAT} | histogram:rate(60)`), [[2, 1, null, 2, 1, 1]]);
  t.deepEqual(await caql.values(`${LAT} | histogram:count_above(4)`), [[0, 0, null, 2, 1, 1]]);
  t.deepEqual(await caql.values(`${LAT} | histogram:count_below(2)`), [[2, 0, null, 0, 0, 0]]);
  t.deepEqual(await caql.values(`${LAT} | histogram:count_above(4, 6)`), [
    [0, 0, null, 2, 1, 1],
    [0, 0, null, 0, 0, 1],
  ]);
  t.deepEqual(await caql.labels(`${LAT} | histogram:count_above(4, 6)`), ['latency count_above(4)', 'latency count_above(6)']);
  // lower exclusive, upper inclusive: (2, 5].
  t.deepEqual(await caql.values(`${LAT} | histogram:count_between(2, 5)`), [[0, 1, null, 2, 1, 0]]);
  t.deepEqual(await caql.values(`${LAT} | histogram:count_bin(4)`), [[0, 0, null, 2, 0, 0]]);
  t.deepEqual(...(await near(`${LAT} | histogram:rate_above(4)`, [[0, 0, null, 2 / 60, 1 / 60, 1 / 60]])));
  t.deepEqual(await caql.values(`${LAT} | histogram:rate_above(4, period=1m)`), [[0, 0, null, 2, 1, 1]]);
  t.deepEqual(await caql.values(`${LAT} | histogram:rate_below(2, period=1m)`), [[2, 0, null, 0, 0, 0]]);
  t.deepEqual(...(await near(`${LAT} | histogram:rate_bin(4)`, [[0, 0, null, 2 / 60, 0, 0]])));
  t.deepEqual(await caql.values(`${LAT} | histogram:ratio_above(4)`), [[0, 0, null, 1, 1, 1]]);
  t.deepEqual(await caql.values(`${LAT} | histogram:ratio_below(2)`), [[1, 0, null, 0, 0, 0]]);
  t.deepEqual(await caql.values(`${LAT} | histogram:ratio_between(2, 5)`), [[0, 1, null, 1, 1, 0]]);
  // Below 2: all of bin [1, 1.1) and none of [2, 2.1) → 50 %; below 4.05: half of [4, 4.1).
  t.deepEqual(await caql.values(`${LAT} | histogram:inverse_percentile(2)`), [[50, 0, null, 0, 0, 0]]);
  t.deepEqual(await caql.values(`${LAT} | histogram:inverse_percentile(4.05)`), [[100, 100, null, 50, 0, 0]]);
});

test('histogram: statistics', async (t) => {
  // Minute 0 holds one sample in the bins of 1 and 2, minute 3 two in the bin of 4.
  t.deepEqual(...(await near(`${LAT} | histogram:sum()`, [[mid(1) + mid(2), mid(3), null, 2 * mid(4), mid(5), mid(6)]])));
  t.deepEqual(...(await near(`${LAT} | histogram:mean()`, [[(mid(1) + mid(2)) / 2, mid(3), null, mid(4), mid(5), mid(6)]])));
  // Population standard deviation of two values: half their distance.
  t.deepEqual(...(await near(`${LAT} | histogram:stddev()`, [[(mid(2) - mid(1)) / 2, 0, null, 0, 0, 0]])));
  const view = { end: at(4) };
  // Minute 0: one sample per bin (1 + ½·0.1, 2 + ½·0.1); minute 3: two in [4, 4.1) at 4 + ⅓·0.1 and 4 + ⅔·0.1.
  t.deepEqual(...(await near(`${LAT} | histogram:min()`, [[1.05, 3.05, null, 4 + 0.1 / 3]], view)));
  t.deepEqual(...(await near(`${LAT} | histogram:max()`, [[2.05, 3.05, null, 4 + 0.2 / 3]], view)));
  t.deepEqual(...(await near(`${LAT} | histogram:median()`, [[1.05, 3.05, null, 4 + 0.1 / 3]], view)));
  t.deepEqual(...(await near(`${LAT} | histogram:percentile(50, 100)`, [[1.05, 3.05, null, 4 + 0.1 / 3], [2.05, 3.05, null, 4 + 0.2 / 3]], view)));
  t.deepEqual(await caql.labels(`${LAT} | histogram:percentile(50, 99)`), ['latency p50', 'latency p99']);
  // IQR: 75th − 25th percentile.
  t.deepEqual(...(await near(`${LAT} | histogram:IQR()`, [[1, 0, null, 0.1 / 3]], view)));
  t.deepEqual(...(await near(`${LAT} | histogram:IQR(100)`, [[1, 0, null, 0.1 / 3]], view)));
});

test('window: tumbling windows aligned to the epoch, shown at their start', async (t) => {
  const rows: [string, (number | null)[]][] = [
    [`${A} | window:sum(3m)`, [6, 6, 6, 15, 15, 15]],
    [`${A} | window:mean(3m)`, [2, 2, 2, 5, 5, 5]],
    [`${B} | window:count(3m)`, [2, 2, 2, 3, 3, 3]],
    [`${B} | window:max(2m)`, [20, 20, 40, 40, 60, 60]],
    [`${B} | window:min(2m)`, [10, 10, 40, 40, 50, 50]],
    [`${A} | window:stddev(2m)`, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]],
    [`${A} | window:popvar(2m)`, [0.25, 0.25, 0.25, 0.25, 0.25, 0.25]],
    [`${A} | window:first(3m)`, [1, 1, 1, 4, 4, 4]],
    [`${A} | window:last(3m)`, [3, 3, 3, 6, 6, 6]],
    [`${A} | window:delta(3m)`, [2, 2, 2, 2, 2, 2]],
    // flag [0, 1, 1] changes once, [1, 0, 1] twice.
    ['find("flag") | window:changes(3m)', [1, 1, 1, 2, 2, 2]],
    // requests 100, 160, 220 | 10, 70, 130: one reset in six minutes; increases 60 + 60 + 10 + 60 + 60.
    ['find("requests") | window:resets(3m)', [0, 0, 0, 0, 0, 0]],
    ['find("requests") | window:resets(6m)', [1, 1, 1, 1, 1, 1]],
    ['find("requests") | window:increase(6m)', [250, 250, 250, 250, 250, 250]],
    [`${B} | window:absent(1m)`, [null, null, 1, null, null, null]],
    [`${B} | window:present(1m)`, [1, 1, null, 1, 1, 1]],
    [`${A} | window:percentile(3m, 50)`, [2, 2, 2, 5, 5, 5]],
    [`${A} | window:histogram(3m) | histogram:count()`, [3, 3, 3, 3, 3, 3]],
    [`${LAT} | window:merge(2m) | histogram:count()`, [3, 3, 2, 2, 2, 2]],
  ];
  for (const [q, expected] of rows) t.deepEqual(await caql.values(q), [expected], q);
  // Below 3 (exclusive): two of [1, 2, 3], none of [4, 5, 6].
  t.deepEqual(...(await near(`${A} | window:inverse_percentile(3m, 3)`, [[200 / 3, 200 / 3, 200 / 3, 0, 0, 0]])));
  const deprecated = await caql.df4(`${LAT} | histogram:window(2m) | histogram:count()`);
  t.deepEqual(deprecated.data, [[3, 3, 2, 2, 2, 2]]);
  t.regex(deprecated.head.warning![0]!, /histogram:window is deprecated; use window:merge/);
});

test('window: align, skip, offset (a duration or a time zone) and period', async (t) => {
  // align=end: the last window finished by the slot's end; [T0 − 3m, T0) has no data.
  t.deepEqual(await caql.values(`${A} | window:sum(3m, align="end")`), [[null, null, 6, 6, 6, 15]]);
  // skip=1m: a 2-minute window starting at every minute.
  t.deepEqual(await caql.values(`${A} | window:sum(2m, skip=1m)`), [[3, 5, 7, 9, 11, 6]]);
  // offset=1m: windows [T0 − 2m, T0 + 1m), [T0 + 1m, T0 + 4m), [T0 + 4m, T0 + 7m).
  t.deepEqual(await caql.values(`${A} | window:sum(3m, offset=1m)`), [[1, 9, 9, 9, 11, 11]]);
  t.deepEqual(await caql.values(`${A} | window:sum(3m, offset="1m")`), [[1, 9, 9, 9, 11, 11]]);
  // A day window in US/Eastern starts at local midnight, 05:00 UTC in November; T0 (00:00 UTC)
  // lies in the day that began at 05:00 UTC the day before.
  const hourOfDayStart = (offset: string) => `window:first(1d, offset=${offset}, period=1h){time:tz("UTC", "hour")}`;
  t.deepEqual(await caql.values(hourOfDayStart('"US/Eastern"'), { end: at(1) }), [[5]]);
  t.deepEqual(await caql.values(hourOfDayStart('"UTC"'), { end: at(1) }), [[0]]);
  t.deepEqual(await caql.values(hourOfDayStart('2h'), { end: at(1) }), [[2]]);
  // period=1m at 2-minute slots: maxima of the minute values, not of the 2-minute averages.
  t.deepEqual(await caql.values(`${B} | window:max(2m, period=1m)`, { period: 120 }), [[20, 40, 60]]);
  t.deepEqual(await caql.values(`${B} | window:max(2m)`, { period: 120 }), [[15, 40, 55]]);
});

test('rolling: the window of the given length ending with each slot', async (t) => {
  const rows: [string, (number | null)[]][] = [
    [`${A} | rolling:mean(3m)`, [1, 1.5, 2, 3, 4, 5]],
    [`${A} | rolling:sum(2m)`, [1, 3, 5, 7, 9, 11]],
    [`${B} | rolling:count(3m)`, [1, 2, 2, 2, 2, 3]],
    [`${B} | rolling:max(2m)`, [10, 20, 20, 40, 50, 60]],
    [`${B} | rolling:min(3m)`, [10, 10, 10, 20, 40, 40]],
    [`${A} | rolling:first(3m)`, [1, 1, 1, 2, 3, 4]],
    [`${B} | rolling:last(3m)`, [10, 20, 20, 40, 50, 60]],
    [`${A} | rolling:delta(3m)`, [null, 1, 2, 2, 2, 2]],
    // [160, 220, 10]: 60, then a reset counted as 10.
    ['find("requests") | rolling:increase(3m)', [null, 60, 120, 70, 70, 120]],
    ['find("requests") | rolling:resets(3m)', [0, 0, 0, 1, 1, 0]],
    ['find("flag") | rolling:changes(2m)', [0, 1, 0, 0, 1, 1]],
    [`${A} | rolling:stddev(2m)`, [0, 0.5, 0.5, 0.5, 0.5, 0.5]],
    [`${A} | rolling:popvar(2m)`, [0, 0.25, 0.25, 0.25, 0.25, 0.25]],
    [`${B} | rolling:absent(1m)`, [null, null, 1, null, null, null]],
    [`${B} | rolling:present(2m)`, [1, 1, 1, 1, 1, 1]],
    [`${A} | rolling:percentile(3m, 50)`, [1, 1.5, 2, 3, 4, 5]],
    [`${A} | rolling:inverse_percentile(2m, 2)`, [100, 50, 0, 0, 0, 0]],
    [`${A} | rolling:histogram(2m) | histogram:count()`, [1, 2, 2, 2, 2, 2]],
    [`${LAT} | rolling:merge(2m) | histogram:count()`, [2, 3, 1, 2, 3, 2]],
    [`${LAT} | histogram:rolling(2m) | histogram:count()`, [2, 3, 1, 2, 3, 2]],
  ];
  for (const [q, expected] of rows) t.deepEqual(await caql.values(q), [expected], q);
});

test('aggregate: each view slot from the 1-minute values inside it', async (t) => {
  // b per 2-minute slot: (10, 20), (–, 40), (50, 60).
  const rows: [string, (number | null)[]][] = [
    ['aggregate:max()', [20, 40, 60]],
    ['aggregate:min()', [10, 40, 50]],
    ['aggregate:sum()', [30, 40, 110]],
    ['aggregate:count()', [2, 1, 2]],
    ['aggregate:mean()', [15, 40, 55]],
    ['aggregate:histogram() | histogram:count()', [2, 1, 2]],
    // At a 2-minute period each slot holds one (averaged) value.
    ['aggregate:max(2m)', [15, 40, 55]],
  ];
  for (const [f, expected] of rows) t.deepEqual(await caql.values(`${B} | ${f}`, { period: 120 }), [expected], f);
});

test('window arguments are checked', async (t) => {
  t.is(await caql.error(`${A} | window:mean(5M, nonsense=3)`), "window:mean: unknown keyword argument 'nonsense' (it takes window_duration, skip, offset, align, period)");
  t.regex(await caql.error(`${A} | window:mean(0m)`), /window:mean: window_duration must be a positive duration/);
  t.regex(await caql.error(`${A} | window:percentile(5m, 120)`), /window:percentile: percentile 120 is not between 0 and 100/);
  t.regex(await caql.error(`${A} | rolling:sum(5m, align="middle")`), /rolling:sum: align must be "start" or "end", not 'middle'/);
  t.regex(await caql.error(`${A} | window:sum(1d, offset="Mars/Olympus")`), /window:sum: 'Mars\/Olympus' is not an IANA time zone/);
  t.regex(await caql.error(`${A} | rolling:mean("soon")`), /rolling:mean: argument 'window_duration' must be a duration such as 5m, got the string 'soon'/);
  t.regex(await caql.error(`${LAT} | window:sum(5m)`), /window:sum: expects numeric streams, got a histogram stream/);
  t.is(T0 % 86_400, 0);
});
