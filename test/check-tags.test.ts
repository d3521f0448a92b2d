// Check tags (`/meta/check/tag/<check_uuid>`) against a real node, spoken as gosnowth speaks
// them, and their part in tag search: /find carries them, queries, tag_cats/tag_vals,
// count_only and deletes by tag query match them.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
const OTHER = '0a2a3f6c-0000-4000-8000-000000000001';
const check = (uuid: string, account = 123) => `host.example\`http\`c_${account}_1::http\`${uuid}`;
const ACCOUNT = { 'x-svc-account-id': '123' };

test.before(async () => {
  n = await startNode();
  await put(n.url, [
    mLine('100.000', 'cpu|ST[host:a]', 'n', '1', check(UUID)),
    mLine('100.000', 'mem', 'n', '2', check(UUID)),
    mLine('100.000', 'cpu|ST[host:b]', 'n', '3', check(OTHER)),
  ].join('\n'));
});
test.after.always(async () => {
  await n?.stop();
});

const tagsPath = (uuid: string) => `${n.url}/meta/check/tag/${uuid}`;
const send = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method, headers, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
const find = (query: string, extra = '') => getJson(`${n.url}/find/123/tags?query=${encodeURIComponent(query)}${extra}`);
const names = (rows: { metric_name: string; uuid: string }[]) => rows.map((r) => `${r.uuid === UUID ? 'U' : 'O'}:${r.metric_name}`).sort();

test.serial('GET, POST, PUT and DELETE with set semantics, as gosnowth sends them', async (t) => {
  const fresh = '0a2a3f6c-0000-4000-8000-0000000000ff';
  // GetCheckTags decodes {"<uuid>": [tags]}; UpdateCheckTags needs the key present even when empty.
  t.deepEqual((await send('GET', tagsPath(fresh))).json, { [fresh]: [] });
  // UpdateCheckTags posts {"add": [...], "remove": [...]} with b"…" where a part needs encoding
  const posted = await send('POST', tagsPath(fresh), { add: ['test:test', 'b"dGVzdA==":b"dGVzdA=="', 'env:prod', 'solo:'] });
  t.deepEqual(posted, { status: 200, json: { [fresh]: ['env:prod', 'solo:', 'test:test'] } });
  t.deepEqual((await send('POST', tagsPath(fresh), { add: ['env:prod'] })).json[fresh], ['env:prod', 'solo:', 'test:test'], 'idempotent');
  t.deepEqual((await send('PUT', tagsPath(fresh), { add: ['x:1'], remove: ['x:1', 'solo:'] })).json[fresh], ['env:prod', 'test:test'], 'remove wins over an add in the same request');
  t.deepEqual((await send('POST', tagsPath(fresh), { add: ['x:1'] })).json[fresh], ['env:prod', 'test:test', 'x:1'], 'a later add wins over an earlier remove');
  t.deepEqual((await send('POST', tagsPath(fresh), { remove: ['x:1'] })).json[fresh], ['env:prod', 'test:test']);
  t.deepEqual((await send('POST', tagsPath(fresh), { add: ['__name:nope', '__check_uuid:x', 'ok:1'] })).json[fresh], ['env:prod', 'ok:1', 'test:test'], 'reserved categories are ignored');
  t.deepEqual((await send('DELETE', tagsPath(fresh))).json, { [fresh]: [] });
  t.deepEqual((await send('GET', tagsPath(fresh.toUpperCase()))).json, { [fresh]: [] });
  t.deepEqual((await send('POST', tagsPath(fresh), { add: ['env:prod'] })).json[fresh], ['env:prod'], 'an add after a clear');
  t.deepEqual((await send('GET', tagsPath(fresh))).json, { [fresh]: ['env:prod'] });
});

test.serial('the account scopes tags: header or path; unscoped tags apply in every account', async (t) => {
  const c = '0a2a3f6c-0000-4000-8000-0000000000ee';
  await send('POST', tagsPath(c), { add: ['team:a'] }, { 'x-svc-account-id': '5' });
  await send('POST', `${n.url}/meta/check/tag/6/${c}`, { add: ['team:b'] });
  t.deepEqual((await send('GET', tagsPath(c), undefined, { 'X-Snowth-Account-Id': '5' })).json, { [c]: ['team:a'] });
  t.deepEqual((await send('GET', `${n.url}/meta/check/tag/5/${c}`)).json, { [c]: ['team:a'] });
  t.deepEqual((await send('GET', `${n.url}/meta/check/tag/6/${c}`)).json, { [c]: ['team:b'] });
  t.deepEqual((await send('GET', tagsPath(c))).json, { [c]: [] }, 'no account: the unscoped set');
});

