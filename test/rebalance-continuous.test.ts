// Rebalances under a continuous write load on the real rig (nats-server, `ferrite serve`
// processes at W=2): 3 → 4 nodes, then 4 → 3 (one of the first nodes leaves). A writer keeps
// writing through every node — the joining one (started with --join) and the leaving one too —
// and records what was acknowledged; a reader keeps reading every metric through every node,
// during each rebalance and after it, and records every acknowledged sample it does not get
// back, any value never written and any timestamp answered twice. The
// rebalance is activated on the nodes at different moments, writes flowing through a node not
// yet activated meanwhile: the case where writes routed before a node's activation once missed
// the new owners (README "Rebalance"). Afterwards: every node places metrics on the new ring,
// owners hold every acknowledged sample, non-owners none; the leaving node ends with nothing.
import test, { type ExecutionContext } from 'ava';
import { buildRing, ownersOf, parseTopology, type Ring } from '../model/topology/index.js';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { ReadChecker, WriteLoad, type NodeRef } from './helpers/load.js';
import { getJson, killSpawnedNodes, UUID, type ChildNode } from './helpers/node.js';
import { eventually, growBy, owners, post, raw, stateOf, topologyOf } from './helpers/rebalance.js';
import { REBALANCE_STATES } from '../actors/cluster/rebalance.js';

test.after.always(killSpawnedNodes);

const names = Array.from({ length: 40 }, (_, i) => `c.cont${i}`);
/** Write batches through a node not yet activated, while the first ones may already walk. */
const HELD_BACK_BATCHES = 24;

interface Rig {
  c: TestCluster;
  joined: ChildNode & { id: string };
  load: WriteLoad;
}
let rig: Rig | null = null;

test.after.always(async () => {
  rig?.joined.child.kill('SIGTERM');
  await rig?.joined.exited;
  await rig?.c.stop();
});

const refOf = (m: { id: string; url: string }): NodeRef => ({ id: m.id, url: m.url });

/** True once `url` reports `state` or a later one of the rebalance to `hash` (or finished it). */
async function reachedState(url: string, hash: string, state: string): Promise<boolean> {
  const r = (await getJson(`${url}/rebalance/state`)).json as { current: string; next: string; state: string };
  if (r.current === hash && r.next === '-') return true;
  return r.next === hash && REBALANCE_STATES.indexOf(r.state as never) >= REBALANCE_STATES.indexOf(state as never);
}

/**
 * Loads `to` on every node, activates it on `first` at once and on `last` only after
 * HELD_BACK_BATCHES more write batches (or once a first node got past REHASH), then waits
 * until every node of `everyone` is IDLE under it; the states seen meanwhile.
 */
async function rebalance(load: WriteLoad, to: { json: string; hash: string }, first: NodeRef[], last: NodeRef[], everyone: NodeRef[]): Promise<Set<string>> {
  for (const n of everyone) {
    const r = await post(`${n.url}/topology/${to.hash}`, to.json);
    if (r.status !== 200) throw new Error(`loading on ${n.id}: ${JSON.stringify(r.json)}`);
  }
  for (const n of first) await activate(n, to.hash);
  const from = load.batches;
  await eventually('writes through the nodes not yet activated', async () => load.batches >= from + HELD_BACK_BATCHES || (await reachedState(first[0]!.url, to.hash, 'TOPO_REBALANCE_REHASH_VOTE')), 120_000);
  for (const n of last) await activate(n, to.hash);
  const seen = new Set<string>();
  await eventually(
    'the rebalance to finish on every node',
    async () => {
      const states = await Promise.all(everyone.map(async (n) => (await getJson(`${n.url}/rebalance/state`)).json));
      for (const s of states) seen.add(s.state);
      return states.every((s) => s.current === to.hash && s.next === '-' && s.state === 'TOPO_REBALANCE_IDLE');
    },
    120_000,
  );
  return seen;
}

/** Runs `run` (a rebalance) while the writer and the reader go through `nodes`; nothing may be found wrong meanwhile. */
async function underLoad(t: ExecutionContext, load: WriteLoad, reader: ReadChecker, nodes: NodeRef[], run: () => Promise<Set<string>>): Promise<void> {
  load.start(() => nodes);
  reader.start(() => nodes);
  const before = load.batches;
  const seen = await run();
  const during = { batches: load.batches - before, reads: reader.reads };
  await load.stop();
  await reader.stop();
  t.log(`${during.batches} write batches (${load.failures} failed) and ${during.reads} reads during the rebalance (${reader.lagged} found a sample late); states seen: ${[...seen].join(', ')}`);
  t.true(during.batches > HELD_BACK_BATCHES && during.reads > 0, 'writes and reads happened during the rebalance');
  t.deepEqual(reader.problems, [], 'every acknowledged sample read back through every node during the rebalance');
}

