// Packages find, metric, graphite, search, tag, exclude, group_by, filter and vector against
// a real node, expected values worked out by hand from the reference's definitions and the
// fixture (cpu a = 1…6, b = 10, 20, –, 40, 50, 60, c = 5…; errors a = 1…6, b = 5…; reqs a, b,
// c = 10, 20, 40; requests a = 100, 160, 220, 10, 70, 130), one slot per minute.
import test from 'ava';
import { UUID } from '../helpers/node.js';
import { at, rounded, T0, useCaqlNode } from './fixture.js';

const caql = useCaqlNode(test);
const A = 'find("cpu", "and(host:a)")';
const HOSTS = '| label("%tv{host}")';

test('find: name patterns, tag queries, limit, and the data kinds', async (t) => {
  t.deepEqual(await caql.labels('find("cp*")'), ['cpu|ST[dc:east,host:a]', 'cpu|ST[dc:east,host:b]', 'cpu|ST[dc:west,host:c]']);
  t.deepEqual(await caql.labels(`find("/^cp/", "and(dc:west)") ${HOSTS}`), ['c']);
  t.deepEqual(await caql.labels(`find("and(__name:cpu,host:c)") ${HOSTS}`), ['c']);
  const limited = await caql.df4('find("cpu", limit=2)');
  t.is(limited.meta.length, 2);
  t.regex(limited.head.warning![0]!, /matched more than 2 metrics/);
  // One sample a minute: count 1, sum = count × average, stddev 0.
  t.deepEqual(await caql.values('find:count("requests")'), [[1, 1, 1, 1, 1, 1]]);
  t.deepEqual(await caql.values('find:average("requests")'), [[100, 160, 220, 10, 70, 130]]);
  t.deepEqual(await caql.values('find:sum("requests")'), [[100, 160, 220, 10, 70, 130]]);
  t.deepEqual(await caql.values('find:stddev("requests")'), [[0, 0, 0, 0, 0, 0]]);
  // Per second against the previous sample: +60/min is 1; 220 → 10 is −3.5 (a reset: no counter rate).
  t.deepEqual(await caql.values('find:derivative("requests")'), [[null, 1, 1, -3.5, 1, 1]]);
  t.deepEqual(await caql.values('find:counter("requests")'), [[null, 1, 1, null, 1, 1]]);
  t.deepEqual(await caql.values('find:counter_stddev("requests")'), [[null, 0, 0, null, 0, 0]]);
  t.deepEqual(await caql.values('find:derivative_stddev("requests")'), [[null, 0, 0, 0, 0, 0]]);
  t.deepEqual(await caql.values('find:histogram("latency") | histogram:count()'), [[2, 1, null, 2, 1, 1]]);
  // Numeric kinds skip histogram metrics and the reverse.
  t.deepEqual(await caql.labels('find("latency")'), []);
  t.deepEqual(await caql.labels('find:histogram("cpu")'), []);
});

test('find and metric: start_time_offset and start_time_override move the read', async (t) => {
  t.deepEqual(await caql.values(`find("cpu", "and(host:a)", start_time_offset=1m)`), [[null, 1, 2, 3, 4, 5]]);
  t.deepEqual(await caql.values(`find("cpu", "and(host:a)", start_time_override=${at(2)})`), [[3, 4, 5, 6, null, null]]);
  t.deepEqual(await caql.values(`metric("${UUID}", "cpu|ST[dc:east,host:a]", start_time_offset=2m)`), [[null, null, 1, 2, 3, 4]]);
});

test('metric reads one metric by check uuid and canonical name', async (t) => {
  t.deepEqual(await caql.values(`metric("${UUID}", "cpu|ST[dc:east,host:a]")`), [[1, 2, 3, 4, 5, 6]]);
  t.deepEqual(await caql.values(`metric:average("${UUID.toUpperCase()}", "cpu|ST[dc:east,host:a]")`), [[1, 2, 3, 4, 5, 6]]);
  t.deepEqual(await caql.values(`metric:count("${UUID}", "requests|ST[host:a]")`), [[1, 1, 1, 1, 1, 1]]);
  t.deepEqual(await caql.values(`metric:counter("${UUID}", "requests|ST[host:a]")`), [[null, 1, 1, null, 1, 1]]);
  t.deepEqual(await caql.values(`metric:histogram("${UUID}", "latency") | histogram:count()`), [[2, 1, null, 2, 1, 1]]);
  t.regex(await caql.error('metric("not-a-uuid", "x")'), /metric: 'not-a-uuid' is not a check uuid/);
});

