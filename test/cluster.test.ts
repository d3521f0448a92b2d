// The cluster end to end: a real nats-server and three `ferrite serve` processes (W=2).
// Writes to one node are readable from every node; search fans out; a node killed with
// SIGKILL mid-ingest loses nothing acknowledged and catches up when it returns.
import test, { type ExecutionContext } from 'ava';
import { histogramToBase64, Histogram } from '../model/histogram/index.js';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { CHECK, getJson, killSpawnedNodes, mLine, put, UUID } from './helpers/node.js';

test.after.always(killSpawnedNodes);

/** The account of the helpers' check (`c_123_…`). */
const ACCOUNT = { 'x-svc-account-id': '123' };
const LOCAL = { 'x-svc-proxied': '1' };

async function owners(c: TestCluster, name: string): Promise<string[]> {
  const r = await getJson(`${c.members[0]!.url}/locate/json/${UUID}/${encodeURIComponent(name)}`);
  return (r.json.location as { id: string }[]).map((o) => o.id);
}

async function raw(url: string, name: string, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=100000.000`, { headers });
  return { status: res.status, json: await res.json() };
}

function urlOf(c: TestCluster, id: string): string {
  return c.members.find((m) => m.id === id)!.url;
}

/** Each owner's own copy (read with x-svc-proxied: 1) holds exactly `expected`. */
async function onEveryOwner(t: ExecutionContext, c: TestCluster, name: string, expected: unknown): Promise<void> {
  for (const owner of await owners(c, name)) t.deepEqual((await raw(urlOf(c, owner), name, LOCAL)).json, expected, `${name} on its owner ${owner}`);
}

function countOnly(url: string, headers: Record<string, string> = ACCOUNT) {
  return fetch(`${url}/find/tags?query=and(__name:c.*)&count_only=1`, { headers }).then(async (r) => ({ json: (await r.json()) as any, headers: r.headers }));
}

test.serial('a write to one node is readable and searchable from every node', async (t) => {
  const c = await startCluster();
  try {
    const [a, b, cc] = c.members.map((m) => m.url) as [string, string, string];
    const names = Array.from({ length: 30 }, (_, i) => `c.metric${i}`);
    const body = names.flatMap((name, i) => [mLine('1000.000', name, 'n', String(i)), mLine('1060.000', name, 'n', String(i + 0.5))]);
    const hist = new Histogram();
    hist.insert(3);
    body.push(['H1', '1000.000', CHECK, 'c.latency', histogramToBase64(hist)].join('\t'), mLine('1000.000', 'c.status', 's', 'up'));
    const w = await put(a, body.join('\n'));
    t.is(w.status, 200);
    t.is(w.json.updated, 62);
    const nntOwners = await owners(c, 'c.nnt');
    const outsider = c.members.find((m) => !nntOwners.includes(m.id))!;
    const nnt = { metric: 'c.nnt', id: UUID, offset: 3600, count: 4, value: 10, stddev: 2, derivative: 1, derivative_stddev: 0, counter: 1, counter_stddev: 0 };
    t.is((await fetch(`${outsider.url}/write/nnt`, { method: 'POST', body: JSON.stringify([nnt]) })).status, 200);
    await c.settled();
    for (const member of c.members) {
      const r = await fetch(`${member.url}/rollup/${UUID}/c.nnt?start_ts=3600.000&end_ts=3660.000&rollup_span=60s&get_engine=nnt`, { headers: LOCAL });
      if (nntOwners.includes(member.id)) t.deepEqual(await r.json(), [[3600, 10]], `nnt record on owner ${member.id}`);
      else t.is(r.status, 404, 'a non-owner keeps no nnt records');
    }

    for (const url of [b, cc]) {
      for (const [i, name] of names.entries()) t.deepEqual((await raw(url, name)).json, [[1000000, i], [1060000, i + 0.5]], `${name} from ${url}`);
      const text = await getJson(`${url}/read/0/2000/${UUID}/c.status`);
      t.deepEqual(text.json, [[1000000, 'up']]);
      const h = await getJson(`${url}/histogram/1000/1000/60/${UUID}/c.latency`);
      t.deepEqual(h.json, [[960, 60, { '+30e-001': 1 }]]);
    }
    // Each owner holds its own copy; a non-owner holds none.
    const m0 = await owners(c, names[0]!);
    for (const member of c.members) {
      const local = await raw(member.url, names[0]!, LOCAL);
      t.is(local.status, m0.includes(member.id) ? 200 : 404, `local copy on ${member.id}`);
    }

    for (const url of [a, b, cc]) {
      const count = await countOnly(url);
      t.deepEqual(count.json, { count: 32, estimate: false });
      const tags = await getJson(`${url}/find/123/tags?query=and(__name:c.metric1*)&activity=0`);
      t.deepEqual((tags.json as { metric_name: string }[]).map((r) => r.metric_name), ['c.metric1', ...names.filter((n) => /^c\.metric1\d/.test(n))].sort());
      t.deepEqual((await getJson(`${url}/find/123/tag_vals?query=and(__name:c.*)&category=__name`)).json.length, 32);
      // Each node counts the metrics it answers for: replicas are counted once.
      const active = await getJson(`${url}/find/123/active_count?query=and(__name:c.metric*)&activity_start_secs=900&activity_end_secs=1500`);
      t.deepEqual(active.json, { account_id: 123, activity_start: 900, estimate: false, period_counts: [30, 0] });
      const explained = await fetch(`${url}/find/123/tags?query=and(__name:c.metric1)&explain=1`);
      t.deepEqual([...explained.headers].filter(([k]) => k.startsWith('x-svc-find-')).map(([k, v]) => [k.slice('x-svc-find-'.length), v]).sort(), c.members.map((m) => [m.id.toLowerCase(), 'and(__name:c.metric1)']).sort(), 'one header per node asked');
    }

    // /fetch gathers each stream from an owner.
    const fetchBody = { start: 1000, period: 60, count: 2, streams: names.slice(0, 6).map((name) => ({ uuid: UUID, name, kind: 'numeric', transform: 'average' })), reduce: [{ label: 'sum', method: 'sum' }] };
    const f = await fetch(`${cc}/fetch`, { method: 'POST', body: JSON.stringify(fetchBody), headers: { 'content-type': 'application/json' } });
    const df4 = (await f.json()) as { data: number[][] };
    t.deepEqual(df4.data, [[15, 18]]);
  } finally {
    await c.stop();
  }
});

test.serial('SIGKILL during ingest loses no acknowledged sample; the node catches up on return', async (t) => {
  const c = await startCluster();
  try {
    const acked: string[] = [];
    let batch = 0;
    let stopWriting = false;
    const writer = (async () => {
      while (!stopWriting) {
        const names = Array.from({ length: 20 }, (_, i) => `c.kill${batch}.${i}`);
        const res = await put(c.members[0]!.url, names.map((n) => mLine(`${1000 + batch}.000`, n, 'n', String(batch))).join('\n')).catch(() => null);
        if (res?.status === 200) acked.push(...names);
        batch++;
      }
    })();
    await new Promise((r) => setTimeout(r, 600));
    await c.kill(1); // a peer dies while it is being journaled to
    await new Promise((r) => setTimeout(r, 600));
    await c.kill(0); // then the receiving node itself, mid-request
    stopWriting = true;
    await writer;
    t.true(acked.length > 100, `only ${acked.length} samples acknowledged`);
    await Promise.all([c.start(0), c.start(1)]);
    await c.settled(60_000);

    // Every acknowledged sample is on every one of its owners.
    for (const name of acked) {
      const batchNo = Number(/c\.kill(\d+)\./.exec(name)![1]);
      await onEveryOwner(t, c, name, [[(1000 + batchNo) * 1000, batchNo]]);
    }
    const state = await getJson(`${c.members[1]!.url}/state`);
    t.is(state.json.replication.misdirected, 0);
  } finally {
    await c.stop();
  }
});

test.serial('acknowledged writes survive a nats-server that loses every message it acknowledged', async (t) => {
  const c = await startCluster();
  try {
    await c.kill(2);
    const names = Array.from({ length: 30 }, (_, i) => `c.lost${i}`);
    t.is((await put(c.members[0]!.url, names.map((n, i) => mLine('1000.000', n, 'n', String(i))).join('\n'))).status, 200);
    const toDead = (await Promise.all(names.map((n) => owners(c, n)))).filter((o) => o.includes(c.members[2]!.id)).length;
    t.true(toDead > 0, 'some metrics are owned by the stopped node');
    await c.wipeNats(); // the journal messages for node 2 are gone from JetStream
    await c.start(2);
    await c.settled(60_000);
    for (const [i, name] of names.entries()) await onEveryOwner(t, c, name, [[1000000, i]]);
  } finally {
    await c.stop();
  }
});

test.serial('find with a node down is an estimate naming it; reads go to the live owner', async (t) => {
  const c = await startCluster();
  try {
    const names = Array.from({ length: 12 }, (_, i) => `c.down${i}`);
    t.is((await put(c.members[0]!.url, names.map((n, i) => mLine('1000.000', n, 'n', String(i))).join('\n'))).status, 200);
    await c.settled();
    const dead = c.members[2]!;
    await c.kill(2);
    const count = await countOnly(c.members[0]!.url);
    t.true(count.json.estimate);
    t.is(count.headers.get('x-svc-unanswered-nodes'), dead.id);
    for (const [i, name] of names.entries()) t.deepEqual((await raw(c.members[1]!.url, name)).json, [[1000000, i]], name);
    // Once gossip presumes it down, its metrics are counted by their next owner.
    await new Promise((r) => setTimeout(r, 9000));
    const later = await countOnly(c.members[1]!.url);
    t.deepEqual(later.json, { count: 12, estimate: true });
  } finally {
    await c.stop();
  }
});

test.serial('deletes act locally, report not local, and x-svc-full-delete journals to every owner', async (t) => {
  const c = await startCluster();
  try {
    const names = Array.from({ length: 10 }, (_, i) => `c.del${i}`);
    const body = names.map((n) => mLine('1000.000', n, 'n', '1')).concat(mLine('1000.000', 'c.text', 's', 'hello'));
    t.is((await put(c.members[0]!.url, body.join('\n'))).status, 200);
    await c.settled();
    const node = c.members[0]!;
    const res = await fetch(`${node.url}/raw/${UUID}/c.del*`, { method: 'DELETE', headers: { ...ACCOUNT, 'x-svc-delete-time': '2000', 'x-svc-confirm-delete': '1' } });
    const results = (await res.json()) as { metric_name: string; delete_result: string }[];
    t.is(results.length, 10);
    for (const r of results) {
      const mine = (await owners(c, r.metric_name)).includes(node.id);
      t.is(r.delete_result, mine ? 'deleted' : 'not local', r.metric_name);
    }

    // A text delete with full-delete 1, sent to a node that does not own the metric.
    const textOwners = await owners(c, 'c.text');
    const outsider = c.members.find((m) => !textOwners.includes(m.id))!;
    const del = await fetch(`${outsider.url}/text/${UUID}/c.text`, { method: 'DELETE', headers: { 'x-svc-delete-time': '2000', 'x-svc-full-delete': '1' } });
    t.is(del.status, 200);
    t.deepEqual(await del.json(), []);
    await c.settled();
    for (const id of textOwners) {
      const url = urlOf(c, id);
      const r = await fetch(`${url}/read/0/2000/${UUID}/c.text`, { headers: LOCAL });
      t.deepEqual(await r.json(), [], `text gone on owner ${id}`);
    }
    // Without it, a single-metric delete at a non-owner is an error naming the owners.
    const local = await fetch(`${outsider.url}/text/${UUID}/c.text`, { method: 'DELETE', headers: { 'x-svc-delete-time': '2000' } });
    t.is(local.status, 421);
    const refusal = (await local.json()) as { code: string; error: string };
    t.is(refusal.code, 'FER_ERR_NOT_LOCAL');
    for (const id of textOwners) t.true(refusal.error.includes(id), refusal.error);

    // A full tag-query delete lists the matching metrics only other nodes store as not local.
    const full = await fetch(`${node.url}/full/tags?query=${encodeURIComponent('and(__name:c.del*)')}`, { method: 'DELETE', headers: ACCOUNT });
    const listed = (await full.json()) as { metric_name: string; delete_result: string }[];
    t.deepEqual(listed.map((r) => r.metric_name).sort(), [...names].sort());
    for (const r of listed) t.is(r.delete_result, (await owners(c, r.metric_name)).includes(node.id) ? 'found' : 'not local', r.metric_name);
  } finally {
    await c.stop();
  }
});
