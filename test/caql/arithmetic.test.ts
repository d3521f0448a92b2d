// Packages op, each, stats, math and time against a real node, expected values worked out by
// hand from the reference's definitions and the fixture (cpu a = 1…6, b = 10, 20, –, 40, 50,
// 60, c = 5…; flag = 0, 1, 1, 1, 0, 1; reqs a, b, c = 10, 20, 40), one slot per minute.
import test from 'ava';
import { at, rounded, T0, useCaqlNode } from './fixture.js';

const caql = useCaqlNode(test);
const A = 'find("cpu", "and(host:a)")';
const B = 'find("cpu", "and(host:b)")';
const C = 'find("cpu", "and(host:c)")';
const ONE_SLOT = { end: T0 + 60 };

test('op: arithmetic, NULL in any input gives NULL', async (t) => {
  t.deepEqual(await caql.values(`${A} + ${B}`), [[11, 22, null, 44, 55, 66]]);
  t.deepEqual(await caql.values(`op:sum{${A}, ${B}}`), [[11, 22, null, 44, 55, 66]]);
  // First minus the rest: b − a − 1.
  t.deepEqual(await caql.values(`op:sub{${B}, ${A}, 1}`), [[8, 17, null, 35, 44, 53]]);
  t.deepEqual(await caql.values(`${A} | op:prod(2)`), [[2, 4, 6, 8, 10, 12]]);
  // First over the product of the rest: b / a / 2 = 5.
  t.deepEqual(await caql.values(`op:div{${B}, ${A}, 2}`), [[5, 5, null, 5, 5, 5]]);
  t.deepEqual(await caql.values(`${B} / ${A}`), [[10, 10, null, 10, 10, 10]]);
  t.deepEqual(await caql.values(`op:div2{${B}, ${A}}`), [[10, 10, null, 10, 10, 10]]);
  t.deepEqual(await caql.values(`${A} | op:mod(4)`), [[1, 2, 3, 0, 1, 2]]);
  t.deepEqual(await caql.values(`${A} % 4`), [[1, 2, 3, 0, 1, 2]]);
  t.deepEqual(await caql.values(`${A} ^ 2`), [[1, 4, 9, 16, 25, 36]]);
  t.deepEqual(await caql.values(`${A} | op:exp(2)`), [[1, 4, 9, 16, 25, 36]]);
  t.deepEqual(await caql.values(`-${A}`), [[-1, -2, -3, -4, -5, -6]]);
  t.deepEqual(await caql.values(`${A} | op:neg()`), [[-1, -2, -3, -4, -5, -6]]);
  // One source of many streams folds them: a + b + c.
  t.deepEqual(await caql.values('find("cpu") | op:sum()'), [[16, 27, null, 49, 60, 71]]);
  // A constant broadcasts against every stream.
  t.deepEqual(await caql.values('find("cpu") * 2'), [
    [2, 4, 6, 8, 10, 12],
    [20, 40, null, 80, 100, 120],
    [10, 10, 10, 10, 10, 10],
  ]);
  t.regex(await caql.error(`op:div2{${A}, ${B}, ${C}}`), /op:div2 \(\/\) takes exactly two inputs/);
});

