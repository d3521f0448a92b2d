// Tag search against a real node: /find tags, tag_cats, tag_vals, activity, latest, count_only.
import test from 'ava';
import { matchTagQuery, parseTagQuery, type MetricView } from '../model/tag-query/index.js';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
const OTHER = '0a2a3f6c-0000-4000-8000-000000000001';
/** A check of another account (a check uuid belongs to one account). */
const THIRD = '0a2a3f6c-0000-4000-8000-00000000000a';
const check = (uuid: string, account = 7) => `host.example\`http\`c_${account}_1::http\`${uuid}`;
const now = Math.floor(Date.now() / 1000);
const at = (s: number) => `${s}.000`;

test.before(async () => {
  n = await startNode();
  const body = [
    mLine(at(now - 7200), 'cpu|ST[region:us-east,host:a]', 'n', '1', check(UUID)),
    mLine(at(now - 60), 'cpu|ST[region:us-east,host:a]', 'n', '2', check(UUID)),
    mLine(at(now - 30), 'cpu|ST[region:us-east,host:a]', 'n', '3', check(UUID)),
    mLine(at(now - 60), 'cpu|ST[region:eu-west,host:b]', 'n', '4', check(UUID)),
    mLine(at(now - 60), 'mem|ST[region:us-west]', 'n', '5', check(OTHER)),
    mLine(at(now - 60), 'status|ST[region:us-east]', 's', 'ok', check(OTHER)),
    mLine(at(now - 60), 'cpu|ST[region:us-east,host:a]', 'n', '9', check(THIRD, 8)), // same name, other account
    ['H1', at(now - 60), check(OTHER), 'status|ST[region:us-east]', 'AAEKAAAB'].join('\t'),
  ].join('\n');
  const r = await put(n.url, body);
  if (r.status !== 200 || r.json.errors !== 0) throw new Error(`setup failed: ${JSON.stringify(r.json)}`);
});
test.after.always(async () => {
  await n?.stop();
});

const find = (query: string, extra = '', account = 7) => getJson(`${n.url}/find/${account}/tags?query=${encodeURIComponent(query)}${extra}`);
const names = (rows: { metric_name: string }[]) => rows.map((r) => r.metric_name).sort();

test('boolean tag queries select by name and stream tags', async (t) => {
  t.deepEqual(names((await find('and(__name:cpu,region:us-*)')).json), ['cpu|ST[host:a,region:us-east]']);
  t.deepEqual(names((await find('or(__name:mem,host:b)')).json), ['cpu|ST[host:b,region:eu-west]', 'mem|ST[region:us-west]']);
  t.deepEqual(names((await find('and(region:/^us-/,not(__name:cpu))')).json), ['mem|ST[region:us-west]', 'status|ST[region:us-east]']);
  t.deepEqual(names((await find(`and(__check_uuid:${OTHER})`)).json), ['mem|ST[region:us-west]', 'status|ST[region:us-east]']);
  t.deepEqual(names((await find('and(host)')).json), ['cpu|ST[host:a,region:us-east]', 'cpu|ST[host:b,region:eu-west]']);
  t.deepEqual((await find('and(__name:nothing)')).json, []);
});

test('records carry the interface fields; types are comma-joined', async (t) => {
  const [status] = (await find('and(__name:status)')).json;
  t.is(status.uuid, OTHER);
  t.is(status.metric_name, 'status|ST[region:us-east]');
  t.is(status.account_id, 7);
  t.is(status.type, 'histogram,text');
  t.is(status.check_name, 'c_7_1::http');
  t.true(Array.isArray(status.activity));
  const [cpu] = (await find('and(__name:cpu,host:a)')).json;
  t.is(cpu.type, 'numeric');
  // Samples 2 hours and 1 minute ago coalesce into one window (gap < 8 h), 5-minute granularity.
  t.is(cpu.activity.length, 1);
  const [a, b] = cpu.activity[0];
  t.is(a % 300, 0);
  t.true(a <= now - 7200 && b >= now - 30);
  t.false('activity' in (await find('and(__name:cpu,host:a)', '&activity=0')).json[0]);
});