async function activate(n: NodeRef, hash: string): Promise<void> {
  const r = await post(`${n.url}/rebalance/activate/${hash}`);
  if (r.status !== 200) throw new Error(`activating on ${n.id}: ${JSON.stringify(r.json)}`);
}

/** Every node places each metric on `ring`, its owners hold every acknowledged sample, the other nodes none. */
async function checkPlacement(t: ExecutionContext, load: WriteLoad, ring: Ring, nodes: NodeRef[]): Promise<void> {
  for (const node of nodes) {
    for (const name of names) {
      const want = ownersOf(ring, `${UUID}-${name}`).map((n) => n.id);
      t.deepEqual(await owners(node.url, name), want, `${name} placed on the new ring by ${node.id}`);
      const local = (await raw(node.url, name)) as [number, number][] | { code?: string };
      if (!want.includes(node.id)) {
        t.is((local as { code?: string }).code, 'FER_ERR_METRIC_NOT_FOUND', `${name}: ${node.id} does not own it and keeps none`);
        continue;
      }
      const stored = local as [number, number][];
      const acked = load.expected(name);
      t.is(new Set(stored.map(([ts]) => ts)).size, stored.length, `${name}: owner ${node.id} holds each timestamp once`);
      const have = new Map(stored);
      t.deepEqual(acked.filter(([ts, v]) => have.get(ts) !== v), [], `${name}: owner ${node.id} holds every acknowledged sample`);
    }
  }
}

test.serial('3 → 4 at W=2 under continuous writes, activated at different moments: every acknowledged sample readable throughout, ownership on the new ring after', async (t) => {
  const c = await startCluster(3, 2);
  const grown = await growBy(c, ['--join']);
  const load = new WriteLoad(names);
  rig = { c, joined: { ...grown.node, id: grown.id }, load };
  const old = c.members.map(refOf);
  for (const n of old) t.true(await load.writeThrough(n), 'a write before');
  await c.settled();

  const reader = new ReadChecker(load, () => c.settled(30_000, [grown.node.url]));
  // The joining node forwards what it gets to nodes not yet switched until every node runs its topology.
  const all = [...old, { id: grown.id, url: grown.node.url }];
  await underLoad(t, load, reader, all, () => rebalance(load, grown, old.slice(0, 2), old.slice(2), old));

  await eventually('the new node to record its join done', async () => (await getJson(`${grown.node.url}/state`)).json.join?.state === 'joined');
  const join = (await getJson(`${grown.node.url}/state`)).json.join;
  t.true(join.forwarded > 0, `the new node forwarded what it got meanwhile (${join.forwarded} requests)`);
  t.true(await load.writeThrough(all[3]!), 'a write through the new node after');
  await c.settled();
  for (const n of all) await reader.checkAll(n);
  t.deepEqual(reader.problems, [], 'and after it');
  await checkPlacement(t, load, buildRing(parseTopology(grown.json)), all);
});

test.serial('4 → 3 at W=2 under continuous writes: the leaving node relocates what it holds, the others take over, it ends with nothing', async (t) => {
  if (rig === null) return t.fail('the 3 → 4 test did not set up the cluster');
  const { c, joined, load } = rig;
  const all = [...c.members.map(refOf), { id: joined.id, url: joined.url }];
  const leaving = all[1]!;
  const staying = all.filter((n) => n !== leaving);
  const shrunk = topologyOf([...c.members.filter((m) => m.id !== leaving.id), { id: joined.id, port: Number(new URL(joined.url).port) }]);

  const reader = new ReadChecker(load, () => c.settled(30_000, [joined.url]));
  await underLoad(t, load, reader, all, () => rebalance(load, shrunk, [all[0]!, leaving, all[3]!], [all[2]!], all));

  await c.settled();
  // The leaving node still answers (it forwards every read) until it is stopped.
  for (const n of all) await reader.checkAll(n);
  t.deepEqual(reader.problems, [], 'and after it');
  for (const name of names) t.is(((await raw(leaving.url, name)) as { code?: string }).code, 'FER_ERR_METRIC_NOT_FOUND', `${name}: the leaving node keeps none`);
  t.is(await stateOf(leaving.url), 'TOPO_REBALANCE_IDLE');

  await c.kill(1);
  t.true(await load.writeThrough(staying[0]!), 'a write after the leaving node stopped');
  for (const n of staying) await reader.checkAll(n);
  t.deepEqual(reader.problems, [], 'and through the remaining nodes once it is gone');
  await checkPlacement(t, load, buildRing(parseTopology(shrunk.json)), staying);
});