test.serial('find carries check_tags and tag queries match them', async (t) => {
  await send('POST', tagsPath(UUID), { add: ['env:prod', '__check_id:11111'] }); // unscoped
  await send('POST', tagsPath(OTHER), { add: ['env:dev'] }, ACCOUNT);
  const all = (await find('and(__name:*)')).json as { metric_name: string; uuid: string; check_tags: string[] }[];
  t.deepEqual(all.find((r) => r.uuid === UUID)!.check_tags, ['__check_id:11111', 'env:prod']);
  t.deepEqual(all.find((r) => r.uuid === OTHER)!.check_tags, ['env:dev']);
  t.deepEqual(names((await find('and(env:prod)')).json), ['U:cpu|ST[host:a]', 'U:mem']);
  t.deepEqual(names((await find('and(env:prod,__name:cpu)')).json), ['U:cpu|ST[host:a]']);
  t.deepEqual(names((await find('and(__name:cpu,env:dev)')).json), ['O:cpu|ST[host:b]']);
  t.deepEqual(names((await find('and(env:d*)')).json), ['O:cpu|ST[host:b]']);
  t.deepEqual(names((await find('and(env:/^pr/)')).json), ['U:cpu|ST[host:a]', 'U:mem']);
  t.deepEqual(names((await find('and(__name:cpu,not(env:prod))')).json), ['O:cpu|ST[host:b]']);
  t.deepEqual(names((await find('or(env:dev,host:a)')).json), ['O:cpu|ST[host:b]', 'U:cpu|ST[host:a]']);
  t.deepEqual(names((await find('and(__check_id:11111)')).json), ['U:cpu|ST[host:a]', 'U:mem']);
  t.deepEqual((await find('and(env:prod)', '&count_only=1')).json, { count: 2, estimate: false });
  t.deepEqual((await getJson(`${n.url}/find/123/tag_cats?query=and(__name:cpu)`)).json, ['__check_id', 'env', 'host']);
  t.deepEqual((await getJson(`${n.url}/find/123/tag_vals?query=and(__name:cpu)&category=env`)).json, ['dev', 'prod']);
  // Another account does not see account 123's scoped tags.
  await put(n.url, mLine('100.000', 'cpu', 'n', '1', check(OTHER, 124)));
  t.deepEqual((await getJson(`${n.url}/find/124/tags?query=and(__name:cpu)`)).json[0].check_tags, []);
  // Removing a check tag takes its metrics out of the query's results.
  await send('POST', tagsPath(OTHER), { remove: ['env:dev'] }, ACCOUNT);
  t.deepEqual(names((await find('and(env:dev)')).json), []);
});

test.serial('deletes by tag query match check tags', async (t) => {
  const headers = { ...ACCOUNT, 'x-svc-delete-time': '1000' };
  const dry = await fetch(`${n.url}/raw/tags?query=${encodeURIComponent('and(env:prod)')}`, { method: 'DELETE', headers });
  t.deepEqual(((await dry.json()) as { metric_name: string; delete_result: string }[]).map((r) => [r.metric_name, r.delete_result]).sort(), [['cpu|ST[host:a]', 'found'], ['mem', 'found']]);
  const done = await fetch(`${n.url}/raw/tags?query=${encodeURIComponent('and(env:prod,__name:mem)')}`, { method: 'DELETE', headers: { ...headers, 'x-svc-confirm-delete': '1' } });
  t.deepEqual(((await done.json()) as { delete_result: string }[]).map((r) => r.delete_result), ['deleted']);
  t.deepEqual((await getJson(`${n.url}/raw/${UUID}/mem?start_ts=0&end_ts=1000`)).json, []);
  t.deepEqual((await getJson(`${n.url}/raw/${UUID}/${encodeURIComponent('cpu|ST[host:a]')}?start_ts=0&end_ts=1000`)).json, [[100000, 1]]);
});

test('bad input is a 400 naming the problem', async (t) => {
  const bad = async (method: string, url: string, body: unknown, code: string, pattern?: RegExp) => {
    const r = await send(method, url, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.json.code, code);
    if (pattern) t.regex(r.json.error, pattern);
  };
  await bad('GET', tagsPath('not-a-uuid'), undefined, 'FER_ERR_BAD_UUID');
  await bad('POST', tagsPath(UUID), '{', 'FER_ERR_BAD_BODY', /not JSON/);
  await bad('POST', tagsPath(UUID), ['env:x'], 'FER_ERR_BAD_BODY');
  await bad('POST', tagsPath(UUID), { add: 'env:x' }, 'FER_ERR_BAD_BODY', /'add' must be an array/);
  await bad('POST', tagsPath(UUID), { add: [1] }, 'FER_ERR_BAD_BODY');
  await bad('POST', tagsPath(UUID), { add: ['has space:x'] }, 'FER_ERR_BAD_BODY', /has space/);
  await bad('POST', tagsPath(UUID), { set: ['a:b'] }, 'FER_ERR_BAD_BODY', /unknown field 'set'/);
  await bad('GET', `${n.url}/meta/check/tag/x1/${UUID}`, undefined, 'FER_ERR_BAD_PARAM');
  const r = await send('GET', tagsPath(UUID), undefined, { 'x-svc-account-id': 'abc' });
  t.is(r.status, 400);
});
