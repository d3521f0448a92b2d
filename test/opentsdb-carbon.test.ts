// OpenTSDB HTTP put and the carbon plaintext TCP listener against a real node.
import { connect } from 'node:net';
import test from 'ava';
import { pino } from 'pino';
import { CarbonListener } from '../http/carbon-listener.js';
import { parseCarbonLine } from '../model/carbon.js';
import { looseEpochMs } from '../model/tagged-sample.js';
import type { AccountId } from '../model/types.js';
import { getJson, startNode, type TestNode } from './helpers/node.js';

const ACCOUNT = 11;
const UUID = '5e1f0000-0000-4000-8000-0000000000aa';
let n: TestNode;
let carbon: CarbonListener;
test.before(async () => {
  n = await startNode({ defaultAccount: ACCOUNT, defaultCheckUuid: UUID });
  carbon = await CarbonListener.start(n.node, pino({ level: 'silent' }), '127.0.0.1', 0, { account: ACCOUNT as AccountId, uuid: UUID, checkName: '' });
});
test.after.always(async () => {
  await carbon?.close();
  await n?.stop();
});

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${n.url}${path}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
};
const names = async (query: string) => ((await getJson(`${n.url}/find/${ACCOUNT}/tags?query=${encodeURIComponent(query)}&activity=0`)).json as { metric_name: string }[]).map((r) => r.metric_name).sort();
const raw = async (name: string) => (await getJson(`${n.url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=9999999999.999`)).json;

test('loose epochs: seconds, seconds.ms and 13-digit ms', (t) => {
  t.is(looseEpochMs(1480371964), 1480371964000);
  t.is(looseEpochMs('1480371964.123'), 1480371964123);
  t.is(looseEpochMs('1480371964.1'), 1480371964100);
  t.is(looseEpochMs(1480371964123), 1480371964123);
  t.is(looseEpochMs('12ab'), null);
  t.is(looseEpochMs(-5), null);
});

test('carbon lines: plain and tagged, and what a bad line is', (t) => {
  t.deepEqual(parseCarbonLine('a.b.c 1.5 1480371964'), { name: 'a.b.c', tags: [], ts: 1480371964000, value: 1.5 });
  t.deepEqual(parseCarbonLine('a.b;dc=east;rack=r 2 1480371964.250'), { name: 'a.b', tags: [['dc', 'east'], ['rack', 'r']], ts: 1480371964250, value: 2 });
  t.regex(parseCarbonLine('a.b 1') as string, /name value timestamp/);
  t.regex(parseCarbonLine('a.b x 1480371964') as string, /value/);
  t.regex(parseCarbonLine('a.b 1 yesterday') as string, /timestamp/);
  t.regex(parseCarbonLine('a.b;dc 1 1480371964') as string, /name=value/);
});

test('/opentsdb/<acct>/<uuid>/<check>: an object or an array; tags become stream tags', async (t) => {
  const one = await post(`/opentsdb/${ACCOUNT}/${UUID}/collector`, { metric: 'tsdb.one', timestamp: 1544678300, value: 637, tags: { datacenter: 'east' } });
  t.is(one.status, 200);
  t.deepEqual(one.json, { records: 1, updated: 1, misdirected: 0, discarded: 0, errors: 0 });
  const many = await post(`/opentsdb/${ACCOUNT}/${UUID}/collector`, [
    { metric: 'tsdb.many', timestamp: 1544688100123, value: '3475', tags: { datacenter: 'west', host: 'web 1' } },
    { metric: 'tsdb.many', timestamp: '1544688160.5', value: 1.25, tags: { datacenter: 'west', host: 'web 1' } },
    { metric: 'tsdb.bad', timestamp: 'soon', value: 1, tags: { a: 'b' } },
    { metric: 'tsdb.bad', timestamp: 1544688100, value: 1, tags: {} },
    { metric: 'tsdb.bad', timestamp: 1544688100, value: 'x', tags: { a: 'b' } },
  ]);
  t.is(many.status, 200);
  t.is(many.json.updated, 2);
  t.is(many.json.errors, 3);
  t.deepEqual(many.json.error_details.map((e: { item: number }) => e.item), [2, 3, 4]);
  t.deepEqual(await raw('tsdb.one|ST[datacenter:east]'), [[1544678300000, 637]]);
  const web = `tsdb.many|ST[datacenter:west,host:b"${Buffer.from('web 1').toString('base64')}"]`;
  t.deepEqual(await names('and(__name:tsdb.many)'), [web]);
  t.deepEqual(await raw(web), [[1544688100123, 3475], [1544688160500, 1.25]]);
  const found = await getJson(`${n.url}/find/${ACCOUNT}/tags?query=and(__name:tsdb.one)&activity=0`);
  t.is(found.json[0].check_name, 'collector');
  t.is((await post(`/opentsdb/${ACCOUNT}/${UUID}/collector`, 'not json')).status, 400);
  t.is((await post(`/opentsdb/${ACCOUNT}/${UUID}/collector`, [{ metric: 'x' }])).json.code, 'FER_ERR_NO_VALID_RECORDS');
  t.is((await post(`/opentsdb/${ACCOUNT}/not-a-uuid/collector`, [])).json.code, 'FER_ERR_BAD_UUID');
});

