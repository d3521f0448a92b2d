// VOTE waits for agreement: a node leaves TOPO_REBALANCE_VOTE only once every node of both
// topologies has the next topology loaded, and then only once every one is activated (dual
// writes on, what it routed before confirmed). On the real rig (nats-server, three nodes at W=2
// and a fourth under the grown topology), the topology is loaded on two old nodes only and
// activated on one: it stays in VOTE, saying so in /rebalance/state and the log, until the third
// loads it, and then until the other two are activated; then the rebalance runs to the end.
import test from 'ava';
import { startCluster } from './helpers/cluster.js';
import { killSpawnedNodes } from './helpers/node.js';
import { eventually, growBy, post, stateOf } from './helpers/rebalance.js';

test.after.always(killSpawnedNodes);

test.serial('activate with the next topology missing on one node: VOTE until it is loaded there', async (t) => {
  const c = await startCluster(3, 2);
  const grown = await growBy(c);
  try {
    const [first, second, third] = c.members as [(typeof c.members)[0], (typeof c.members)[0], (typeof c.members)[0]];
    for (const m of [first, second]) t.is((await post(`${m.url}/topology/${grown.hash}`, grown.json)).status, 200);
    const r = await post(`${first.url}/rebalance/activate/${grown.hash}`);
    t.is(r.status, 200, JSON.stringify(r.json));
    t.is(r.json.state, 'TOPO_REBALANCE_VOTE');
    // It asks, and keeps waiting, naming the node that lacks it.
    await eventually('the wait to be logged', async () => first.running!.log.some((l) => l.includes('VOTE waits') && l.includes(third.id)));
    for (let i = 0; i < 8; i++) {
      t.is(await stateOf(first.url), 'TOPO_REBALANCE_VOTE', 'still in VOTE while a node lacks the next topology');
      await new Promise((res) => setTimeout(res, 250));
    }
    const waits = first.running!.log.filter((l) => l.includes('VOTE waits'));
    t.false(waits.some((l) => l.includes(second.id) || l.includes(grown.id)), 'nodes that have it (the new one runs under it) are not waited for');

    t.is((await post(`${third.url}/topology/${grown.hash}`, grown.json)).status, 200);
    await eventually('the wait for activation to be logged', async () => first.running!.log.some((l) => l.includes('VOTE waits for these nodes to activate') && l.includes(second.id) && l.includes(third.id)));
    t.is(await stateOf(first.url), 'TOPO_REBALANCE_VOTE', 'still in VOTE while other nodes are not activated');
    const activation = first.running!.log.filter((l) => l.includes('VOTE waits for these nodes to activate'));
    t.false(activation.some((l) => l.includes(grown.id)), 'the new node (running under the next topology) is not waited for');
    for (const m of [second, third]) t.is((await post(`${m.url}/rebalance/activate/${grown.hash}`)).status, 200);
    await eventually('the rebalance to finish', async () => (await Promise.all(c.members.map((m) => stateOf(m.url)))).every((s) => s === 'TOPO_REBALANCE_IDLE'), 60_000);
  } finally {
    grown.node.child.kill('SIGTERM');
    await grown.node.exited;
    await c.stop();
  }
});
