// CAQL functions on small hand-built series: an in-memory data source holds a few metrics
// with one value per minute, and each test checks a function's output slot by slot.
import test from 'ava';
import { run } from '../../caql/evaluate.js';
import { parseQuery } from '../../caql/parser.js';
import type { DataSource, FetchStream, Grid, Stream } from '../../caql/stream.js';
import { Histogram } from '../../model/histogram/index.js';

const UUID = '1b988fd7-d1e1-48ec-848e-55709511d43f';
/** Values at minutes 0, 1, 2, … (epoch s 0, 60, …); before minute 0 there is nothing. */
const SERIES: Record<string, (number | null)[]> = {
  'cpu|ST[host:a,dc:east]': [1, 2, 3, 4, 5, 6],
  'cpu|ST[host:b,dc:east]': [10, 20, null, 40, 50, 60],
  'cpu|ST[host:c,dc:west]': [5, 5, 5, 5, 5, 5],
  'requests|ST[host:a]': [100, 160, 220, 10, 70, 130],
};
const HISTOGRAMS: Record<string, number[][]> = { latency: [[1, 2], [3], [], [4, 4], [5], [6]] };

function tagsOf(name: string): string[] {
  const m = /\|ST\[(.*)\]$/.exec(name);
  return [`__check_uuid:${UUID}`, `__name:${name.split('|')[0]}`, ...(m === null ? [] : m[1]!.split(','))];
}

function fetchOne(grid: Grid, s: FetchStream): Stream {
  const at = (i: number) => (grid.startS + i * grid.periodS) / 60;
  const head = { label: s.name, tags: tagsOf(s.name), name: s.name.split('|')[0]!, canonical: s.name };
  if (s.kind === 'histogram') {
    const values = Array.from({ length: grid.count }, (_, i) => {
      const vs = HISTOGRAMS[s.name]?.[at(i)];
      if (vs === undefined || vs.length === 0) return null;
      const h = new Histogram();
      for (const v of vs) h.insert(v);
      return h;
    });
    return { ...head, kind: 'histogram', values };
  }
  return { ...head, kind: 'numeric', values: Array.from({ length: grid.count }, (_, i) => SERIES[s.name]?.[at(i)] ?? null) };
}

const source: DataSource = {
  async find(query) {
    const m = /__name:([^,)]*)/.exec(query)!;
    const re = new RegExp(`^${m[1]!.replace(/\*/g, '.*')}$`);
    const host = /host:([a-z])/.exec(query.slice(m.index + m[0].length))?.[1];
    const metrics = [
      ...Object.keys(SERIES).map((name) => ({ uuid: UUID, name, types: ['numeric'] })),
      ...Object.keys(HISTOGRAMS).map((name) => ({ uuid: UUID, name, types: ['histogram'] })),
    ].filter((x) => re.test(x.name.split('|')[0]!) && (host === undefined || x.name.includes(`host:${host}`)));
    return { metrics, truncated: false };
  },
  async fetch(grid, streams) {
    return streams.map((s) => fetchOne(grid, s));
  },
};

const GRID: Grid = { startS: 0, periodS: 60, count: 6 };

async function caql(query: string, grid = GRID): Promise<{ streams: Stream[]; warnings: string[] }> {
  const warnings: string[] = [];
  const streams = await run(parseQuery(query), grid, { source, warnings, deadline: Date.now() + 5000, timeoutS: 5, view: grid });
  return { streams, warnings };
}

async function values(query: string, grid = GRID): Promise<unknown[][]> {
  return (await caql(query, grid)).streams.map((s) => s.values.map((v) => (v === null || typeof v === 'number' ? v : v.toLabelCounts())));
}

const labels = async (query: string) => (await caql(query)).streams.map((s) => s.label);

test('constants and arithmetic follow precedence', async (t) => {
  t.deepEqual(await values('12+3'), [[15, 15, 15, 15, 15, 15]]);
  t.deepEqual(await values('2 * 3 + 1 - 10 / 4'), [[4.5, 4.5, 4.5, 4.5, 4.5, 4.5]]);
  t.deepEqual(await values('2 ^ 3 > 7'), [[1, 1, 1, 1, 1, 1]]);
  t.deepEqual(await values('VIEW_PERIOD + 0'), [[60, 60, 60, 60, 60, 60]]);
});

