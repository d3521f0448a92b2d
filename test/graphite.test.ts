// The Graphite API (irondb-reference §4.6) against a real node, spoken as graphite-irondb
// (graphite-web's storage finder) and gosnowth speak it: plaintext ingest, metrics/find with
// globs, prefixes and irondb_tag_filter, tags/find, series and series_multi, JSON and FlatBuffer.
import test from 'ava';
import { ByteBuffer } from 'flatbuffers';
import { startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
const T0 = 1_700_000_040; // a multiple of 60
const FIND_FB = 'application/x-flatbuffer-metric-find-result-list';
const GET_FB = 'application/x-flatbuffer-metric-get-result-list';

test.before(async () => {
  n = await startNode();
});
test.after.always(async () => {
  await n?.stop();
});

const ingest = (body: string, method = 'POST', path = `/graphite/1/${UUID}/dev`) =>
  fetch(`${n.url}${path}`, { method, body }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${n.url}${path}`, { headers }).then(async (r) => ({ status: r.status, type: r.headers.get('content-type'), body: Buffer.from(await r.arrayBuffer()) }));
const getJson = async (path: string, headers: Record<string, string> = {}) => {
  const r = await get(path, headers);
  return { ...r, json: JSON.parse(r.body.toString()) as any };
};
const q = encodeURIComponent;

test.serial('POST|PUT /graphite/<acct>/<uuid>/<check> stores carbon lines as graphite.<check>.<name>', async (t) => {
  const r = await ingest([
    `a.b.c 1 ${T0}`,
    `a.b.c 2 ${T0 + 60}`,
    `a.b.d 5 ${T0}.500`,
    `a.x.y.z 3 ${T0}`,
    `tagged.m;env=prod;dc=x 7 ${T0}`,
    'bad line',
    `a.b.e 1 ${T0}.5`,
    `a.b.f abc ${T0}`,
  ].join('\n'));
  t.is(r.status, 200);
  t.like(r.json, { records: 8, updated: 5, errors: 3 });
  t.deepEqual(r.json.error_details.map((e: { line: number }) => e.line), [6, 7, 8]);
  const put = await ingest(`other.one 4 ${T0}\n`, 'PUT', `/graphite/1/${UUID}/prod`);
  t.like(put.json, { records: 1, updated: 1 });
  t.is((await ingest('bad line')).status, 400, 'nothing valid');
  t.is((await ingest(`a 1 ${T0}`, 'POST', '/graphite/1/not-a-uuid/dev')).json.code, 'FER_ERR_BAD_UUID');
  t.is((await ingest(`a 1 ${T0}`, 'POST', `/graphite/x/${UUID}/dev`)).status, 400);
  // stored under the usual surfaces too
  const raw = await getJson(`/raw/${UUID}/graphite.dev.a.b.d?start_ts=${T0}&end_ts=${T0 + 1}`);
  t.deepEqual(raw.json, [[T0 * 1000 + 500, 5]]);
});

test.serial('metrics/find: branches and leaves, globs, the trailing slash graphite-irondb sends', async (t) => {
  const find = (query: string, base = '/graphite/1') => getJson(`${base}/metrics/find/?query=${q(query)}`);
  const top = await find('graphite.*');
  t.is(top.type, 'application/json', 'exactly, as graphite-irondb compares it');
  t.deepEqual(top.json, [{ leaf: false, name: 'graphite.dev' }, { leaf: false, name: 'graphite.prod' }]);
  t.deepEqual((await find('graphite.dev.*')).json, [{ leaf: false, name: 'graphite.dev.a' }, { leaf: false, name: 'graphite.dev.tagged' }]);
  const leaves = (await find('graphite.dev.a.b.*')).json;
  t.deepEqual(leaves.map((l: { name: string; leaf: boolean }) => [l.name, l.leaf]), [['graphite.dev.a.b.c', true], ['graphite.dev.a.b.d', true]]);
  t.deepEqual(leaves[0].leaf_data, { uuid: UUID, check_name: 'dev', name: 'graphite.dev.a.b.c', metric_name: 'graphite.dev.a.b.c', category: 'graphite', egress_function: 'avg' });
  const names = async (query: string) => (await find(query)).json.map((l: { name: string }) => l.name);
  t.deepEqual(await names('graphite.dev.a.b.[cd]'), ['graphite.dev.a.b.c', 'graphite.dev.a.b.d']);
  t.deepEqual(await names('graphite.dev.a.b.[!c]'), ['graphite.dev.a.b.d']);
  t.deepEqual(await names('graphite.dev.a.{b,x}'), ['graphite.dev.a.b', 'graphite.dev.a.x']);
  t.deepEqual(await names('graphite.dev.a.?'), ['graphite.dev.a.b', 'graphite.dev.a.x']);
  t.deepEqual(await names('graphite.{dev,prod}.*.*'), ['graphite.dev.a.b', 'graphite.dev.a.x', 'graphite.dev.tagged.m;dc=x;env=prod', 'graphite.prod.other.one']);
  t.deepEqual(await names('graphite.d*.a.b.c'), ['graphite.dev.a.b.c']);
  t.deepEqual(await names('graphite.dev.nothing.*'), [], 'no data: 200 and an empty list');
  // gosnowth: /graphite/<acct>/<prefix>/metrics/find?query= (no slash); the prefix is left out of names
  const prefixed = await getJson(`/graphite/1/graphite.dev./metrics/find?query=${q('a.*')}`);
  t.deepEqual(prefixed.json, [{ leaf: false, name: 'a.b' }, { leaf: false, name: 'a.x' }]);
  // the advisory limit
  t.is((await getJson(`/graphite/1/metrics/find?query=${q('graphite.dev.a.b.*')}`, { 'X-Snowth-Advisory-Limit': '1' })).json.length, 1);
});

test.serial('metrics/find with irondb_tag_filter', async (t) => {
  const find = (filter: string) => getJson(`/graphite/1/metrics/find/?query=${q('graphite.dev.tagged.*')}&irondb_tag_filter=${q(filter)}`);
  t.deepEqual((await find('and(env:prod)')).json.map((l: { name: string }) => l.name), ['graphite.dev.tagged.m;dc=x;env=prod']);
  t.deepEqual((await find('and(env:dev)')).json, []);
  const bad = await find('and(env:prod');
  t.is(bad.status, 400);
  t.is(bad.json.code, 'FER_ERR_BAD_QUERY');
});

test.serial('metrics/find answers a FlatBuffer MetricSearchResultList when asked', async (t) => {
  const r = await get(`/graphite/1/metrics/find/?query=${q('graphite.dev.a.b.*')}`, { Accept: FIND_FB });
  t.is(r.type, FIND_FB);
  const results = readFindResults(r.body);
  t.deepEqual(results, [
    { leaf: 1, name: 'graphite.dev.a.b.c', leaf_data: [UUID, 'dev', 'graphite.dev.a.b.c', 'graphite', 'avg'] },
    { leaf: 1, name: 'graphite.dev.a.b.d', leaf_data: [UUID, 'dev', 'graphite.dev.a.b.d', 'graphite', 'avg'] },
  ]);
  const branches = readFindResults((await get(`/graphite/1/metrics/find/?query=${q('graphite.*')}`, { Accept: FIND_FB })).body);
  t.deepEqual(branches, [{ leaf: 0, name: 'graphite.dev', leaf_data: null }, { leaf: 0, name: 'graphite.prod', leaf_data: null }]);
});

test.serial('tags/find with Graphite ≥ 1.1 expressions', async (t) => {
  const tags = (query: string, base = '/graphite/1') => getJson(`${base}/tags/find/?query=${q(query)}`);
  const names = async (query: string) => (await tags(query)).json.map((l: { name: string }) => l.name);
  t.deepEqual(await names('env=prod'), ['graphite.dev.tagged.m;dc=x;env=prod']);
  t.deepEqual(await names('dc=x,env=prod'), ['graphite.dev.tagged.m;dc=x;env=prod']);
  t.deepEqual(await names('name=~graphite\\.dev\\.a\\.b,env='), ['graphite.dev.a.b.c', 'graphite.dev.a.b.d']);
  t.deepEqual(await names('name=~graphite\\.dev,env!=prod,name!=~.*\\.x\\.'), ['graphite.dev.a.b.c', 'graphite.dev.a.b.d']);
  t.deepEqual(await names("seriesByTag('env=~pr','dc!=y')"), ['graphite.dev.tagged.m;dc=x;env=prod']);
  t.deepEqual(await names('env=staging'), []);
  const full = (await tags('env=prod')).json[0];
  t.is(full.leaf, true);
  t.is(full.leaf_data.name, 'graphite.dev.tagged.m|ST[dc:x,env:prod]');
  t.deepEqual((await tags('env=prod', '/graphite/1/graphite.dev.')).json.map((l: { name: string }) => l.name), ['tagged.m;dc=x;env=prod']);
  const fb = readFindResults((await get(`/graphite/1/tags/find/?query=${q('env=prod')}`, { Accept: FIND_FB })).body);
  t.is(fb[0]!.name, 'graphite.dev.tagged.m;dc=x;env=prod');
  for (const bad of ['env', 'env!=prod', 'name=~(', '']) {
    const r = await tags(bad);
    t.is(r.status, 400, bad);
    t.is(r.json.code, bad === '' ? 'FER_ERR_MISSING_PARAM' : 'FER_ERR_BAD_GRAPHITE_QUERY', bad);
  }
});

test.serial('series and series_multi: averages per step, JSON and FlatBuffer', async (t) => {
  // the docs' GET form
  const one = await getJson(`/graphite/1/series?start=${T0}&end=${T0 + 120}&name=${q('graphite.dev.a.b.c')}`);
  t.is(one.type, 'application/json');
  t.deepEqual(one.json, { from: T0, to: T0 + 120, step: 60, series: { 'graphite.dev.a.b.c': [1, 2] } });
  // graphite-irondb: POST {host}/series_multi/ with names [{leaf_name, leaf_data}] from its find
  const leaf = (await getJson(`/graphite/1/graphite.dev./metrics/find/?query=${q('a.b.*')}`)).json as { name: string; leaf_data: unknown }[];
  const body = { names: leaf.map((l) => ({ leaf_name: l.name, leaf_data: l.leaf_data })), start: T0, end: T0 + 180, database_rollups: true };
  const post = (path: string, doc: unknown, headers: Record<string, string> = {}) =>
    fetch(`${n.url}${path}`, { method: 'POST', body: JSON.stringify(doc), headers: { 'content-type': 'application/json', ...headers } });
  const multi = await post('/graphite/1/graphite.dev./series_multi/', body);
  t.is(multi.headers.get('content-type'), 'application/json');
  t.deepEqual(await multi.json(), { from: T0, to: T0 + 180, step: 60, series: { 'a.b.c': [1, 2, null], 'a.b.d': [5, null, null] } });
  // gosnowth: names as strings, `step` given
  const go = await post('/graphite/1/series_multi', { start: T0, end: T0 + 120, names: ['graphite.dev.a.b.c', 'graphite.dev.tagged.m;env=prod;dc=x', 'graphite.nope'], step: 120 });
  t.deepEqual(await go.json(), { from: T0, to: T0 + 120, step: 120, series: { 'graphite.dev.a.b.c': [1.5], 'graphite.dev.tagged.m;env=prod;dc=x': [7] } });
  const none = await post('/graphite/1/series_multi', { start: T0, end: T0 + 60, names: ['graphite.nope'] });
  t.deepEqual(await none.json(), { from: T0, to: T0 + 60, step: 60, series: {} }, 'no data: 200, empty');
  // a long range picks a coarser rollup
  t.is(((await (await post('/graphite/1/series_multi', { start: T0, end: T0 + 7 * 86_400, names: [] })).json()) as { step: number }).step, 1800);
  const fb = await post('/graphite/1/graphite.dev./series_multi/', body, { Accept: GET_FB });
  t.is(fb.headers.get('content-type'), GET_FB);
  t.deepEqual(readGetResult(Buffer.from(await fb.arrayBuffer())), { from: T0, to: T0 + 180, step: 60, series: { 'a.b.c': [1, 2, null], 'a.b.d': [5, null, null] } });
  for (const [doc, code] of [
    [{ end: T0, names: [] }, 'FER_ERR_MISSING_PARAM'],
    [{ start: T0, end: T0, names: [] }, 'FER_ERR_BAD_PARAM'],
    [{ start: T0, end: T0 + 60, names: 'x' }, 'FER_ERR_BAD_BODY'],
    [{ start: T0, end: T0 + 60, names: [{ leaf_name: 'x' }] }, 'FER_ERR_BAD_BODY'],
    [{ start: 'soon', end: T0 + 60, names: [] }, 'FER_ERR_BAD_PARAM'],
    [{ start: T0, end: T0 + 60, names: [], step: 0 }, 'FER_ERR_BAD_PARAM'],
  ] as const) {
    const r = await post('/graphite/1/series_multi', doc);
    t.is(r.status, 400, JSON.stringify(doc));
    t.is(((await r.json()) as { code: string }).code, code, JSON.stringify(doc));
  }
  t.is((await post('/graphite/1/series_multi', '{')).status, 400);
});

// A reader for the two schemas (../shared/spec/fbs/metric_find.fbs, metric_get.fbs), by slot.
function field(bb: ByteBuffer, table: number, slot: number): number {
  const o = bb.__offset(table, 4 + 2 * slot);
  return o === 0 ? 0 : table + o;
}
function tables(bb: ByteBuffer, table: number, slot: number): number[] {
  const at = field(bb, table, slot);
  if (at === 0) return [];
  return Array.from({ length: bb.__vector_len(at) }, (_, i) => bb.__indirect(bb.__vector(at) + 4 * i));
}
const str = (bb: ByteBuffer, table: number, slot: number) => (field(bb, table, slot) === 0 ? null : (bb.__string(field(bb, table, slot)) as string));
const rootOf = (bytes: Buffer) => {
  const bb = new ByteBuffer(new Uint8Array(bytes));
  return { bb, root: bb.readInt32(0) };
};

function readFindResults(bytes: Buffer) {
  const { bb, root } = rootOf(bytes);
  return tables(bb, root, 0).map((r) => {
    const leafAt = field(bb, r, 0);
    const data = field(bb, r, 2) === 0 ? null : bb.__indirect(field(bb, r, 2));
    return { leaf: leafAt === 0 ? 0 : bb.readInt8(leafAt), name: str(bb, r, 1), leaf_data: data === null ? null : [0, 1, 2, 3, 4].map((s) => str(bb, data, s)) };
  });
}

function readGetResult(bytes: Buffer) {
  const { bb, root } = rootOf(bytes);
  const u64 = (slot: number) => (field(bb, root, slot) === 0 ? 0 : Number(bb.readUint64(field(bb, root, slot))));
  const series: Record<string, (number | null)[]> = {};
  for (const s of tables(bb, root, 3)) {
    series[str(bb, s, 0)!] = tables(bb, s, 1).map((p) => {
      const type = field(bb, p, 0) === 0 ? 0 : bb.readInt32(field(bb, p, 0));
      return type === 1 ? (field(bb, p, 1) === 0 ? 0 : bb.readFloat64(field(bb, p, 1))) : null;
    });
  }
  return { from: u64(0), to: u64(1), step: u64(2), series };
}