test('accounts are separate; the header form works', async (t) => {
  t.deepEqual(names((await find('and(__name:cpu)', '', 8)).json), ['cpu|ST[host:a,region:us-east]']);
  const r = await fetch(`${n.url}/find/tags?query=${encodeURIComponent('and(__name:mem)')}`, { headers: { 'X-Snowth-Account-Id': '7' } });
  t.deepEqual(names((await r.json()) as any), ['mem|ST[region:us-west]']);
  const missing = await getJson(`${n.url}/find/tags?query=and(__name:mem)`);
  t.is(missing.status, 400);
});

test('count_only, activity filters and the advisory limit', async (t) => {
  t.deepEqual((await find('and(region:*)', '&count_only=1')).json, { count: 4, estimate: false });
  t.is((await find('and(region:*)', `&activity_start_secs=${now + 3600}`)).json.length, 0);
  t.is((await find('and(region:*)', `&activity_start_secs=now-1h&activity_end_secs=now`)).json.length, 4);
  t.is((await find('and(region:*)', `&activity_end_secs=${now - 86400}`)).json.length, 0);
  const limited = await fetch(`${n.url}/find/7/tags?query=and(region:*)`, { headers: { 'x-svc-advisory-limit': '2' } });
  t.is(((await limited.json()) as unknown[]).length, 2);
  // As gosnowth's FindTags reads it: the count header is the total, also when the limit cut the rows.
  const goStyle = await fetch(`${n.url}/find/7/tags?query=${encodeURIComponent('and(region:*)')}&activity=0&latest=0`, { headers: { 'X-Snowth-Advisory-Limit': '2' } });
  t.is(((await goStyle.json()) as unknown[]).length, 2);
  t.is(goStyle.headers.get('X-Snowth-Search-Result-Count'), '4');
  t.is(goStyle.headers.get('X-Snowth-Search-Result-Count-Is-Estimate'), 'false');
  t.is(goStyle.headers.get('x-svc-search-result-count'), '4');
  const limitedCount = await fetch(`${n.url}/find/7/tags?query=and(region:*)&count_only=1`, { headers: { 'x-svc-advisory-limit': '2' } });
  t.deepEqual(await limitedCount.json(), { count: 4, estimate: false });
});

test('latest values: 1 only when tracked, 2 computes and turns tracking on', async (t) => {
  t.deepEqual((await find('and(__name:cpu,host:a)', '&latest=1')).json[0].latest, {});
  const two = (await find('and(__name:cpu,host:a)', '&latest=2')).json[0].latest;
  t.deepEqual(two, { numeric: [[(now - 60) * 1000, 2], [(now - 30) * 1000, 3]] });
  t.deepEqual((await find('and(__name:cpu,host:a)', '&latest=1')).json[0].latest, two);
  t.deepEqual((await find('and(__name:status)', '&latest=2')).json[0].latest, { text: [[(now - 60) * 1000, 'ok']] });
});

test('tag_cats and tag_vals', async (t) => {
  t.deepEqual((await getJson(`${n.url}/find/7/tag_cats?query=and(__name:cpu)`)).json, ['host', 'region']);
  t.deepEqual((await getJson(`${n.url}/find/7/tag_vals?query=and(__name:cpu)&category=region`)).json, ['eu-west', 'us-east']);
  t.deepEqual((await getJson(`${n.url}/find/7/tag_vals?query=and(region:us-*)&category=__name`)).json, ['cpu', 'mem', 'status']);
});

