// Rebalance on the real rig: a nats-server, three `ferrite serve` processes at W=2, and a
// fourth started with the grown topology. Here the rebalance is first activated on two of the
// three old nodes only, so it is held at VOTE (no walk starts until every node dual-writes):
// writes through them reach the new owners as well as the old ones, reads keep the old topology,
// a restarted node resumes its dual writes, and after an abort new writes stop going to the new
// node. Then it is activated on all three and runs to the end: what was written before reaches
// the new node (numeric, text, histograms counted once, check tags), and only what it owns.
// test/rebalance-complete.test.ts and test/rebalance-continuous.test.ts run more to the end.
import test from 'ava';
import { histogramToBase64, Histogram } from '../model/histogram/index.js';
import { startCluster } from './helpers/cluster.js';
import { CHECK, getJson, killSpawnedNodes, mLine, put, UUID } from './helpers/node.js';
import { eventually, growBy, owners, post, raw, stateOf } from './helpers/rebalance.js';

test.after.always(killSpawnedNodes);

test.serial('rebalance 3 → 4 held at VOTE until every node is activated: writes during reach the new owners; reads stay on the old topology; a restart resumes; an abort stops the copies; then data written before reaches them', async (t) => {
  const c = await startCluster(3, 2);
  const grown = await growBy(c);
  try {
    const [a] = c.members.map((m) => m.url) as [string];
    const names = Array.from({ length: 40 }, (_, i) => `c.rb${i}`);
    const nextOwners = new Map<string, string[]>();
    for (const name of names) nextOwners.set(name, await owners(grown.node.url, name));
    const moving = names.filter((n) => nextOwners.get(n)!.includes(grown.id));
    t.true(moving.length > 0, 'some metrics get the new node as an owner');

    // Text and histogram metrics too, of which those the new node will own are checked there.
    // At least `count` names, and more until one moves: the new node's share of the ring depends on its random id.
    const namesWithMoving = async (prefix: string, count: number): Promise<[string[], string[]]> => {
      const list: string[] = [];
      const moves: string[] = [];
      for (let i = 0; (list.length < count || moves.length === 0) && i < 400; i++) {
        list.push(`${prefix}${i}`);
        if ((await owners(grown.node.url, list[i]!)).includes(grown.id)) moves.push(list[i]!);
      }
      return [list, moves];
    };
    const [texts, movingTexts] = await namesWithMoving('c.rbtext', 12);
    const [hists, movingHists] = await namesWithMoving('c.rbhist', 24);
    t.true(movingTexts.length > 0 && movingHists.length > 0, 'some text and histogram metrics move');
    const hist = new Histogram();
    hist.insert(3);
    const before = await put(
      a,
      [
        ...names.map((n, i) => mLine('940.000', n, 'n', String(-i - 1))),
        ...texts.map((n) => mLine('940.000', n, 's', `up ${n}`)),
        ...hists.map((n) => ['H1', '1000.000', CHECK, n, histogramToBase64(hist)].join('\t')),
      ].join('\n'),
    );
    t.is(before.status, 200);
    await c.settled();
    for (const name of moving) t.is((await raw(grown.node.url, name) as { code?: string }).code, 'FER_ERR_METRIC_NOT_FOUND', `${name} is not on the new node before the rebalance`);

    // Check tags set (and partly removed) before the rebalance, unscoped and in an account.
    const tagged = ['0c7a9e11-0000-4000-8000-000000000001', '0c7a9e11-0000-4000-8000-000000000002'] as const;
    const tag = (url: string, body: unknown, account?: string) => fetch(url, { method: 'POST', body: JSON.stringify(body), ...(account ? { headers: { 'x-svc-account-id': account } } : {}) });
    t.is((await tag(`${a}/meta/check/tag/${tagged[0]}`, { add: ['team:x', 'gone:1'] })).status, 200);
    t.is((await tag(`${a}/meta/check/tag/${tagged[0]}`, { remove: ['gone:1'] })).status, 200);
    t.is((await tag(`${a}/meta/check/tag/${tagged[1]}`, { add: ['team:b'] }, '5')).status, 200);
    await c.settled();

    for (const m of c.members) t.is((await post(`${m.url}/topology/${grown.hash}`, grown.json)).status, 200);
    const active = c.members.slice(0, 2);
    for (const m of active) {
      const r = await post(`${m.url}/rebalance/activate/${grown.hash}`);
      t.is(r.status, 200, JSON.stringify(r.json));
      t.is(r.json.state, 'TOPO_REBALANCE_VOTE');
    }
    await eventually('the wait for the third node to be logged', async () => c.members[0]!.running!.log.some((l) => l.includes('VOTE waits for these nodes to activate') && l.includes(c.members[2]!.id)));

    // Held at VOTE: writes through an activated node go to the old owners and the new ones.
    const during = await put(a, names.map((n, i) => mLine('1000.000', n, 'n', String(i))).join('\n'));
    t.is(during.status, 200, JSON.stringify(during.json));
    await c.settled();
    for (const m of active) t.is(await stateOf(m.url), 'TOPO_REBALANCE_VOTE', `${m.id} held at VOTE while a node is not activated`);
    for (const name of moving) t.deepEqual(await raw(grown.node.url, name), [[1000000, names.indexOf(name)]], `${name}: the write during reached the new node (nothing was walked yet)`);
    for (const name of names.filter((n) => !moving.includes(n))) t.is(((await raw(grown.node.url, name)) as { code?: string }).code, 'FER_ERR_METRIC_NOT_FOUND', `${name} (not the new node's) was not sent to it`);
    const both = (name: string) => [[940000, -names.indexOf(name) - 1], [1000000, names.indexOf(name)]];
    for (const name of names) {
      for (const owner of await owners(a, name)) t.deepEqual(await raw(c.members.find((m) => m.id === owner)!.url, name), both(name), `${name} on its current owner`);
      const r = await getJson(`${c.members[2]!.url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=100000.000`);
      t.deepEqual(r.json, both(name), `${name} readable through any old node (old topology)`);
    }

    // A restart of an activated node resumes the rebalance, and with it the dual writes.
    await c.kill(0);
    await c.start(0);
    t.is(await stateOf(a), 'TOPO_REBALANCE_VOTE');
    t.is((await put(a, moving.map((n) => mLine('1060.000', n, 'n', '7')).join('\n'))).status, 200);
    for (const name of moving) await eventually(`${name}'s write after the restart on the new node`, async () => ((await raw(grown.node.url, name)) as unknown[]).length === 2);

    for (const m of active) t.is((await post(`${m.url}/rebalance/deactivate/${grown.hash}`)).status, 200);
    await c.settled();
    t.is((await put(a, moving.map((n) => mLine('1120.000', n, 'n', '8')).join('\n'))).status, 200);
    await c.settled();
    for (const name of moving) {
      const old = (await owners(a, name)).map((id) => c.members.find((m) => m.id === id)!.url);
      for (const url of old) t.is(((await raw(url, name)) as unknown[]).length, 4, `${name}: its current owners got the write after the abort`);
    }
    // Give a stray copy time to arrive before checking that none did.
    await new Promise((r) => setTimeout(r, 1000));
    for (const name of moving) t.is(((await raw(grown.node.url, name)) as unknown[]).length, 2, `${name}: after the abort, the new node gets nothing more`);
    const state = await getJson(`${a}/state`);
    t.false(grown.id in state.json.replication.peers, 'an aborted rebalance leaves no outbox for the node that did not join');

    // Activated on every old node: the walks send what was written before, and it runs to the end.
    for (const m of c.members) t.is((await post(`${m.url}/rebalance/activate/${grown.hash}`)).status, 200);
    await eventually('the rebalance to finish', async () => (await Promise.all(c.members.map((m) => stateOf(m.url)))).every((s) => s === 'TOPO_REBALANCE_IDLE'), 120_000);
    const all = (name: string) => [...both(name), [1060000, 7], [1120000, 8]];
    for (const name of moving) t.deepEqual(await raw(grown.node.url, name), all(name), `${name}: everything written before and during on the new node, once`);
    for (const name of movingTexts) t.deepEqual((await getJson(`${grown.node.url}/read/0/2000/${UUID}/${name}`)).json, [[940000, `up ${name}`]], `text ${name} on the new node`);
    t.deepEqual((await getJson(`${grown.node.url}/meta/check/tag/${tagged[0]}`)).json, { [tagged[0]]: ['team:x'] }, 'check tags reach the new node, removals included');
    t.deepEqual((await getJson(`${grown.node.url}/meta/check/tag/5/${tagged[1]}`)).json, { [tagged[1]]: ['team:b'] }, 'account-scoped check tags too');
    for (const name of movingHists) t.deepEqual((await getJson(`${grown.node.url}/histogram/1000/1000/60/${UUID}/${name}`)).json, [[960, 60, { '+30e-001': 1 }]], `histogram ${name} on the new node, counted once`);
    for (const name of names.filter((n) => !moving.includes(n))) t.is(((await raw(grown.node.url, name)) as { code?: string }).code, 'FER_ERR_METRIC_NOT_FOUND', `${name} (not the new node's) was not sent to it`);
  } finally {
    grown.node.child.kill('SIGTERM');
    await grown.node.exited;
    await c.stop();
  }
});
