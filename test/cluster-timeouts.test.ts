// Cluster waits are bounded by one setting, peerTimeoutMs (issue 17 item 10), on a real
// cluster: a real nats-server and three `ferrite serve` processes (W=2), frozen with SIGSTOP
// or killed. Elapsed times are checked only as hang detectors, against a generous multiple
// of the bound, except where gossip already presumes a node down: then nothing should wait
// for it at all, so the reply must come before one bound has passed.
import test, { type ExecutionContext } from 'ava';
import { startCluster, type Member, type TestCluster } from './helpers/cluster.js';
import { getJson, killSpawnedNodes, mLine, put, UUID } from './helpers/node.js';

test.after.always(killSpawnedNodes);

const PEER_TIMEOUT_MS = 2000;
/** A reply later than this is a hang, whatever the machine's load. */
const HANG_MS = 4 * PEER_TIMEOUT_MS;
/** Gossip presumes a peer down once it has been silent this long (transport/gossip.ts). */
const GOSSIP_WINDOW_S = 8;

/** Nodes whose gossip clock a test moves forward (config testClock) rather than waiting 8 s. */
async function cluster(): Promise<TestCluster> {
  process.env.FERRITE_TEST_CLOCK = 'true';
  try {
    return await startCluster(3, 2, ['--peer-timeout-ms', String(PEER_TIMEOUT_MS)]);
  } finally {
    delete process.env.FERRITE_TEST_CLOCK;
  }
}

/** Moves `node`'s gossip clock forward. */
async function advanceClock(node: Member, ms: number): Promise<void> {
  const res = await fetch(`${node.url}/admin/test-clock?advance_ms=${ms}`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`advancing the clock: ${res.status} ${await res.text()}`);
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  const value = await work();
  return { value, ms: Date.now() - t0 };
}

async function ownerIds(c: TestCluster, name: string): Promise<string[]> {
  const r = await getJson(`${c.members[0]!.url}/locate/json/${UUID}/${encodeURIComponent(name)}`);
  return (r.json.location as { id: string }[]).map((o) => o.id);
}