test('op: comparisons and boolean logic give 0 or 1', async (t) => {
  const rows: [string, number[]][] = [
    ['op:eq(3)', [0, 0, 1, 0, 0, 0]],
    ['op:neq(3)', [1, 1, 0, 1, 1, 1]],
    ['op:geq(3)', [0, 0, 1, 1, 1, 1]],
    ['op:gt(3)', [0, 0, 0, 1, 1, 1]],
    ['op:leq(3)', [1, 1, 1, 0, 0, 0]],
    ['op:lt(3)', [1, 1, 0, 0, 0, 0]],
  ];
  for (const [f, expected] of rows) t.deepEqual(await caql.values(`${A} | ${f}`), [expected], f);
  t.deepEqual(await caql.values(`${A} >= 3`), [[0, 0, 1, 1, 1, 1]]);
  t.deepEqual(await caql.values(`${A} != 3`), [[1, 1, 0, 1, 1, 1]]);
  // flag 0, 1, 1, 1, 0, 1.
  t.deepEqual(await caql.values(`op:and{find("flag"), ${A}}`), [[0, 1, 1, 1, 0, 1]]);
  t.deepEqual(await caql.values('find("flag") or 0'), [[0, 1, 1, 1, 0, 1]]);
  t.deepEqual(await caql.values('find("flag") and 0'), [[0, 0, 0, 0, 0, 0]]);
  t.deepEqual(await caql.values('op:not{find("flag")}'), [[1, 0, 0, 0, 1, 0]]);
  t.deepEqual(await caql.values('!find("flag")'), [[1, 0, 0, 0, 1, 0]]);
  t.deepEqual(await caql.values('not find("flag")'), [[1, 0, 0, 0, 1, 0]]);
});

test('each: a constant applied to every stream', async (t) => {
  const rows: [string, (number | null)[]][] = [
    ['each:add(1)', [2, 3, 4, 5, 6, 7]],
    ['each:sub(1)', [0, 1, 2, 3, 4, 5]],
    ['each:mul(2)', [2, 4, 6, 8, 10, 12]],
    ['each:div(2)', [0.5, 1, 1.5, 2, 2.5, 3]],
    ['each:exp(2)', [1, 4, 9, 16, 25, 36]],
    ['each:mod(4)', [1, 2, 3, 0, 1, 2]],
    ['each:eq(3)', [0, 0, 1, 0, 0, 0]],
    ['each:neq(3)', [1, 1, 0, 1, 1, 1]],
    ['each:geq(3)', [0, 0, 1, 1, 1, 1]],
    ['each:gt(3)', [0, 0, 0, 1, 1, 1]],
    ['each:leq(3)', [1, 1, 1, 0, 0, 0]],
    ['each:lt(3)', [1, 1, 0, 0, 0, 0]],
  ];
  for (const [f, expected] of rows) t.deepEqual(await caql.values(`${A} | ${f}`), [expected], f);
  t.deepEqual(await caql.values(`pass{${A}, ${B}} | each:mul(10)`), [
    [10, 20, 30, 40, 50, 60],
    [100, 200, null, 400, 500, 600],
  ]);
  t.deepEqual(await caql.values(`${B} | each:coalesce(0)`), [[10, 20, 0, 40, 50, 60]]);
});

test('stats: sums, extremes, first-against-rest, counts', async (t) => {
  const cpu = 'find("cpu")';
  t.deepEqual(await caql.values(`${cpu} | stats:sum()`), [[16, 27, 8, 49, 60, 71]]);
  t.deepEqual(await caql.values(`${cpu} | stats:sum(100)`), [[116, 127, 108, 149, 160, 171]]);
  t.deepEqual(rounded(await caql.values(`${cpu} | stats:mean()`)), rounded([[16 / 3, 9, 4, 49 / 3, 20, 71 / 3]]));
  t.deepEqual(await caql.values(`${cpu} | stats:max()`), [[10, 20, 5, 40, 50, 60]]);
  t.deepEqual(await caql.values(`${cpu} | stats:min()`), [[1, 2, 3, 4, 5, 5]]);
  t.deepEqual(await caql.values(`${A} | stats:min(3)`), [[1, 2, 3, 3, 3, 3]]);
  // a − (b + c), a missing b counting 0.
  t.deepEqual(await caql.values(`${cpu} | stats:sub()`), [[-14, -23, -2, -41, -50, -59]]);
  // a·b·c and a/(b·c), a missing b counting 1.
  t.deepEqual(await caql.values(`${cpu} | stats:prod()`), [[50, 200, 15, 800, 1250, 1800]]);
  t.deepEqual(rounded(await caql.values(`${cpu} | stats:div()`)), [[0.02, 0.02, 0.6, 0.02, 0.02, 0.02]]);
  t.deepEqual(await caql.values(`${cpu} | stats:count()`), [[3, 3, 2, 3, 3, 3]]);
  t.deepEqual(await caql.values(`${cpu} | stats:alwaysone()`), [[1, 1, 1, 1, 1, 1]]);
  t.deepEqual(await caql.values('find("nothing") | stats:absent()'), [[1, 1, 1, 1, 1, 1]]);
  t.deepEqual(await caql.values(`${cpu} | stats:absent()`), [[null, null, null, null, null, null]]);
});