test('find resolves by name and tags, sorted by name; metric reads one', async (t) => {
  t.deepEqual(await labels('find("cpu")'), ['cpu|ST[host:a,dc:east]', 'cpu|ST[host:b,dc:east]', 'cpu|ST[host:c,dc:west]']);
  t.deepEqual(await values('find("cpu", "and(host:b)")'), [[10, 20, null, 40, 50, 60]]);
  t.deepEqual(await values(`metric("${UUID}", "cpu|ST[host:c,dc:west]")`), [[5, 5, 5, 5, 5, 5]]);
  t.deepEqual(await labels('find:histogram("*")'), ['latency']);
});

test('label formats %n, %cn, %d, %t{}, %tv{} and varying tags', async (t) => {
  t.deepEqual(await labels('find("cpu") | label("%d %n %tv{host}")'), ['0 cpu a', '1 cpu b', '2 cpu c']);
  t.deepEqual(await labels('find("cpu") | label("%t{dc}", "last")'), ['dc:east', 'last', 'last']);
  t.deepEqual(await labels('find("cpu") | label("%tv-{*}")'), ['a,east', 'b,east', 'c,west']);
  t.deepEqual(await labels('find("cpu", "and(host:a)") | label("%cn")'), ['cpu|ST[host:a,dc:east]']);
});

test('stats, op and each', async (t) => {
  t.deepEqual(await values('find("cpu") | stats:sum()'), [[16, 27, 8, 49, 60, 71]]);
  t.deepEqual(await values('find("cpu") | stats:max()'), [[10, 20, 5, 40, 50, 60]]);
  t.deepEqual(await values('find("cpu") | stats:min()'), [[1, 2, 3, 4, 5, 5]]);
  t.deepEqual(await values('find("cpu", "and(host:a)") | stats:mean(3)'), [[2, 2.5, 3, 3.5, 4, 4.5]]);
  t.deepEqual(await values('op:sum{find("cpu", "and(host:a)"), find("cpu", "and(host:b)")}'), [[11, 22, null, 44, 55, 66]]);
  t.deepEqual(await values('find("cpu", "and(host:b)") / 10'), [[1, 2, null, 4, 5, 6]]);
  t.deepEqual(await values('find("cpu", "and(host:a)") | op:gt(3)'), [[0, 0, 0, 1, 1, 1]]);
  t.deepEqual((await values('find("cpu") | each:mul(2)'))[0], [2, 4, 6, 8, 10, 12]);
  t.deepEqual(await values('-find("cpu", "and(host:c)")'), [[-5, -5, -5, -5, -5, -5]]);
});

test('top and bottom rank by mean, max or min', async (t) => {
  t.deepEqual(await labels('find("cpu") | top(1) | label("%tv{host}")'), ['b']);
  t.deepEqual(await labels('find("cpu") | bottom(2, method="max") | label("%tv{host}")'), ['c', 'a']);
});

test('counter, delay, integrate, fill and fill:forward', async (t) => {
  t.deepEqual(await values('find("requests") | counter()'), [[null, 1, 1, null, 1, 1]]);
  t.deepEqual(await values('find("cpu", "and(host:a)") | delay(2m)'), [[null, null, 1, 2, 3, 4]]);
  t.deepEqual(await values('find("cpu", "and(host:a)") | integrate()'), [[1, 3, 6, 10, 15, 21]]);
  t.deepEqual(await values('find("cpu", "and(host:b)") | fill(0)'), [[10, 20, 0, 40, 50, 60]]);
  t.deepEqual(await values('find("cpu", "and(host:b)") | fill:forward()'), [[10, 20, 20, 40, 50, 60]]);
  t.deepEqual(await values('find("cpu", "and(host:b)") | delay(1m) | fill:forward(limit=1m)', { startS: 0, periodS: 60, count: 6 }), [[null, 10, 20, 20, 40, 50]]);
});

test('window and rolling aggregates', async (t) => {
  t.deepEqual(await values('find("cpu", "and(host:a)") | rolling:mean(3m)'), [[1, 1.5, 2, 3, 4, 5]]);
  t.deepEqual(await values('find("cpu", "and(host:a)") | rolling:max(2m)'), [[1, 2, 3, 4, 5, 6]]);
  t.deepEqual(await values('find("cpu", "and(host:a)") | window:sum(3m)'), [[6, 6, 6, 15, 15, 15]]);
  t.deepEqual(await values('find("cpu", "and(host:b)") | window:max(2m)'), [[20, 20, 40, 40, 60, 60]]);
});