test('graphite:find matches dotted globs, ** across levels; search:metric is find, deprecated', async (t) => {
  t.deepEqual(await caql.labels('graphite:find("prod.*.cpu.idle")'), ['prod.nodea.cpu.idle', 'prod.nodeb.cpu.idle']);
  t.deepEqual(await caql.labels('graphite:find("prod.node{a,b}.cpu.*")'), ['prod.nodea.cpu.idle', 'prod.nodeb.cpu.idle']);
  t.deepEqual(await caql.labels('graphite:find("prod.*")'), [], 'one * is one level');
  t.deepEqual(await caql.labels('graphite:find("prod.**")'), ['prod.nodea.cpu.idle', 'prod.nodea.mem.free.bytes', 'prod.nodeb.cpu.idle']);
  t.deepEqual(await caql.values('graphite:find:count("prod.nodea.**")'), [
    [1, 1, 1, 1, 1, 1],
    [1, 1, 1, 1, 1, 1],
  ]);
  const legacy = await caql.df4(`search:metric("cpu") ${HOSTS}`);
  t.deepEqual(legacy.meta.map((m) => m.label), ['a', 'b', 'c']);
  t.regex(legacy.head.warning![0]!, /search:metric is deprecated; use find/);
  t.deepEqual(await caql.values('search:metric:count("requests")'), [[1, 1, 1, 1, 1, 1]]);
});

test('graphite relabelling by node', async (t) => {
  const cpu = 'graphite:find("prod.*.cpu.idle")';
  t.deepEqual(await caql.labels(`${cpu} | graphite:aliasbynode(1)`), ['nodea', 'nodeb']);
  t.deepEqual(await caql.labels(`${cpu} | graphite:aliasbynode(1, -1)`), ['nodea.idle', 'nodeb.idle']);
  t.deepEqual(await caql.labels(`${cpu} | graphite:removenode(0, 2)`), ['nodea.idle', 'nodeb.idle']);
  t.deepEqual(await caql.labels(`${cpu} | graphite:tagbynode("host", 1) ${HOSTS}`), ['nodea', 'nodeb']);
  t.deepEqual(await caql.labels(`${cpu} | graphite:aliassub("node(.)", "host-$1")`), ['prod.host-a.cpu.idle', 'prod.host-b.cpu.idle']);
  // The reference's example spells it aliasSub and uses \1.
  t.deepEqual(await caql.labels(String.raw`${cpu} | graphite:aliasbynode(1) | graphite:aliasSub("node(\w)", "\1")`), ['a', 'b']);
});

test('tag: add, remove, synth', async (t) => {
  t.deepEqual(await caql.labels(`${A} | tag("env:prod") | label("%tv{env}")`), ['prod']);
  t.deepEqual(await caql.labels(`${A} | tag:add("env:prod", "dc:north") | label("%t{*}")`), ['host:a,env:prod,dc:north']);
  t.deepEqual(await caql.labels(`${A} | tag:remove("dc") | label("%t{*}")`), ['host:a']);
  t.deepEqual(await caql.labels('find("cpu") | tag:remove("dc", "west") | label("%t{*}")'), ['dc:east,host:a', 'dc:east,host:b', 'host:c']);
  // The reference's example: host from the second node of a graphite name.
  t.deepEqual(await caql.labels(String.raw`graphite:find("prod.*.cpu.idle") | tag:synth("%n", "^prod\.([^.]+)\.", "host", "$1") ${HOSTS}`), ['nodea', 'nodeb']);
  t.deepEqual(await caql.labels(String.raw`${A} | tag:synth("%n", "^nomatch(.)", "x", "$1") | label("%t{x}")`), [''], 'no match, no tag');
});