test('stats: spread of a and c per slot', async (t) => {
  // Two values x, y: popvar ((x−y)/2)², var (x−y)²/2, stddev |x−y|/2; a − c = −4 … 1.
  const pair = `pass{${A}, ${C}}`;
  t.deepEqual(await caql.values(`${pair} | stats:popvar()`), [[4, 2.25, 1, 0.25, 0, 0.25]]);
  t.deepEqual(await caql.values(`${pair} | stats:var()`), [[8, 4.5, 2, 0.5, 0, 0.5]]);
  t.deepEqual(await caql.values(`${pair} | stats:stddev()`), [[2, 1.5, 1, 0.5, 0, 0.5]]);
});

test('stats: percentiles interpolate between ranks', async (t) => {
  // Sorted per slot: [1,5,10] [2,5,20] [3,5] [4,5,40] [5,5,50] [5,6,60]; p25 of [1,5,10] is 1 + 0.5·4.
  t.deepEqual(await caql.values('find("cpu") | stats:percentile(50, 100, 25)'), [
    [5, 5, 4, 5, 5, 6],
    [10, 20, 5, 40, 50, 60],
    [3, 3.5, 3.5, 4.5, 5, 5.5],
  ]);
  t.deepEqual(await caql.labels('find("cpu") | stats:percentile(50, 99.9)'), ['p50', 'p99.9']);
});

test('stats: ratio, clamp, trim, select', async (t) => {
  // reqs 10, 20, 40 of 70.
  t.deepEqual(rounded(await caql.values('find("reqs") | stats:ratio()', ONE_SLOT)), rounded([[1 / 7], [2 / 7], [4 / 7]]));
  t.deepEqual(rounded(await caql.values('find("reqs") | stats:ratio(of=100)', ONE_SLOT)), rounded([[100 / 7], [200 / 7], [400 / 7]]));
  // Partitioned by dc: east a + b, west c alone; at minute 2 b is missing.
  for (const kw of ['partition="dc"', 'partition_fmt="%tv{dc}"']) {
    t.deepEqual(rounded(await caql.values(`find("cpu") | stats:ratio(${kw})`, { start: T0, end: at(3) })), rounded([
      [1 / 11, 2 / 22, 1],
      [10 / 11, 20 / 22, null],
      [1, 1, 1],
    ]));
  }
  t.deepEqual(await caql.values(`${A} | stats:clamp(2, 5)`), [[2, 2, 3, 4, 5, 5]]);
  t.deepEqual(await caql.values(`${A} | stats:clamp(NULL, 3)`), [[1, 2, 3, 3, 3, 3]]);
  t.deepEqual(await caql.values(`${A} | stats:clamp(max=3)`), [[1, 2, 3, 3, 3, 3]]);
  // trim(1) drops each slot's lowest and highest: only c's 5 stays, but at minute 5 (5, 6, 60) a's 6.
  t.deepEqual(await caql.values('find("cpu") | stats:trim(1)'), [
    [null, null, null, null, null, 6],
    [null, null, null, null, null, null],
    [5, 5, null, 5, 5, null],
  ]);
  t.deepEqual(await caql.values('find("cpu") | stats:trim(1) | stats:mean()'), [[5, 5, null, 5, 5, 6]]);
  t.deepEqual(await caql.values('find("cpu") | stats:select(1)'), [[10, 20, null, 40, 50, 60]]);
  t.deepEqual(await caql.values('find("cpu") | stats:select(5)'), []);
});

