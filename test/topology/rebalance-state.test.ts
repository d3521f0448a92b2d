// /rebalance/* on a real node: starting, refusing, aborting, and the state surviving restarts.
// The node is standalone, which cannot relocate data yet (README "Rebalance"), so a started
// rebalance goes no further than REHASH here; test/rebalance.test.ts runs one on a cluster.
import test from 'ava';
import { REBALANCE_STATES } from '../../actors/cluster/rebalance.js';
import { parseTopology, refusalOf } from '../../model/topology/index.js';
import { getJson, startNode, tempDir } from '../helpers/node.js';

const self = '7e1a0b2c-0000-4000-8000-000000000001';
const others = ['7e1a0b2c-0000-4000-8000-000000000002', '7e1a0b2c-0000-4000-8000-000000000003'];
const node = (id: string, side?: string) => ({ id, address: '127.0.0.1', port: 8112, weight: 16, ...(side ? { side } : {}) });
const grow = JSON.stringify({ write_copies: 1, nodes: [node(self), node(others[0]!)] });
const dropSelf = JSON.stringify({ write_copies: 1, nodes: others.map((id) => node(id)) });
const sided = JSON.stringify({ write_copies: 1, nodes: [node(self, 'a'), node(others[0]!, 'b')] });
const [growHash, dropHash, sidedHash] = [grow, dropSelf, sided].map((t) => parseTopology(t).hash) as [string, string, string];

async function post(url: string, body?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }) });
  return { status: res.status, json: await res.json() };
}

test('IRONdb states, in their documented order', (t) => {
  t.deepEqual(REBALANCE_STATES, ['TOPO_REBALANCE_IDLE', 'TOPO_REBALANCE_VOTE', 'TOPO_REBALANCE_REHASH', 'TOPO_REBALANCE_REHASH_VOTE', 'TOPO_REBALANCE_CLEANUP', 'TOPO_REBALANCE_COMPLETE', 'TOPO_REBALANCE_COMPLETE_VOTE']);
});

test('at W=2, removing one node of three is allowed, removing two is refused', (t) => {
  const ids = [self, ...others, '7e1a0b2c-0000-4000-8000-000000000004'];
  const topo = (w: number, members: string[]) => parseTopology(JSON.stringify({ write_copies: w, nodes: members.map((id) => node(id)) }));
  const three = topo(2, ids.slice(0, 3));
  t.is(refusalOf(three, topo(2, ids)), null, 'growing 3 → 4');
  t.is(refusalOf(three, topo(2, ids.slice(0, 2))), null, 'shrinking by W − 1');
  t.regex(refusalOf(three, topo(2, [ids[0]!, ids[3]!])) ?? '', /removes 2 node\(s\).*at most write_copies − 1 = 1/);
});

test('activate, refusals, a second activate, restart and deactivate', async (t) => {
  const dir = tempDir();
  let n = await startNode({ nodeId: self }, dir);
  try {
    const current = n.node.ring.topology.hash;
    t.deepEqual((await getJson(`${n.url}/rebalance/state`)).json, { current, next: '-', state: 'TOPO_REBALANCE_IDLE' });

    const unloaded = await post(`${n.url}/rebalance/activate/${growHash}`);
    t.is(unloaded.status, 404);
    t.is(unloaded.json.code, 'FER_ERR_TOPOLOGY_NOT_LOADED');
    t.true(unloaded.json.error.includes(growHash), unloaded.json.error);
    const garbage = await post(`${n.url}/rebalance/activate/not-a-hash`);
    t.is(garbage.status, 404);
    t.regex(garbage.json.error, /topology not-a-hash is not loaded/);

    for (const [body, hash] of [[grow, growHash], [dropSelf, dropHash], [sided, sidedHash]] as const) t.is((await post(`${n.url}/topology/${hash}`, body)).status, 200);
    const same = await post(`${n.url}/rebalance/activate/${current}`);
    t.is(same.status, 400);
    t.regex(same.json.error, /it is the current topology/);
    const tooMany = await post(`${n.url}/rebalance/activate/${dropHash}`);
    t.is(tooMany.status, 400);
    t.is(tooMany.json.code, 'FER_ERR_REBALANCE_REFUSED');
    t.regex(tooMany.json.error, new RegExp(`removes 1 node\\(s\\) \\(${self}\\) but at most write_copies − 1 = 0`));
    const sides = await post(`${n.url}/rebalance/activate/${sidedHash}`);
    t.is(sides.status, 400);
    t.regex(sides.json.error, /adds sides/);
    t.is((await getJson(`${n.url}/rebalance/state`)).json.state, 'TOPO_REBALANCE_IDLE', 'refusals change nothing');

    const started = await post(`${n.url}/rebalance/activate/${growHash.toUpperCase()}`);
    t.is(started.status, 200, JSON.stringify(started.json));
    t.deepEqual(started.json, { current, next: growHash, state: 'TOPO_REBALANCE_VOTE' });
    const again = await post(`${n.url}/rebalance/activate/${growHash}`);
    t.is(again.status, 409);
    t.is(again.json.code, 'FER_ERR_REBALANCE_BUSY');
    t.true(again.json.error.includes(growHash));
    t.is((await post(`${n.url}/rebalance/activate/${sidedHash}`)).status, 409, 'another target while one runs is a 409 too');

    await n.stop(false);
    n = await startNode({ nodeId: self }, dir);
    const resumed = (await getJson(`${n.url}/rebalance/state`)).json;
    t.like(resumed, { current, next: growHash }, 'resumed after a restart');
    t.true(['TOPO_REBALANCE_VOTE', 'TOPO_REBALANCE_REHASH'].includes(resumed.state), resumed.state);

    const wrong = await post(`${n.url}/rebalance/deactivate/${sidedHash}`);
    t.is(wrong.status, 409);
    t.is(wrong.json.code, 'FER_ERR_NO_REBALANCE');
    t.true(wrong.json.error.includes(sidedHash) && wrong.json.error.includes(growHash), wrong.json.error);
    const stopped = await post(`${n.url}/rebalance/deactivate/${growHash}`);
    t.is(stopped.status, 200);
    t.deepEqual(stopped.json, { current, next: '-', state: 'TOPO_REBALANCE_IDLE' });
    t.is((await post(`${n.url}/rebalance/deactivate/${growHash}`)).status, 409, 'nothing left to abort');

    await n.stop(false);
    n = await startNode({ nodeId: self }, dir);
    t.deepEqual((await getJson(`${n.url}/rebalance/state`)).json, { current, next: '-', state: 'TOPO_REBALANCE_IDLE' }, 'the abort survives a restart');
  } finally {
    await n.stop();
  }
});