test('exclude by tag query or by label', async (t) => {
  t.deepEqual(await caql.labels(`find("cpu") | exclude("and(dc:west)") ${HOSTS}`), ['a', 'b']);
  t.deepEqual(await caql.labels(`find("cpu") | exclude:tags("or(host:a,host:c)") ${HOSTS}`), ['b']);
  t.deepEqual(await caql.labels('pass{find("cpu"), find("reqs", "and(host:c)")} | exclude("and(__name:cpu)") | label("%n")'), ['reqs']);
  t.deepEqual(await caql.labels(`find("cpu") ${HOSTS} | exclude:label("^[ab]$")`), ['c']);
});

test('group_by aggregates the streams sharing tag values', async (t) => {
  // east = a and b, west = c.
  const rows: [string, (number | null)[][]][] = [
    ['sum', [[11, 22, 3, 44, 55, 66], [5, 5, 5, 5, 5, 5]]],
    ['mean', [[5.5, 11, 3, 22, 27.5, 33], [5, 5, 5, 5, 5, 5]]],
    ['max', [[10, 20, 3, 40, 50, 60], [5, 5, 5, 5, 5, 5]]],
    ['min', [[1, 2, 3, 4, 5, 6], [5, 5, 5, 5, 5, 5]]],
    ['count', [[2, 2, 1, 2, 2, 2], [1, 1, 1, 1, 1, 1]]],
    ['prod', [[10, 40, 3, 160, 250, 360], [5, 5, 5, 5, 5, 5]]],
    ['alwaysone', [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]]],
    // Two values: stddev |a − b|/2, popvar its square.
    ['stddev', [[4.5, 9, 0, 18, 22.5, 27], [0, 0, 0, 0, 0, 0]]],
    ['popvar', [[20.25, 81, 0, 324, 506.25, 729], [0, 0, 0, 0, 0, 0]]],
  ];
  for (const [method, expected] of rows) {
    const r = await caql.df4(`find("cpu") | group_by:${method}("dc")`);
    t.deepEqual(r.meta.map((m) => m.label), ['dc:east', 'dc:west'], method);
    t.deepEqual(r.data, expected, method);
  }
  // Streams without the tag form one group; trend is 1, 3, 5, … at minutes 0–5.
  t.deepEqual(await caql.labels('pass{find("cpu"), find("trend")} | group_by:sum("dc")'), ['dc:east', 'dc:west', 'sum']);
  t.deepEqual(await caql.labels('find("cpu") | group_by:sum("dc", "host")'), ['dc:east,host:a', 'dc:east,host:b', 'dc:west,host:c']);
  // Histograms merge: latency (no host) and lat2 (host:b, one sample a minute).
  const merged = await caql.df4('pass{find:histogram("latency"), find:histogram("lat2")} | group_by:merge("host") | histogram:count()');
  t.deepEqual(merged.meta.map((m) => m.label), ['merge', 'host:b']);
  t.deepEqual(merged.data, [[2, 1, null, 2, 1, 1], [1, 1, 1, 1, 1, 1]]);
});

test('filter: any/all keep streams on their present values', async (t) => {
  const rows: [string, string[]][] = [
    ['filter:any:gt(30)', ['b']],
    ['filter:all:leq(6)', ['a', 'c']],
    ['filter:all:gt(0)', ['a', 'b', 'c']],
    ['filter:any:eq(5)', ['a', 'c']],
    ['filter:all:eq(5)', ['c']],
    ['filter:any:neq(5)', ['a', 'b']],
    ['filter:any:lt(2)', ['a']],
    ['filter:any:geq(60)', ['b']],
    ['filter:any:missing()', ['b']],
    ['filter:all:missing()', []],
    ['filter:any:not:missing()', ['a', 'b', 'c']],
    ['filter:all:not:missing()', ['a', 'c']],
    ['filter:all:not:gt(30)', ['a', 'c']],
    ['filter:any:not:lt(10)', ['b']],
    // Sums over the view: a 21, b 180, c 30.
    ['filter:sum:gt(25)', ['b', 'c']],
    ['filter:sum:not:gt(25)', ['a']],
    ['filter:sum:eq(21)', ['a']],
  ];
  for (const [f, expected] of rows) t.deepEqual(await caql.labels(`find("cpu") | ${f} ${HOSTS}`), expected, f);
});

