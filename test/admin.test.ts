import test from 'ava';
import { getJson, startNode, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startNode({ nodeId: 'bb6f7162-4828-11df-bab8-6bac200dcc2a' });
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
