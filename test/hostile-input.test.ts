// Input a hostile or careless client sends: absurd nesting, out-of-range numbers, requests
// for unbounded work, deadlines. Each gets a prompt 4xx (or the 504 it asked for), never a
// 500, and other data is untouched.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startNode();
  await put(n.url, [mLine('1700000000.000', 'canary', 'n', '42'), mLine('1700000060.000', 'canary', 'n', '43')].join('\n'));
});
test.after.always(() => n.stop());

const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
  const res = await fetch(n.url + path, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-svc-account-id': '123', ...headers } });
  return { status: res.status, json: (await res.json()) as any };
};
const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const stream = { uuid: UUID, name: 'canary', kind: 'numeric', transform: 'average' };
const fetchBody = (extra: Record<string, unknown>) => JSON.stringify({ start: 1700000000, period: 60, count: 2, streams: [stream], reduce: [{ label: 'pass', method: 'pass' }], ...extra });
const caql = (query: string, headers: Record<string, string> = {}) =>
  fetch(`${n.url}/extension/lua/caql_v1?query=${encodeURIComponent(query)}&start=1700000000&end=1700000120`, { headers: { 'x-svc-account-id': '123', ...headers } });

test.afterEach.always('the canary reads back unchanged', async (t) => {
  const r = await getJson(`${n.url}/raw/${UUID}/canary?start_ts=0.000&end_ts=2000000000.000`);
  t.deepEqual(r.json, [
    [1700000000000, 42],
    [1700000060000, 43],
  ]);
});

test('JSON nested beyond 64 levels is refused before it is parsed', async (t) => {
  const deep = deepArray(20_000);
  for (const path of ['/write/text', '/histogram/write', '/write/nnt']) {
    for (const body of [deep, `[{"metric":"m","id":"${UUID}","offset":"1000","value":${deep}}]`]) {
      const r = await post(path, body);
      t.is(r.status, 400, path);
      t.regex(r.json.error, /nested deeper than 64 levels/, path);
    }
  }
  const f = await post('/fetch', `{"start":0,"period":60,"count":1,"streams":${deep}}`);
  t.is(f.status, 400);
  t.regex(f.json.error, /nested deeper than 64 levels/);
  const c = await post('/extension/lua/caql_v1', `{"query":"1","start":0,"end":60,"x":${deep}}`);
  t.is(c.status, 400);
  t.regex(c.json.user_error.message, /nested deeper than 64 levels/);
});

test('a check name longer than a metric name may be is a 400, in JSON items and TSV check fields', async (t) => {
  const long = 'c_123_1::' + 'z'.repeat(70_000);
  for (const path of ['/write/text', '/histogram/write']) {
    const value = path === '/write/text' ? '"hi"' : '"AAHVAAAB"';
    const item = (checkName: string) => `[{"metric":"m","id":"${UUID}","offset":${path === '/write/text' ? '"1700000000"' : '1700000000'},"period":60,"value":${value},"histogram":${value},"check_name":"${checkName}"}]`;
    const r = await post(path, item(long));
    t.is(r.status, 400, path);
    t.regex(JSON.stringify(r.json), /check name is 70009 bytes; at most 4094/, path);
    t.is((await post(path, item('c_123_1::ok'))).status, 200, path);
  }
  const tsv = await fetch(n.url + '/raw', { method: 'PUT', body: `M\t1700000000.000\tt\`m\`${long}\`${UUID}\tlong.check\tn\t1\n` });
  t.is(tsv.status, 400);
  t.regex(await tsv.text(), /check name is 70009 bytes/);
});