test('filter:values sets failing values to NULL; percentile and quantile compare with the stream itself', async (t) => {
  const rows: [string, (number | null)[]][] = [
    ['filter:values:geq(4)', [null, null, null, 4, 5, 6]],
    ['filter:values:not:geq(4)', [1, 2, 3, null, null, null]],
    ['filter:values:eq(3)', [null, null, 3, null, null, null]],
    ['filter:values:neq(3)', [1, 2, null, 4, 5, 6]],
    ['filter:values:gt(5)', [null, null, null, null, null, 6]],
    ['filter:values:leq(2)', [1, 2, null, null, null, null]],
    ['filter:values:lt(2)', [1, null, null, null, null, null]],
    // a's median is 3.5, its 20th percentile 2 (rank 0.2·5 = 1), its 1-quantile 6.
    ['filter:values:percentile:gt(50)', [null, null, null, 4, 5, 6]],
    ['filter:values:not:percentile:gt(50)', [1, 2, 3, null, null, null]],
    ['filter:values:percentile:leq(20)', [1, 2, null, null, null, null]],
    ['filter:values:percentile:geq(100)', [null, null, null, null, null, 6]],
    ['filter:values:quantile:gt(0.5)', [null, null, null, 4, 5, 6]],
    ['filter:values:quantile:lt(1)', [1, 2, 3, 4, 5, null]],
    ['filter:values:quantile:eq(0)', [1, null, null, null, null, null]],
    ['filter:values:not:quantile:eq(0)', [null, 2, 3, 4, 5, 6]],
  ];
  for (const [f, expected] of rows) t.deepEqual(await caql.values(`${A} | ${f}`), [expected], f);
  t.regex(await caql.error(`${A} | filter:values:percentile:gt(150)`), /150 is not between 0 and 100/);
  t.regex(await caql.error(`${A} | filter:values:quantile:gt(2)`), /2 is not between 0 and 1/);
});

test('vector: streams paired by key in operators', async (t) => {
  // errors / reqs by host: a 1…6 / 10, b 5 / 20; c has no errors and drops out.
  const ratio = await caql.df4('op:div{find("errors") | vector("%tv{host}"), find("reqs") | vector("%tv{host}")} | vector:unpack() | label("errors on %tv{host}")');
  t.deepEqual(ratio.meta.map((m) => m.label), ['errors on a', 'errors on b']);
  t.deepEqual(rounded(ratio.data), [[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.25, 0.25, 0.25, 0.25, 0.25, 0.25]]);
  // The pairing is by key, not position: reqs reversed still divides a by a.
  t.deepEqual(rounded(await caql.values('op:div{find("errors") | vector("%tv{host}"), find("reqs") | vector("%tv{host}") | top(3) | vector:pack("%tv{host}")} | vector:unpack()', { end: T0 + 60 })), [[0.1], [0.25]]);
  // A constant broadcasts over a vector.
  t.deepEqual(await caql.values('vector:pack("%tv{host}"){find("reqs")} | op:prod(2) | vector:unpack()', { end: T0 + 60 }), [[20], [40], [80]]);
  t.deepEqual(await caql.labels('find("reqs") | vector("%tv{host}") | vector:drop("b") | vector:unpack() | label("%tv{host}")'), ['a', 'c']);
  const bare = await caql.df4('find("reqs") | vector("%tv{host}", meta=0)');
  t.deepEqual(bare.meta.map((m) => [m.label, m.tags]), [['a', []], ['b', []], ['c', []]]);
  t.regex(await caql.error('find("cpu") | vector("%tv{dc}")'), /vector: two streams have the key 'east' \(pass sloppy=1 to keep the first\)/);
  t.deepEqual(await caql.labels('find("cpu") | vector("%tv{dc}", sloppy=1) | vector:unpack() | label("%tv{host}")'), ['a', 'c']);
  t.regex(await caql.error('op:sum{find("reqs") | vector("%tv{host}"), find("cpu")}'), /cannot pair a vector with plain streams/);
  // A source with no streams leaves nothing to pair (the fuzzer found this a 500).
  t.deepEqual(await caql.values('find("nothing") + op:div{find("reqs") | vector("%tv{host}"), find("reqs") | vector("%tv{host}")}'), []);
});