test('filters keep streams or values', async (t) => {
  t.deepEqual(await labels('find("cpu") | filter:any:gt(30) | label("%tv{host}")'), ['b']);
  t.deepEqual(await labels('find("cpu") | filter:all:leq(6) | label("%tv{host}")'), ['a', 'c']);
  t.deepEqual(await labels('find("cpu") | filter:any:missing() | label("%tv{host}")'), ['b']);
  // `:not:` negates the condition per value (reference: filter:any:not:missing() "removes streams
  // that consist entirely of missing values"): every cpu stream has some value.
  t.deepEqual(await labels('find("cpu") | filter:any:not:missing() | label("%tv{host}")'), ['a', 'b', 'c']);
  t.deepEqual(await labels('find("cpu") | filter:all:not:missing() | label("%tv{host}")'), ['a', 'c']);
  t.deepEqual(await values('find("cpu", "and(host:a)") | filter:values:geq(4)'), [[null, null, null, 4, 5, 6]]);
});

test('tag and group_by', async (t) => {
  const tagged = (await caql('find("cpu", "and(host:a)") | tag("env:prod")')).streams[0]!;
  t.true(tagged.tags.includes('env:prod'));
  const groups = await caql('find("cpu") | group_by:sum("dc")');
  t.deepEqual(groups.streams.map((s) => s.label), ['dc:east', 'dc:west']);
  t.deepEqual(groups.streams.map((s) => s.values), [[11, 22, 3, 44, 55, 66], [5, 5, 5, 5, 5, 5]]);
  t.deepEqual((await values('find("cpu") | group_by:mean("dc")'))[0], [5.5, 11, 3, 22, 27.5, 33]);
});

test('histograms: build, merge, percentile, count, rate, mean, stddev, window:merge', async (t) => {
  t.deepEqual(await values('find("cpu", "and(host:c)") | histogram()'), [[{ '+50e-001': 1 }, { '+50e-001': 1 }, { '+50e-001': 1 }, { '+50e-001': 1 }, { '+50e-001': 1 }, { '+50e-001': 1 }]]);
  t.deepEqual(await values('find:histogram("latency") | histogram:count()'), [[2, 1, null, 2, 1, 1]]);
  t.deepEqual(await values('find:histogram("latency") | histogram:rate()'), [[2 / 60, 1 / 60, null, 2 / 60, 1 / 60, 1 / 60]]);
  t.deepEqual(await values('find:histogram("latency") | histogram:rate(period=1m)'), [[2, 1, null, 2, 1, 1]]);
  const mean = (await values('find:histogram("latency") | histogram:mean()'))[0]!;
  t.true(Math.abs((mean[3] as number) - 4.05) < 0.01);
  const p50 = await caql('find:histogram("latency") | histogram:percentile(50, 90)');
  t.deepEqual(p50.streams.map((s) => s.label), ['latency p50', 'latency p90']);
  t.deepEqual(await values('find:histogram("latency") | window:merge(2m) | histogram:count()'), [[3, 3, 2, 2, 2, 2]]);
  t.deepEqual(await values('histogram:merge{find:histogram("latency"), find:histogram("latency")} | histogram:count()'), [[4, 2, null, 4, 2, 2]]);
  t.is((await values('find:histogram("latency") | histogram:stddev()'))[0]![2], null);
});

test('semantic errors name the problem', async (t) => {
  await t.throwsAsync(() => caql('nosuch()'), { message: 'Function not found: nosuch' });
  await t.throwsAsync(() => caql('find("cpu") | histogram:count()'), { message: /expects histogram streams/ });
  await t.throwsAsync(() => caql('find:histogram("latency") | stats:sum()'), { message: /expects numeric streams/ });
  await t.throwsAsync(() => caql('find("cpu", limit=5000)'), { message: /limit must be an integer from 1 to 3000/ });
  await t.throwsAsync(() => caql('histogram:percentile(120){find:histogram("latency")}'), { message: /120 is not between 0 and 100/ });
  await t.throwsAsync(() => caql('op:sum{find("cpu"), pass{find("requests"), find("requests")}}'), { message: /inputs of 3 and 2 streams cannot be paired/ });
  await t.throwsAsync(() => caql('window:mean(5M, nonsense=3){find("cpu")}'), { message: "window:mean: unknown keyword argument 'nonsense' (it takes window_duration, skip, offset, align, period)" });
});