test('math: every function on a constant', async (t) => {
  const rows: [string, number | null][] = [
    ['math:abs{-3}', 3],
    ['math:ceil{2.2}', 3],
    ['math:floor{2.7}', 2],
    ['math:round{2.5}', 3],
    ['math:round{-2.5}', -2],
    ['math:roundx(5){12}', 10],
    ['math:roundx(5){13}', 15],
    ['math:sgn{-4}', -1],
    ['math:sqrt{16}', 4],
    ['math:sqrt{-1}', null],
    ['math:exp{0}', 1],
    ['math:ln{1}', 0],
    ['math:log{1000}', 3],
    ['math:log(2){8}', 3],
    ['math:log2{8}', 3],
    ['math:log10{100}', 2],
    ['math:logit{0.5}', 0],
    ['math:sigmoid{0}', 0.5],
    ['math:pow(3){2}', 8],
    ['math:sin{0}', 0],
    ['math:cos{0}', 1],
    ['math:tan{0}', 0],
    ['math:asin{1}', Math.PI / 2],
    ['math:acos{1}', 0],
    ['math:atan{1}', Math.PI / 4],
    ['math:sinh{0}', 0],
    ['math:cosh{0}', 1],
    ['math:tanh{0}', 0],
    ['math:asinh{0}', 0],
    ['math:acosh{1}', 0],
    ['math:atanh{0}', 0],
    ['math:deg{math:pi()}', 180],
    ['math:rad{180}', Math.PI],
    ['math:pi()', Math.PI],
    ['math:e()', Math.E],
  ];
  for (const [q, expected] of rows) t.deepEqual(rounded(await caql.values(q, ONE_SLOT)), rounded([[expected]]), q);
  t.deepEqual(await caql.values(`${A} | math:pow(2)`), [[1, 4, 9, 16, 25, 36]]);
  t.deepEqual(await caql.values(`${B} | math:abs()`), [[10, 20, null, 40, 50, 60]], 'NULL passes through');
});

test('time: the epoch and calendar fields of each slot', async (t) => {
  t.deepEqual(await caql.values('time:epoch()', { end: at(3) }), [[T0, at(1), at(2)]]);
  // T0 is Tuesday 2023-11-14 00:00 UTC: day 318 of the year; 19:00 Monday the 13th in US/Eastern (EST, UTC−5).
  const rows: [string, string, number][] = [
    ['UTC', 'hour', 0],
    ['UTC', 'monthday', 14],
    ['UTC', 'month', 11],
    ['UTC', 'weekday', 2],
    ['UTC', 'yearday', 318],
    ['UTC', 'year', 2023],
    ['UTC', 'second', 0],
    ['US/Eastern', 'hour', 19],
    ['US/Eastern', 'monthday', 13],
    ['US/Eastern', 'weekday', 1],
    ['Europe/Berlin', 'hour', 1],
  ];
  for (const [zone, field, v] of rows) t.deepEqual(await caql.values(`time:tz("${zone}", "${field}")`, ONE_SLOT), [[v]], `${zone} ${field}`);
  t.deepEqual(await caql.values('time:tz("UTC", "minute")', { end: at(3) }), [[0, 1, 2]]);
  // Across the 2023-03-12 spring-forward: 06:00Z is 01:00 EST, 07:00Z is 03:00 EDT.
  const spring = 1_678_600_800;
  t.deepEqual(await caql.values('time:tz("US/Eastern", "hour")', { start: spring, end: spring + 7200, period: 3600 }), [[1, 3]]);
  t.regex(await caql.error('time:tz("Mars/Olympus", "hour")'), /time:tz: 'Mars\/Olympus' is not an IANA time zone/);
  t.regex(await caql.error('time:tz("UTC", "fortnight")'), /time:tz: field must be one of second, minute, hour, monthday, month, weekday, yearday, year, not 'fortnight'/);
});
