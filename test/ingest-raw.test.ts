// PUT|POST /raw (TSV) and GET /raw against a real node.
import test from 'ava';
import { CHECK, getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startNode();
});
test.after.always(async () => {
  await n?.stop();
});

const raw = (name: string, start = '0.000', end = '9999999999.999') =>
  getJson(`${n.url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=${start}&end_ts=${end}`);

test('all six types and nulls are stored and read back', async (t) => {
  const body = [
    mLine('1000.000', 'types.i', 'i', '-5'),
    mLine('1000.000', 'types.I', 'I', '4294967295'),
    mLine('1000.000', 'types.l', 'l', '-9223372036854775808'),
    mLine('1000.000', 'types.L', 'L', '18446744073709551615'),
    mLine('1000.000', 'types.n', 'n', '2.5'),
    mLine('1001.000', 'types.n', 'n', '[[null]]'),
    mLine('1000.000', 'types.s', 's', 'hello'),
  ].join('\n');
  const r = await put(n.url, body);
  t.is(r.status, 200);
  t.deepEqual(r.json, { records: 7, updated: 7, misdirected: 0, discarded: 0, errors: 0 });
  t.deepEqual((await raw('types.i')).json, [[1000000, -5]]);
  t.deepEqual((await raw('types.I')).json, [[1000000, 4294967295]]);
  // 64-bit integers come back exact: check the JSON text, not a lossy parse.
  t.is((await raw('types.l')).text, '[[1000000,-9223372036854775808]]');
  t.is((await raw('types.L')).text, '[[1000000,18446744073709551615]]');
  t.deepEqual((await raw('types.n')).json, [[1000000, 2.5], [1001000, null]]);
});

test('POST works like PUT, and an empty body or all-bad body is 400', async (t) => {
  const res = await fetch(`${n.url}/raw`, { method: 'POST', body: mLine('1000.500', 'post.metric', 'n', '1') });
  t.is(res.status, 200);
  t.deepEqual((await raw('post.metric')).json, [[1000500, 1]]);
  const empty = await put(n.url, '');
  t.is(empty.status, 400);
  t.regex(empty.json.error, /empty/);
  const bad = await put(n.url, 'M\t1.5\tx\ty\tn\t1');
  t.is(bad.status, 400);
  t.regex(bad.json.error, /line 1: TIMESTAMP/);
});

test('bad lines are counted and described without rejecting the good ones', async (t) => {
  const lines = [
    mLine('2000.000', 'mixed.ok', 'n', '1'),
    mLine('2000.00', 'mixed.bad', 'n', '1'), // 2 ms digits
    mLine('2001.000', 'mixed.bad', 'i', '2147483648'), // int32 out of range
    mLine('2002.000', 'mixed.bad', 'q', '1'), // unknown type
    mLine('2003.000', 'mixed.bad|ST[a b:c]', 'n', '1'), // illegal tag
    ['M', '2004.000', 'a`b`c_1_2::x`nope', 'mixed.bad', 'n', '1'].join('\t'), // bad uuid
    'X\tfoo',
    mLine(`${Math.floor(Date.now() / 1000) + 30 * 86400}.000`, 'mixed.bad', 'n', '1'), // beyond clock skew
    mLine('2005.000', 'mixed.ok', 'n', '2'),
  ];
  const r = await put(n.url, lines.join('\n'));
  t.is(r.status, 200);
  t.is(r.json.records, 9);
  t.is(r.json.updated, 2);
  t.is(r.json.errors, 7);
  const reasons = r.json.error_details.map((d: { line: number; reason: string }) => `${d.line}:${d.reason}`);
  t.regex(reasons[0], /^2:TIMESTAMP/);
  t.regex(reasons[1], /^3:.*out of range for int32/);
  t.regex(reasons[2], /^4:unknown metric type/);
  t.regex(reasons[3], /^5:illegal stream tag category/);
  t.regex(reasons[4], /^6:invalid check uuid/);
  t.regex(reasons[5], /^7:unknown record type/);
  t.regex(reasons[6], /^8:.*clock skew/);
  t.deepEqual((await raw('mixed.ok')).json, [[2000000, 1], [2005000, 2]]);
  t.is((await raw('mixed.bad')).status, 404, 'nothing of a bad line was stored');
});

