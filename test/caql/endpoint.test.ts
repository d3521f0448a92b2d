// caql_v1 against a real node: GET and POST, parameter aliases, DF1 and DF4, find-driven
// queries over stored data, warnings, user errors and timeouts.
import test from 'ava';
import { getJson, mLine, put, startNode, type TestNode } from '../helpers/node.js';

let n: TestNode;
const NOW = Math.floor(Date.now() / 1000 / 60) * 60 - 3600;

test.before(async () => {
  n = await startNode();
  const lines: string[] = [];
  for (let i = 0; i < 5; i++) {
    lines.push(mLine(`${NOW + i * 60}.000`, 'cpu|ST[host:a]', 'n', String(i)));
    lines.push(mLine(`${NOW + i * 60}.000`, 'cpu|ST[host:b]', 'n', String(10 * i)));
  }
  await put(n.url, lines.join('\n'));
});
test.after.always(() => n.stop());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${n.url}${path}`, { method: 'POST', body: JSON.stringify(body) + '\n', headers: { 'content-type': 'application/json', ...headers } }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));

test('a constant query over four minutes gives four DF1 rows', async (t) => {
  const r = await getJson(`${n.url}/extension/lua/caql_v1?query=${encodeURIComponent('12+3')}&start=${NOW}&end=${NOW + 240}&period=60`);
  t.is(r.status, 200);
  t.deepEqual(r.json, [0, 1, 2, 3].map((i) => [NOW + i * 60, [15]]));
});

test('find-driven DF4 through POST, with q, start_time/end_time strings and the account header', async (t) => {
  const body = { q: 'find("cpu") | label("%tv{host}")', start_time: `${NOW}.000`, end_time: `${NOW + 300}.000`, period: 60, format: 'DF4' };
  const r = await post('/extension/lua/public/caql_v1', body, { 'x-svc-account-id': '123' });
  t.is(r.status, 200);
  t.deepEqual(r.json.head, { count: 5, start: NOW, period: 60 });
  t.deepEqual(r.json.meta.map((m: { label: string }) => m.label), ['a', 'b']);
  t.deepEqual(r.json.data, [[0, 1, 2, 3, 4], [0, 10, 20, 30, 40]]);
  const summed = await post('/extension/lua/caql_v1', { query: 'find("cpu") | stats:sum()', start: NOW + 30, end: NOW + 300, period: 60, account_id: '123' });
  t.deepEqual(summed.json, [0, 1, 2, 3, 4].map((i) => [NOW + i * 60, [11 * i]]), 'start aligned down to the period');
});

test('a truncated find is a DF4 warning, not an error', async (t) => {
  const r = await post('/extension/lua/caql_v1', { q: 'find("cpu", limit=1)', start: NOW, end: NOW + 120, period: 60, format: 'DF4', account_id: 123 });
  t.is(r.status, 200);
  t.is(r.json.meta.length, 1);
  t.regex(r.json.head.warning[0], /matched more than 1 metrics/);
});

test('bad queries are 400 with the user-error body', async (t) => {
  const args = { q: 'find("cpu") | nosuch()', start: NOW, end: NOW + 120, period: 60, account_id: 123 };
  const r = await post('/extension/lua/caql_v1', args);
  t.is(r.status, 400);
  t.deepEqual(r.json, { success: false, status: '400 (User facing error)', method: 'caql_v1', user_error: { message: 'Function not found: nosuch' }, arguments: args, locals: [], trace: [] });
  for (const [body, message] of [
    [{ start: NOW, end: NOW + 60 }, /missing parameter query/],
    [{ q: '1 +', start: NOW, end: NOW + 60 }, /unexpected end of query/],
    [{ q: '1', start: 'soon', end: NOW + 60 }, /parameter start must be a number/],
    [{ q: '1', start: NOW, end: NOW - 60 }, /end must be after start/],
    [{ q: 'find("cpu")', start: NOW, end: NOW + 60 }, /needs an account/],
    [{ q: '1', start: NOW, end: NOW + 60, format: 'DF9' }, /format must be DF1, DF4, PQ or PQR, not 'DF9'/],
  ] as const) {
    const bad = await post('/extension/lua/caql_v1', body);
    t.is(bad.status, 400);
    t.regex(bad.json.user_error.message, message);
  }
});

test('a query past its _timeout is refused with the user-error body', async (t) => {
  const q = `#min_period=1 ${Array.from({ length: 300 }, () => '1').join(' + ')}`;
  const r = await post('/extension/lua/caql_v1', { q, start: NOW, end: NOW + 1_000_000, period: 1, _timeout: 0.05 });
  t.is(r.status, 504);
  t.regex(r.json.user_error.message, /exceeded its _timeout of 0.05 s/);
});

test('GET /extension/lua lists caql_v1; unknown extensions are 404', async (t) => {
  const list = await getJson(`${n.url}/extension/lua`);
  t.deepEqual(Object.keys(list.json.caql_v1.params).sort(), ['_timeout', 'end', 'explain', 'format', 'period', 'query', 'start']);
  t.is((await getJson(`${n.url}/extension/lua/nope`)).status, 404);
});