test('/api/put: 204, summary and details, and failures named', async (t) => {
  const ok = await post('/api/put', [{ metric: 'put.ok', timestamp: 1544678300, value: 1, tags: { a: 'b' } }]);
  t.is(ok.status, 204);
  t.deepEqual(await raw('put.ok|ST[a:b]'), [[1544678300000, 1]]);
  const details = await post('/api/put?details', [
    { metric: 'put.ok', timestamp: 1544678360, value: 2, tags: { a: 'b' } },
    { metric: 'put.bad', timestamp: 1544678300, value: 1 },
  ]);
  t.is(details.status, 400);
  t.deepEqual(details.json, { failed: 1, success: 1, errors: [{ datapoint: 1, error: "'tags' must be an object of at least one tag" }] });
  t.deepEqual(await raw('put.ok|ST[a:b]'), [[1544678300000, 1], [1544678360000, 2]]);
  const summary = await post('/api/put?summary', { metric: 'put.ok', timestamp: 1544678420, value: 3, tags: { a: 'b' } });
  t.deepEqual([summary.status, summary.json], [200, { failed: 0, success: 1 }]);
  const partial = await post('/api/put', [
    { metric: 'put.ok', timestamp: 1544678480, value: 4, tags: { a: 'b' } },
    { metric: 'put.bad', timestamp: 1544678300, value: 1, tags: { __name: 'x' } },
  ]);
  t.is(partial.status, 400);
  t.is(partial.json.code, 'FER_ERR_REJECTED_POINTS');
  t.regex(partial.json.error, /1 of 2 .*reserved/);
  // Headers choose another account and check.
  const other = '5e1f0000-0000-4000-8000-0000000000bb';
  t.is((await post('/api/put', { metric: 'put.other', timestamp: 1544678300, value: 1, tags: { a: 'b' } }, { 'x-svc-account-id': '12', 'x-svc-check-uuid': other })).status, 204);
  const elsewhere = await getJson(`${n.url}/find/12/tags?query=and(__name:put.other)&activity=0`);
  t.is(elsewhere.json[0].uuid, other);
});

test('/api/put without a configured account or check is 400 naming the option', async (t) => {
  const bare = await startNode();
  try {
    const res = await fetch(`${bare.url}/api/put`, { method: 'POST', body: '{"metric":"x","timestamp":1,"value":1,"tags":{"a":"b"}}' });
    t.is(res.status, 400);
    t.regex(((await res.json()) as { error: string }).error, /defaultAccount/);
  } finally {
    await bare.stop();
  }
});

test('carbon over TCP: lines are stored, bad lines counted, the connection survives them', async (t) => {
  const before = { ...carbon.counts };
  const lines = [
    'carbon.plain 1.5 1480371964',
    'carbon.tagged;dc=east;host=a1 2 1480371964.250',
    'this line is bad',
    'carbon.plain 2.5 1480371974',
    'carbon.bad notanumber 1480371964',
    'carbon.plain 3.5 1480371984',
  ];
  const socket = connect(carbon.port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  // Split mid-line: a line may arrive in two chunks.
  const text = lines.join('\n') + '\n';
  socket.write(text.slice(0, 20));
  await new Promise((r) => setTimeout(r, 20));
  socket.end(text.slice(20));
  await new Promise<void>((resolve) => socket.on('close', () => resolve()));
  for (let i = 0; i < 200 && carbon.counts.accepted + carbon.counts.rejected < before.accepted + before.rejected + lines.length; i++) await new Promise((r) => setTimeout(r, 25));
  t.is(carbon.counts.accepted - before.accepted, 4);
  t.is(carbon.counts.rejected - before.rejected, 2);
  t.deepEqual(await raw('carbon.plain'), [[1480371964000, 1.5], [1480371974000, 2.5], [1480371984000, 3.5]]);
  t.deepEqual(await names('and(__name:carbon.tagged)'), ['carbon.tagged|ST[dc:east,host:a1]']);
});
