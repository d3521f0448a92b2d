import test from 'ava';
import { getJson, startNode, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startNode({ nodeId: 'bb6f7162-4828-11df-bab8-6bac200dcc2a', ingestWorkers: 1 });
});
test.after.always(async () => {
  await n?.stop();
});

test('/stats.json has the typed entries IRONdb clients read', async (t) => {
  const { status, json } = await getJson(`${n.url}/stats.json`);
  t.is(status, 200);
  t.deepEqual(json.identity, { _type: 's', _value: 'bb6f7162-4828-11df-bab8-6bac200dcc2a' });
  t.is(json.semver._type, 's');
  t.regex(json.semver._value, /^\d+\.\d+\.\d+/);
  t.regex(json.topology.current._value, /^[0-9a-f]{64}$/);
  t.is(json.topology.next._value, '-');
  t.is(json.application._value, 'ferrite');
});

test('/state reports identity, topology, rollups and string features', async (t) => {
  const { json } = await getJson(`${n.url}/state`);
  t.is(json.identity, 'bb6f7162-4828-11df-bab8-6bac200dcc2a');
  t.regex(json.current, /^[0-9a-f]{64}$/);
  t.is(json.next, '-');
  t.is(json.base_rollup, 60);
  t.deepEqual(json.rollups, [60, 300, 1800, 10800, 86400]);
  for (const v of Object.values(json.features)) t.is(typeof v, 'string');
  t.is(json.application, 'ferrite');
  t.is(typeof json.version, 'string');
});

test('/state names the runtime serving it: Node 24 LTS or newer, as npm scripts run it', async (t) => {
  const { json } = await getJson(`${n.url}/state`);
  t.is(json.node_version, process.version);
  t.true(Number(/^v(\d+)\./.exec(json.node_version)![1]) >= 24, `served on ${json.node_version}`);
  t.deepEqual((await getJson(`${n.url}/stats.json`)).json.node_version, { _type: 's', _value: process.version });
});

test('/admin/heap-snapshot writes the heap of a shard worker or a parse worker; bad `of` is a 400 naming it', async (t) => {
  const { openSync, readSync, closeSync } = await import('node:fs');
  // (The main thread's is the same call on another thread; each snapshot takes seconds, so two are taken here.)
  for (const of of ['0', 'parse0']) {
    const res = await fetch(`${n.url}/admin/heap-snapshot?of=${of}`, { method: 'POST' });
    t.is(res.status, 200, of);
    const body = (await res.json()) as { path: string; bytes: number };
    t.true(body.bytes > 100_000, `${of}: ${body.bytes} bytes`);
    t.true(body.path.startsWith(n.dataDir), 'written into the data directory');
    const head = Buffer.alloc(64);
    const fd = openSync(body.path, 'r');
    readSync(fd, head, 0, 64, 0);
    closeSync(fd);
    t.regex(head.toString(), /^\{\s*"snapshot"\s*:/, `${of}: a V8 heap snapshot`);
  }
  for (const of of ['parse', 'parse99', '99', 'x', '-1']) {
    const res = await fetch(`${n.url}/admin/heap-snapshot?of=${of}`, { method: 'POST' });
    t.is(res.status, 400, of);
    t.regex(JSON.stringify(await res.json()), /of/);
  }
});
