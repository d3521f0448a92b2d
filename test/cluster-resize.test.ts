// `ferrite cluster` grows and shrinks while it runs: `add` on its stdin starts a fourth node and
// rebalances onto it, `remove <id>` rebalances a node off and stops it; a bad command is answered
// with the reason; a rerun restarts the resized cluster, every node on its own data directory.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { parseTopology } from '../model/topology/index.js';
import { getJson, mLine, put, tempDir, UUID } from './helpers/node.js';
import { freeBase, portFree, startRig } from './helpers/rig.js';

const names = Array.from({ length: 20 }, (_, i) => `c.rig${i}`);
const read = async (url: string, name: string) => (await getJson(`${url}/raw/${UUID}/${name}?start_ts=0.000&end_ts=100000.000`)).json;
const stateOf = async (url: string) => (await getJson(`${url}/rebalance/state`)).json as { current: string; next: string; state: string };

test('ferrite cluster: add and remove a node while it runs, then restart the resized cluster', async (t) => {
  const dir = tempDir('ferrite-rig-resize-');
  const base = await freeBase(4);
  const rig = await startRig(base, dir);
  const [first, second] = rig.nodes as [(typeof rig.nodes)[0], (typeof rig.nodes)[0]];
  let added: { id: string; url: string };
  try {
    t.is((await put(first.url, names.map((n, i) => mLine('600.000', n, 'n', String(i))).join('\n'))).status, 200);

    let from = rig.lines.length;
    rig.send('remove 0c7a9e11-0000-4000-8000-00000000beef');
    t.regex((await rig.waitFor(/^failed: .*/, from))[0], /node 0c7a9e11-0000-4000-8000-00000000beef is not in the current topology/);
    rig.send('grow');
    t.regex((await rig.waitFor(/^failed: .*unknown.*/, from))[0], /unknown command 'grow'/);

    from = rig.lines.length;
    rig.send('add');
    const grownHash = (await rig.waitFor(/^adding node \S+ at \S+ \(topology ([0-9a-f]{64})\)/, from))[1]!;
    rig.send('add');
    t.truthy(await rig.waitFor(/^failed: a resize is under way; add refused/, from), 'one resize at a time');
    const m = await rig.waitFor(/^node (\S+) (\S+)$/, from);
    added = { id: m[1]!, url: m[2]! };
    t.is(added.url, `http://127.0.0.1:${base + 3}`, 'the next port after the first nodes');
    t.truthy(await rig.waitFor(/^rebalance complete: every node runs /, from));
    for (const n of [...rig.nodes, added]) t.like(await stateOf(n.url), { current: grownHash, next: '-', state: 'TOPO_REBALANCE_IDLE' }, n.id);
    t.is(parseTopology(readFileSync(path.join(dir, 'topology.json'), 'utf8')).hash, grownHash, 'topology.json names the grown topology');
    for (const name of names) t.deepEqual(await read(added.url, name), [[600000, names.indexOf(name)]], `${name} through the new node`);

    from = rig.lines.length;
    rig.send(`remove ${second.id}`);
    const shrunkHash = (await rig.waitFor(/^removing node \S+ \(topology ([0-9a-f]{64})\)/, from))[1]!;
    t.truthy(await rig.waitFor(new RegExp(`^removed ${second.id}$`), from));
    t.true(await portFree(base + 1), 'the removed node is stopped');
    for (const n of [first, rig.nodes[2]!, added]) t.like(await stateOf(n.url), { current: shrunkHash, next: '-', state: 'TOPO_REBALANCE_IDLE' }, n.id);
    for (const name of names) t.deepEqual(await read(rig.nodes[2]!.url, name), [[600000, names.indexOf(name)]], `${name} after the removal`);
  } finally {
    t.is(await rig.stop(), 0);
  }

  const again = await startRig(base, dir);
  try {
    t.deepEqual(again.nodes.map((n) => n.id).sort(), [first.id, rig.nodes[2]!.id, added.id].sort(), 'the resized cluster comes back');
    for (const name of names) t.deepEqual(await read(added.url, name), [[600000, names.indexOf(name)]], `${name} through the added node after the rerun`);
  } finally {
    t.is(await again.stop(), 0);
  }
});