test('collisions keep the largest absolute value by default', async (t) => {
  await put(n.url, [mLine('3000.000', 'collide', 'n', '3'), mLine('3000.000', 'collide', 'n', '-7')].join('\n'));
  await put(n.url, mLine('3000.000', 'collide', 'n', '5'));
  t.deepEqual((await raw('collide')).json, [[3000000, -7]]);
});

test('names are canonicalised at ingest and at read', async (t) => {
  await put(n.url, mLine('4000.000', 'canon|MT{x:y}|ST[z:1]|ST[a:2]', 'n', '1'));
  t.deepEqual((await raw('canon|ST[a:2,z:1]')).json, [[4000000, 1]]);
  t.deepEqual((await raw('canon|ST[z:1,a:2]')).json, [[4000000, 1]], 'any tag order names the same metric');
  t.is((await raw('canon')).status, 404, 'stream tags are part of the identity');
});

test('a bare uuid needs the account header, and IRONdb header spellings work', async (t) => {
  const bare = ['M', '5000.000', UUID, 'bare', 'n', '1'].join('\t');
  const without = await put(n.url, bare);
  t.is(without.status, 400);
  t.regex(without.json.error, /account-id/);
  t.is((await put(n.url, bare, { 'X-Snowth-Account-Id': '123' })).status, 200);
  t.is((await put(n.url, bare, { 'x-svc-account-id': '123' })).status, 200);
  const badHeader = await put(n.url, bare, { 'X-SVC-ACCOUNT-ID': 'abc' });
  t.is(badHeader.status, 400);
  t.regex(badHeader.json.error, /x-svc-account-id/);
});

test('raw reads validate their parameters strictly', async (t) => {
  await put(n.url, mLine('6000.000', 'params', 'n', '1'));
  const base = `${n.url}/raw/${UUID}/params`;
  const missing = await getJson(`${base}?end_ts=1.000`);
  t.is(missing.status, 400);
  t.regex(missing.json.error, /start_ts/);
  // whole seconds are accepted (irondb-reference §4), a fraction needs exactly 3 digits
  const malformed = await getJson(`${base}?start_ts=1.5&end_ts=2.000`);
  t.is(malformed.status, 400);
  t.regex(malformed.json.error, /start_ts/);
  const badEnd = await getJson(`${base}?start_ts=1.000&end_ts=2.0`);
  t.regex(badEnd.json.error, /end_ts/);
  const badUuid = await getJson(`${n.url}/raw/not-a-uuid/params?start_ts=1.000&end_ts=2.000`);
  t.is(badUuid.status, 400);
  const unknown = await getJson(`${n.url}/raw/${UUID}/never.written?start_ts=1.000&end_ts=2.000`);
  t.is(unknown.status, 404);
  t.regex(unknown.json.error, /never.written/);
  // Range: start inclusive, end exclusive.
  t.deepEqual((await raw('params', '6000.000', '6000.001')).json, [[6000000, 1]]);
  t.deepEqual((await raw('params', '5000.000', '6000.000')).json, []);
});

test('data survives sealing and a restart', async (t) => {
  const lines = [];
  for (let i = 0; i < 500; i++) lines.push(mLine(`${7000 + i * 10}.000`, 'sealed', 'n', String(i * 1.5)));
  await put(n.url, lines.join('\n'));
  await n.node.flush(); // seal buffers into blocks, truncate the journal
  const back = (await raw('sealed')).json as [number, number][];
  t.is(back.length, 500);
  t.deepEqual(back[499], [(7000 + 4990) * 1000, 748.5]);
  // A late sample into a sealed window and a collision with a sealed value both merge on read.
  await put(n.url, [mLine('7005.000', 'sealed', 'n', '-1'), mLine('7010.000', 'sealed', 'n', '-100')].join('\n'));
  const merged = (await raw('sealed', '7000.000', '7020.000')).json;
  t.deepEqual(merged, [[7000000, 0], [7005000, -1], [7010000, -100]]);
});

test('a large unknown route or method answers JSON 404', async (t) => {
  const r = await getJson(`${n.url}/no/such/endpoint`);
  t.is(r.status, 404);
  t.truthy(r.json.error);
  t.is(CHECK.split('`').length, 4);
});
