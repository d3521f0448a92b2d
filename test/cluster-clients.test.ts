// IRONdb clients against a real cluster (nats-server and three `ferrite serve` processes,
// W=2): every metric is stored on exactly the owners a client computes from the topology
// (§8.1), each node's /locate/xml and topology hash say so, and check tags set on one node
// are journaled to every node.
import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { clientOwners, clientRing, clientTopologyHash } from './helpers/irondb-ring.js';
import { getJson, killSpawnedNodes, mLine, put, UUID } from './helpers/node.js';

let c: TestCluster;
test.before(async () => {
  c = await startCluster(3, 2);
});
test.after.always(async () => {
  await c?.stop();
  killSpawnedNodes();
});

test.serial('data lands on the owners a client computes; /locate/xml and the hash agree', async (t) => {
  // The helper's topology: file order, weight 32, no sides.
  const nodes = c.members.map((m) => ({ id: m.id, weight: 32 }));
  const ring = clientRing(nodes);
  const hash = clientTopologyHash(2, nodes);
  for (const m of c.members) t.is((await getJson(`${m.url}/state`)).json.current, hash);
  const names = Array.from({ length: 40 }, (_, i) => `place.${i}|ST[k:${i % 7}]`);
  const put1 = await put(c.members[0]!.url, names.map((name) => mLine('100.000', name, 'n', '1')).join('\n'));
  t.is(put1.status, 200);
  await c.settled();
  for (const name of names) {
    const owners = clientOwners(ring, 2, false, `${UUID}-${name}`);
    for (const m of c.members) {
      const local = await fetch(`${m.url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0&end_ts=1000`, { headers: { 'x-svc-proxied': '1' } });
      t.is(local.status, owners.includes(m.id) ? 200 : 404, `${name} on ${m.id} (owners ${owners.join()})`);
      const located = await (await fetch(`${m.url}/locate/xml/${UUID}/${encodeURIComponent(name)}`)).text();
      t.deepEqual([...located.matchAll(/<node id="([^"]+)"/g)].map((x) => x[1]), owners, name);
    }
  }
});

test.serial('check tags set on one node reach every node, and every node searches by them', async (t) => {
  const [a, b, z] = c.members.map((m) => m.url) as [string, string, string];
  const tags = (url: string) => getJson(`${url}/meta/check/tag/${UUID}`).then((r) => r.json[UUID]);
  const post = await fetch(`${a}/meta/check/tag/${UUID}`, { method: 'POST', body: JSON.stringify({ add: ['env:prod', 'team:x'] }) });
  t.is(post.status, 200);
  await c.settled();
  for (const url of [a, b, z]) t.deepEqual(await tags(url), ['env:prod', 'team:x'], url);
  await fetch(`${b}/meta/check/tag/${UUID}`, { method: 'POST', body: JSON.stringify({ remove: ['team:x'] }) });
  await c.settled();
  for (const url of [a, b, z]) t.deepEqual(await tags(url), ['env:prod'], url);
  // find fans out; each node matches the metrics it answers for by the check's tags
  const found = await getJson(`${z}/find/123/tags?query=${encodeURIComponent('and(env:prod,__name:place.*)')}`);
  t.is(found.json.length, 40);
  t.true(found.json.every((r: { check_tags: string[] }) => r.check_tags.join() === 'env:prod'));
  await fetch(`${z}/meta/check/tag/${UUID}`, { method: 'DELETE' });
  await c.settled();
  for (const url of [a, b, z]) t.deepEqual(await tags(url), [], url);
  t.is((await getJson(`${a}/find/123/tags?query=${encodeURIComponent('and(env:prod)')}`)).json.length, 0);
});

test.serial('graphite: lines written to one node are found and read from another', async (t) => {
  const [a, , z] = c.members.map((m) => m.url) as [string, string, string];
  const t0 = 1_700_000_040;
  const lines = Array.from({ length: 12 }, (_, i) => `g.m${i} ${i} ${t0}`).join('\n');
  t.is((await fetch(`${a}/graphite/9/${UUID}/dev`, { method: 'POST', body: lines })).status, 200);
  await c.settled();
  const found = (await getJson(`${z}/graphite/9/graphite.dev./metrics/find/?query=g.*`)).json as { name: string; leaf_data: unknown }[];
  t.is(found.length, 12);
  const body = { start: t0, end: t0 + 60, names: found.map((f) => ({ leaf_name: f.name, leaf_data: f.leaf_data })) };
  const series = (await (await fetch(`${z}/graphite/9/graphite.dev./series_multi/`, { method: 'POST', body: JSON.stringify(body) })).json()) as { series: Record<string, number[]> };
  t.deepEqual(series.series, Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`g.m${i}`, [i]])));
});