test('active_count: active metrics per 5-minute slice from the aligned start', async (t) => {
  // Account 11, three days ago: m1 in slices 0 and 1, m2 in slice 2, m3 nine hours later (its own window).
  const t0 = now - 3 * 86_400 - ((now - 3 * 86_400) % 300);
  const acct = (uuid: string) => check(uuid, 11);
  const body = [
    mLine(at(t0 + 10), 'm1', 'n', '1', acct(UUID)),
    mLine(at(t0 + 310), 'm1', 'n', '1', acct(UUID)),
    mLine(at(t0 + 610), 'm2|ST[k:v]', 'n', '1', acct(UUID)),
    mLine(at(t0 + 9 * 3600), 'm3', 'n', '1', acct(UUID)),
  ].join('\n');
  t.is((await put(n.url, body)).status, 200);
  const count = (q: string, path = '/find/11/active_count', headers: Record<string, string> = {}) => fetch(`${n.url}${path}?${q}`, { headers });
  const range = `activity_start_secs=${t0 + 100}&activity_end_secs=${t0 + 1200}`;
  const all = await count(range);
  t.is(all.status, 200);
  t.deepEqual(await all.json(), { account_id: 11, activity_start: t0, estimate: false, period_counts: [1, 1, 1, 0] }, 'the start is rounded down to its slice');
  t.deepEqual(((await (await count(`${range}&query=${encodeURIComponent('and(__name:m1)')}`)).json()) as any).period_counts, [1, 1, 0, 0]);
  t.deepEqual(((await (await count(`${range}&query=${encodeURIComponent('and(k:v)')}`)).json()) as any).period_counts, [0, 0, 1, 0]);
  const later = (await (await count(`activity_start_secs=${t0 + 9 * 3600}&activity_end_secs=${t0 + 9 * 3600 + 300}`)).json()) as any;
  t.deepEqual(later.period_counts, [1]);
  const header = await count(range, '/find/active_count', { 'x-snowth-account-id': '11' });
  t.deepEqual(((await header.json()) as any).period_counts, [1, 1, 1, 0], 'the header form');
  t.deepEqual(((await (await count(range, '/find/12/active_count')).json()) as any).period_counts, [0, 0, 0, 0], 'another account');
  const backwards = await count(`activity_start_secs=${t0 + 600}&activity_end_secs=${t0}`);
  t.is(backwards.status, 400);
  t.regex(((await backwards.json()) as any).error, /activity_start_secs/);
  t.is((await count('activity_start_secs=0')).status, 400, 'more slices than a request may have');
  t.is((await count(`${range}&query=and(`)).status, 400);
  // Defaults: the last day up to now; account 7's metrics were active a minute ago (cpu host:a also 2 h ago).
  const recent = (await (await count('', '/find/7/active_count')).json()) as any;
  t.true(recent.period_counts.length === 288 || recent.period_counts.length === 289, 'a day of slices from the slice holding now - 1 day');
  t.is(Math.max(...recent.period_counts.slice(-2)), 4, "account 7's four metrics, a minute ago");
  t.is(recent.period_counts[0], 0);
});

test('explain=1: the query as each node parsed it, one header per node', async (t) => {
  const r = await fetch(`${n.url}/find/7/tags?query=${encodeURIComponent('hint(and(__name:cpu, region:"us-east"), index:none)')}&explain=1`);
  t.is(r.status, 200);
  const svc = [...r.headers].filter(([k]) => k.startsWith('x-svc-find-'));
  t.is(svc.length, 1, 'a standalone node: itself');
  t.is(svc[0]![1], 'and(__name:cpu,region:us-east)');
  t.is(r.headers.get(svc[0]![0].replace('x-svc-', 'x-snowth-')), svc[0]![1]);
  t.deepEqual(names((await r.json()) as any), ['cpu|ST[host:a,region:us-east]']);
  const cats = await fetch(`${n.url}/find/7/tag_cats?query=and(__name:cpu)&explain=1`);
  t.true([...cats.headers].some(([k, v]) => k.startsWith('x-svc-find-') && v === 'and(__name:cpu)'));
  const plain = await fetch(`${n.url}/find/7/tags?query=and(__name:cpu)`);
  t.false([...plain.headers].some(([k]) => k.startsWith('x-svc-find-')));
  t.is((await find('and(__name:cpu)', '&explain=2')).status, 400);
});

