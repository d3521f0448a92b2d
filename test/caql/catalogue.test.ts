// The whole catalogue answers, and answers bad calls with errors naming the problem: every
// function of the table is called with its documented required arguments (from its signature)
// over real data and must answer 200; unknown keywords, surplus, missing and mistyped
// arguments are 400s; a pipeline of 10,000 stages answers 200 (issue 35: 3,000 gave a 500).
import test from 'ava';
import { FUNCTIONS } from '../../caql/functions/index.js';
import type { Param } from '../../caql/signature.js';
import { UUID } from '../helpers/node.js';
import { useCaqlNode } from './fixture.js';

const caql = useCaqlNode(test);

/** An example value for a required parameter, by name, else by type. */
const BY_NAME: Record<string, string> = {
  format: '"%cn"',
  tag: '"dc"',
  category: '"dc"',
  expression: '"and(dc:west)"',
  regex: '"(.)"',
  cat: '"c"',
  val: '"$1"',
  timezone: '"UTC"',
  field: '"hour"',
  name_pattern: '"cpu"',
  pattern: '"cpu"',
  check_uuid: `"${UUID}"`,
  metric_name: '"cpu|ST[dc:east,host:a]"',
  index: '"a"',
  key: '"k"',
  search: '"a"',
  replace: '"b"',
  percentile: '50',
  p: '50',
  q: '0.5',
  alpha: '0.5',
  beta: '0.5',
  gamma: '0.5',
  t_lower: '1',
  t_upper: '5',
};

function example(p: Param, fn: string): string {
  if (fn === 'tag' || fn === 'tag:add') return '"env:x"';
  if (fn.startsWith('graphite:find')) return '"prod.**"';
  if (fn === 'exclude:label') return '"^x"';
  return BY_NAME[p.name] ?? (p.type === 'duration' ? '2m' : p.type === 'string' ? '"x"' : '1');
}

/** The call with every required argument, and its sources: none for selectors, else cpu streams (histograms where asked for). */
function call(name: string, histograms: boolean): string {
  const fn = FUNCTIONS[name]!;
  const args = fn.sig.positional.filter((p) => !p.optional && p.default === undefined).map((p) => example(p, name));
  const invocation = `${name}(${args.join(', ')})`;
  if (name === 'if') return 'if{find("flag"), 1, 0}';
  if (name === 'integrate:while') return 'integrate:while{find("phase"), find("cpu")}';
  if (/^(find|metric|graphite:find|search:metric|metriccluster|time:|math:(pi|e)$|randomwalk$|histogram:random$)/.test(name)) return invocation;
  return `${invocation}{${histograms ? 'find:histogram("latency")' : 'find("cpu")'}}`;
}

test('every function of the catalogue answers its documented call', async (t) => {
  const names = Object.keys(FUNCTIONS);
  t.true(names.length >= 300, `${names.length} functions`);
  for (const name of names) {
    let r = await caql.post(call(name, false));
    if (r.status === 400 && /expects histogram streams/.test(r.json.user_error.message)) r = await caql.post(call(name, true));
    t.is(r.status, 200, `${call(name, false)}: ${JSON.stringify(r.json.user_error ?? '')}`);
  }
});

test('bad calls are 400s naming the argument', async (t) => {
  const rows: [string, string | RegExp][] = [
    ['find("cpu") | window:mean(5M, nonsense=3)', "window:mean: unknown keyword argument 'nonsense' (it takes window_duration, skip, offset, align, period)"],
    ['find("cpu") | pass(x=1)', "pass: unknown keyword argument 'x' (it takes none)"],
    ['find("cpu") | top(3, methd="max")', "top: unknown keyword argument 'methd' (it takes k, method)"],
    ['find("cpu") | pass(1)', 'pass: takes at most 0 arguments, got 1'],
    ['find("cpu") | fill(1, 2)', 'fill: takes at most 1 argument (value), got 2'],
    ['find("cpu") | fill()', "fill: missing argument 'value'"],
    ['find("cpu") | label()', "label: missing argument 'format'"],
    ['find("cpu") | top(3, k=4)', "top: argument 'k' is given twice"],
    ['find("cpu") | top("many")', "top: argument 'k' must be a finite number, got the string 'many'"],
    ['find("cpu") | each:add(NULL)', "each:add: argument 'x' must be a finite number, got NULL"],
    ['find("cpu") | tag:remove(5m)', "tag:remove: argument 'category' must be a string, got the duration 300s"],
    ['find("cpu") | delay("later")', "delay: argument 't' must be a duration such as 5m, got the string 'later'"],
    ['find("cpu") | nosuch()', 'Function not found: nosuch'],
    ['find("cpu") | top(1, method="median")', "top: method must be mean, max or min, not 'median'"],
    ['find("cpu", limit=5000)', /limit must be an integer from 1 to 3000/],
    ['find("cpu", limit=10, limit=20)', /keyword argument 'limit' is given twice/],
    ['stats:sum{"text"}', "a string ('text') cannot be a data source"],
    ['find("cpu") | histogram:percentile(101)', 'histogram:percentile: 101 is not between 0 and 100'],
  ];
  for (const [query, message] of rows) {
    const got = await caql.error(query);
    if (typeof message === 'string') t.is(got, message, query);
    else t.regex(got, message, query);
  }
  // A bad call is found before anything is read, wherever it is in the tree.
  t.is(await caql.error('op:sum{find("cpu"), find("cpu") | window:sum(1m, bogus=1)}'), "window:sum: unknown keyword argument 'bogus' (it takes window_duration, skip, offset, align, period)");
});

test('constants stand as arguments: VIEW_PERIOD is a duration, VIEW_PERIOD_SECONDS a number', async (t) => {
  // 6 one-minute slots: a rolling window of VIEW_PERIOD is the slot itself.
  t.deepEqual(await caql.values('find("cpu", "and(host:a)") | rolling:sum(VIEW_PERIOD)'), [[1, 2, 3, 4, 5, 6]]);
  t.deepEqual(await caql.values('find("cpu", "and(host:a)") | each:add(VIEW_PERIOD_SECONDS)'), [[61, 62, 63, 64, 65, 66]]);
  t.deepEqual(await caql.values('find("cpu", "and(host:a)") | op:sum(VIEW_RANGE_MINUTES)'), [[7, 8, 9, 10, 11, 12]]);
});

test('a pipeline of 10,000 stages answers 200 (issue 35)', async (t) => {
  const stages = ' | pass()'.repeat(10_000);
  t.deepEqual(await caql.values(`find("cpu", "and(host:a)")${stages}`), [[1, 2, 3, 4, 5, 6]]);
  // explain walks it without recursion too: one flat list of the 10,000 stages.
  const explained = await caql.df4(`1${stages}`, { explain: true });
  t.is(explained.head.explain.plan.pipeline.length, 10_000);
  t.is(explained.head.explain.info.putype.length, 10_000);
  // Deep nesting (not pipelines) stays bounded, with a 400 naming the bound.
  t.regex(await caql.error(`${'pass{'.repeat(300)}1${'}'.repeat(300)}`), /nested deeper than 200 levels/);
});