function rawRead(url: string, name: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=100000.000`, { headers });
}

/** Every owner's own copy of each metric `names[i]` holds exactly [[ts, i]]. */
async function everyOwnerHolds(t: ExecutionContext, c: TestCluster, names: string[], ts: number): Promise<void> {
  for (const [i, name] of names.entries()) {
    for (const id of await ownerIds(c, name)) {
      const owner = c.members.find((m) => m.id === id)!;
      const res = await rawRead(owner.url, name, { 'x-svc-proxied': '1' });
      t.deepEqual(await res.json(), [[ts * 1000, i]], `${name} on its owner ${id}`);
    }
  }
}

/** Seconds since `reader` last heard from `peer` by gossip (-1: never). */
async function gossipAge(reader: Member, peer: Member): Promise<number> {
  const entries = (await getJson(`${reader.url}/gossip/json`)).json as { id: string; gossip_age: string }[];
  return Number(entries.find((e) => e.id === peer.id)!.gossip_age);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test.serial('with nats-server frozen or down a write answers 503 FER_ERR_NOT_REPLICATED within the bound, and its data is delivered once NATS is back', async (t) => {
  const c = await cluster();
  try {
    const a = c.members[0]!.url;
    // Twenty metrics: node 0 owns some and journals every one it does not own to its owners.
    const batch = (prefix: string) => Array.from({ length: 20 }, (_, i) => `t.${prefix}${i}`);
    const body = (names: string[], ts: number) => names.map((n, i) => mLine(`${ts}.000`, n, 'n', String(i))).join('\n');
    t.is((await put(a, body(batch('before'), 1000))).status, 200);

    for (const [outage, signal] of [['frozen', 'SIGSTOP'], ['down', 'SIGKILL']] as const) {
      c.nats.child.kill(signal);
      const names = batch(outage);
      const w = await timed(() => put(a, body(names, 2000)));
      t.is(w.value.status, 503, `${outage}: ${JSON.stringify(w.value.json)}`);
      t.is(w.value.json.code, 'FER_ERR_NOT_REPLICATED');
      t.regex(w.value.json.error, new RegExp(`within ${PEER_TIMEOUT_MS} ms`));
      t.true(w.ms < HANG_MS, `${outage}: the write answered after ${w.ms} ms`);
      if (signal === 'SIGSTOP') c.nats.child.kill('SIGCONT');
      else await c.restartNats();
    }
    // Both refused writes are on disk in node 0's outbox and reach every owner.
    await c.settled(60_000);
    await everyOwnerHolds(t, c, batch('frozen'), 2000);
    await everyOwnerHolds(t, c, batch('down'), 2000);
    t.is((await put(a, body(batch('after'), 3000))).status, 200);
  } finally {
    await c.stop();
  }
});

test.serial('a frozen owner: proxied reads, fetch streams and find answer from the other owner, at once when gossip presumes it down; SIGCONT restores it', async (t) => {
  const c = await cluster();
  try {
    const frozen = c.members[2]!;
    // A metric whose first owner is the node to be frozen, read through the node owning none.
    const names = Array.from({ length: 30 }, (_, i) => `t.frozen${i}`);
    t.is((await put(c.members[0]!.url, names.map((n, i) => mLine('1000.000', n, 'n', String(i))).join('\n'))).status, 200);
    let name = '';
    let owners: string[] = [];
    for (const n of names) {
      owners = await ownerIds(c, n);
      if (owners[0] === frozen.id) {
        name = n;
        break;
      }
    }
    t.truthy(name, 'some metric has the frozen node as first owner');
    const value = names.indexOf(name);
    const live = owners[1]!;
    const reader = c.members.find((m) => !owners.includes(m.id))!;
    await c.settled();

    const fetchBody = JSON.stringify({ start: 1000, period: 60, count: 1, streams: [{ uuid: UUID, name, kind: 'numeric', transform: 'average' }], reduce: [{ label: 'x', method: 'sum' }] });
    const fetchStream = () => fetch(`${reader.url}/fetch`, { method: 'POST', body: fetchBody, headers: { 'content-type': 'application/json' } }).then(async (r) => ({ status: r.status, json: (await r.json()) as { data: number[][] } }));
    const countOnly = () => fetch(`${reader.url}/find/tags?query=and(__name:t.frozen*)&count_only=1`, { headers: { 'x-svc-account-id': '123' } }).then(async (r) => ({ json: (await r.json()) as { count: number; estimate: boolean }, unanswered: r.headers.get('x-svc-unanswered-nodes') }));

    frozen.running!.child.kill('SIGSTOP');
    // Before gossip notices, the frozen first owner is asked first and given up after the bound.
    const early = await timed(() => rawRead(reader.url, name));
    t.is(early.value.status, 200);
    t.deepEqual(await early.value.json(), [[1000000, value]]);
    t.is(early.value.headers.get('x-svc-proxied-to'), live);
    t.true(early.ms < HANG_MS, `proxied read before gossip noticed: ${early.ms} ms`);
    const earlyFetch = await timed(fetchStream);
    t.deepEqual(earlyFetch.value.json.data, [[value]]);
    t.true(earlyFetch.ms < HANG_MS, `fetch before gossip noticed: ${earlyFetch.ms} ms`);

    // Past the gossip window on the reader's clock: every peer looks silent until it beats again.
    await advanceClock(reader, (GOSSIP_WINDOW_S + 1) * 1000);
    t.true((await gossipAge(reader, frozen)) > GOSSIP_WINDOW_S, 'the frozen node is presumed down');
    const liveMember = c.members.find((m) => m.id === live)!;
    await until('gossip hears the live owner again', async () => (await gossipAge(reader, liveMember)) < GOSSIP_WINDOW_S);
    const read = await timed(() => rawRead(reader.url, name));
    t.deepEqual(await read.value.json(), [[1000000, value]]);
    t.is(read.value.headers.get('x-svc-proxied-to'), live);
    t.is(read.value.headers.get('x-svc-proxy-failed'), null, 'the owner presumed down was not tried');
    t.true(read.ms < PEER_TIMEOUT_MS, `proxied read once presumed down: ${read.ms} ms`);
    const later = await timed(fetchStream);
    t.deepEqual(later.value.json.data, [[value]]);
    t.true(later.ms < PEER_TIMEOUT_MS, `fetch once presumed down: ${later.ms} ms`);
    const count = await timed(countOnly);
    t.deepEqual(count.value.json, { count: names.length, estimate: true });
    t.is(count.value.unanswered, frozen.id);
    t.true(count.ms < PEER_TIMEOUT_MS, `find once presumed down: ${count.ms} ms`);
    // Writes go on: the frozen node's share waits in JetStream.
    t.is((await put(reader.url, mLine('2000.000', name, 'n', '7'))).status, 200);

    frozen.running!.child.kill('SIGCONT');
    await until('gossip hears the thawed node', async () => (await gossipAge(reader, frozen)) < GOSSIP_WINDOW_S);
    await c.settled();
    const back = await rawRead(reader.url, name);
    t.is(back.headers.get('x-svc-proxied-to'), frozen.id, 'the first owner answers again');
    t.deepEqual(await back.json(), [[1000000, value], [2000000, 7]]);
    t.deepEqual((await countOnly()).json, { count: names.length, estimate: false });
  } finally {
    await c.stop();
  }
});