test('names of Object.prototype members are unknown names, not functions', async (t) => {
  for (const name of ['valueOf', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const legacy = await getJson(`${n.url}/read/1700000000/1700000120/60/${UUID}/${name}/canary`);
    t.is(legacy.status, 400, `/read type ${name}`);
    const rollup = await getJson(`${n.url}/rollup/${UUID}/canary?start_ts=1700000000&end_ts=1700000120&rollup_span=60s&type=${name}`);
    t.is(rollup.status, 400, `/rollup type ${name}`);
    const fetched = await post('/fetch', fetchBody({ streams: [{ ...stream, transform: name }] }));
    t.is(fetched.status, 400, `/fetch transform ${name}`);
    const reduced = await post('/fetch', fetchBody({ reduce: [{ label: 'x', method: name }] }));
    t.is(reduced.status, 400, `/fetch reduce ${name}`);
    const q = await caql(`metric:average("${UUID}", "canary") | ${name}()`);
    t.is(q.status, 400, `CAQL function ${name}`);
  }
});

test('a CAQL expression nested thousands deep is a user error', async (t) => {
  for (const query of ['('.repeat(3000) + '1' + ')'.repeat(3000), '-'.repeat(3000) + '1', 'not '.repeat(3000) + '1', '2^'.repeat(3000) + '2']) {
    const r = await fetch(`${n.url}/extension/lua/caql_v1`, { method: 'POST', body: JSON.stringify({ query, start: 0, end: 60 }) });
    t.is(r.status, 400, query.slice(0, 10));
    t.regex(((await r.json()) as any).user_error.message, /nested deeper than 200 levels/);
  }
});

test('out-of-range numbers are 400s naming the field', async (t) => {
  const nnt = await post('/write/nnt', JSON.stringify([{ metric: 'm', id: UUID, offset: 1000, count: 7440752000, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 }]));
  t.is(nnt.status, 400);
  t.regex(nnt.json.error, /'count' must be an integer from 0 to 4294967295/);
  for (const [extra, field] of [
    [{ start: 1e300 }, /start/],
    [{ start: -1 }, /start/],
    [{ period: 1e300 }, /period/],
    [{ count: 2e7 }, /count: 20000000 periods exceeds the limit of 100000/],
  ] as const) {
    const r = await post('/fetch', fetchBody(extra));
    t.is(r.status, 400, JSON.stringify(extra));
    t.regex(r.json.error, field);
  }
  const cells = await post('/fetch', fetchBody({ count: 100_000, streams: Array.from({ length: 51 }, () => stream) }));
  t.is(cells.status, 400);
  t.regex(cells.json.error, /exceeds 5000000 cells/);
  const rolling = await caql(`rolling:mean(100000000d){metric("${UUID}","canary")}`);
  t.is(rolling.status, 400);
  t.regex(((await rolling.json()) as any).user_error.message, /at most 1000000/);
});

test('windows and delays reaching before the epoch read nulls there', async (t) => {
  const r = await caql(`delay(1e9){metric("${UUID}","canary")}`);
  t.is(r.status, 200);
  const rows = (await r.json()) as [number, (number | null)[]][];
  t.is(rows.length, 3);
  t.true(rows.every(([, v]) => v.length === 1 && v[0] === null));
  const w = await caql(`rolling:max(1h){delay(1700000000){metric("${UUID}","canary")}}`);
  t.is(w.status, 200);
});

test('x-svc-timeout and x-svc-deadline bound fetch, find and CAQL', async (t) => {
  const past = { 'x-svc-deadline': '1' };
  const f = await post('/fetch', fetchBody({}), past);
  t.is(f.status, 504);
  t.is(f.json.code, 'FER_ERR_TIMEOUT');
  t.is((await post('/fetch', fetchBody({}), { 'X-Snowth-Timeout': '30s' })).status, 200);
  const bad = await post('/fetch', fetchBody({}), { 'x-svc-deadline': 'soon' });
  t.is(bad.status, 400);

  const find = await fetch(`${n.url}/find/123/tags?query=and(__name:canary)`, { headers: { 'X-Snowth-Deadline': '1' } });
  t.is(find.status, 200);
  t.deepEqual(await find.json(), []);
  t.is(find.headers.get('x-svc-unanswered-nodes'), n.node.identity);
  const count = await getJson(`${n.url}/find/123/tags?query=and(__name:canary)&count_only=1`);
  t.deepEqual(count.json, { count: 1, estimate: false });

  const c = await caql(`metric("${UUID}","canary")`, past);
  t.is(c.status, 504);
});