test('bad queries and parameters are 400 with a reason', async (t) => {
  const bad = await find('and(__name:cpu');
  t.is(bad.status, 400);
  t.regex(bad.json.error, /position/);
  t.is((await getJson(`${n.url}/find/7/tags`)).status, 400);
  t.is((await find('and(a:b)', '&latest=3')).status, 400);
  t.is((await find('and(a:b)', '&activity_start_secs=yesterday')).status, 400);
  t.is((await getJson(`${n.url}/find/x/tags?query=and(a:b)`)).status, 400);
  const limited = await fetch(`${n.url}/find/7/tags?query=and(a:b)`, { headers: { 'x-svc-advisory-limit': '0' } });
  t.is(limited.status, 400);
});

test.serial('the index survives a restart (runs first: serial tests precede concurrent ones)', async (t) => {
  const dir = n.dataDir;
  await n.stop(false);
  n = await startNode({}, dir);
  t.deepEqual(names((await find('and(__name:cpu,region:us-*)')).json), ['cpu|ST[host:a,region:us-east]']);
  t.is((await find('and(__name:status)')).json[0].type, 'histogram,text');
});

test('planned search answers exactly what matching every metric answers', async (t) => {
  // Account 9: 6 names × 24 hosts, hosts chosen so prefixes overlap (h1, h10…, h2x) and
  // some metrics carry a tag twice under one category.
  const account = 9;
  const uuid = '0a2a3f6c-0000-4000-8000-000000000009';
  const hosts = ['h1', 'h10', 'h11', 'h12', 'h19', 'h2', 'h20', 'h21', 'web-1', 'web-2', 'db-1', 'x'].flatMap((h) => [h, `${h}z`]);
  const views: MetricView[] = [];
  const lines: string[] = [];
  for (const [i, host] of hosts.entries()) {
    for (let k = 0; k < 6; k++) {
      const tags: [string, string][] = [['host', host], ['role', k % 2 ? 'api' : 'db'], ...(i % 5 === 0 ? ([['host', 'extra']] as [string, string][]) : [])];
      const name = `n${k}|ST[${tags.map(([c, v]) => `${c}:${v}`).join(',')}]`;
      lines.push(mLine(at(now - 60), name, 'n', String(k), check(uuid, account)));
      views.push({ name: `n${k}`, checkUuid: uuid, types: ['numeric'], tags, activity: [] });
    }
  }
  t.is((await put(n.url, lines.join('\n'))).json.errors, 0);
  const queries = [
    'and(__name:n3,host:h1)',
    'and(__name:n*,host:h1*)',
    'and(__name:/^n[2-4]$/,host:/^h1[0-9]$/)',
    'and(host:/^h2/,role:api)',
    'and(host:[graphite]web-*,__name:n1)',
    'and(host:extra,not(role:db))',
    'and(host,__name:/n5/)',
    'and(host:*z,role:db)',
    'or(host:x,host:db-1)',
    'and(__name:n0,host:nothing*)',
  ];
  for (const q of queries) {
    const expected = views.filter((v) => matchTagQuery(parseTagQuery(q), v, now)).map(canonicalOf);
    const got = ((await find(q, '&activity=0', account)).json as { metric_name: string }[]).map((r) => r.metric_name);
    t.deepEqual(got.sort(), expected.sort(), q);
  }
});

/** The canonical name of a view's metric: tags de-duplicated and sorted. */
function canonicalOf(v: MetricView): string {
  return `${v.name}|ST[${[...new Set(v.tags.map(([c, val]) => `${c}:${val}`))].sort().join(',')}]`;
}
