// Rebuild on the real rig: a nats-server and three `ferrite serve` processes at W=2. Data of
// every kind is loaded, one node is killed, its data directory deleted, and it is started again
// with `--rebuild`. While one peer is frozen (SIGSTOP) the rebuild cannot finish: reads through
// the rebuilding node are answered by the other owners and writes are accepted. Once the peer
// resumes, everything the node owns must come back value for value.
import test from 'ava';
import { rmSync } from 'node:fs';
import { histogramToBase64, Histogram } from '../model/histogram/index.js';
import { startCluster, type Member } from './helpers/cluster.js';
import { CHECK, getJson, killSpawnedNodes, mLine, put, UUID } from './helpers/node.js';
import { eventually, LOCAL, owners } from './helpers/rebalance.js';

test.after.always(killSpawnedNodes);

/** What a node holds of one metric, read locally (never proxied), by kind. */
type Kind = 'numeric' | 'text' | 'histogram' | 'nnt' | 'nntAt9000';
const key = (o: { kind: Kind; name: string }) => `${o.kind} ${o.name}`;

async function localCopy(url: string, kind: Kind, name: string): Promise<{ status: number; body: string }> {
  const path = {
    numeric: `/raw/${UUID}/${name}?start_ts=0.000&end_ts=100000.000`,
    text: `/read/0/100000/${UUID}/${name}`,
    histogram: `/histogram/0/100000/60/${UUID}/${name}`,
    nnt: `/rollup/${UUID}/${name}?start_ts=0.000&end_ts=100000.000&rollup_span=60s&get_engine=nnt`,
    // Only periods without raw samples: those with raw ones are rolled up from them on their own time.
    nntAt9000: `/rollup/${UUID}/${name}?start_ts=9000.000&end_ts=9060.000&rollup_span=60s&get_engine=nnt`,
  }[kind];
  const res = await fetch(`${url}${path}`, { headers: LOCAL });
  return { status: res.status, body: await res.text() };
}

/** Metrics found on `url` alone (its own index, activity windows included), by name. */
async function localFind(url: string, query: string): Promise<Map<string, unknown>> {
  const res = await fetch(`${url}/find/1/tags?query=${encodeURIComponent(query)}&activity=1`, { headers: LOCAL });
  const rows = (await res.json()) as { metric_name: string; activity: unknown }[];
  return new Map(rows.map((r) => [r.metric_name, r.activity]));
}

test.serial('rebuild of a wiped node: everything it owns comes back value for value; reads meanwhile go to the other owners; progress, time and bytes reported', async (t) => {
  const c = await startCluster(3, 2, ['--peer-timeout-ms', '2000']);
  try {
    const [a] = c.members.map((m) => m.url) as [string];
    const target = c.members[2]!;
    const numerics = Array.from({ length: 60 }, (_, i) => `c.rbd.n${i}`);
    const texts = Array.from({ length: 16 }, (_, i) => `c.rbd.t${i}`);
    const hists = Array.from({ length: 16 }, (_, i) => `c.rbd.h${i}`);
    const h = new Histogram();
    h.insert(3);
    h.insert(40);
    const lines = [
      ...numerics.flatMap((n, i) => [mLine('1000.000', n, 'n', String(i)), mLine('1060.000', n, 'n', String(i + 0.25)), mLine('4000.000', n, 'L', String(2 ** 60 + i))]),
      ...texts.flatMap((n) => [mLine('1000.000', n, 's', `up ${n}`), mLine('1030.000', n, 's', `down ${n}`)]),
      ...hists.flatMap((n) => [['H1', '1000.000', CHECK, n, histogramToBase64(h)].join('\t'), ['H1', '1010.000', CHECK, n, histogramToBase64(h)].join('\t'), ['H1', '1200.000', CHECK, n, histogramToBase64(h)].join('\t')]),
    ];
    t.is((await put(a, lines.join('\n'))).status, 200);
    // Numeric rollup records: metrics with nothing else, and records in periods where numeric metrics have no raw sample.
    const rollupOnly = Array.from({ length: 12 }, (_, i) => `c.rbd.r${i}`);
    const nnt = (metric: string, offset: number, value: number) => ({ metric, id: UUID, offset, count: 4, value, stddev: 1, derivative: 0.5, derivative_stddev: 0, counter: 0.5, counter_stddev: 0 });
    const nntBody = [...rollupOnly.flatMap((n, i) => [nnt(n, 3600, i), nnt(n, 7200, i + 0.5)]), ...numerics.slice(0, 12).map((n, i) => nnt(n, 9000, 100 + i))];
    t.is((await fetch(`${a}/write/nnt`, { method: 'POST', body: JSON.stringify(nntBody) })).status, 200);
    const tagged = '0c7a9e11-0000-4000-8000-0000000000aa';
    t.is((await fetch(`${a}/meta/check/tag/${tagged}`, { method: 'POST', body: JSON.stringify({ add: ['team:rebuild', 'gone:1'] }) })).status, 200);
    t.is((await fetch(`${a}/meta/check/tag/${tagged}`, { method: 'POST', body: JSON.stringify({ remove: ['gone:1'] }) })).status, 200);
    await c.settled();

    // What the node to be wiped owns, and the other owner of each.
    const all = [
      ...numerics.map((n) => ['numeric', n] as const),
      ...texts.map((n) => ['text', n] as const),
      ...hists.map((n) => ['histogram', n] as const),
      ...rollupOnly.map((n) => ['nnt', n] as const),
      ...numerics.slice(0, 12).map((n) => ['nntAt9000', n] as const),
    ];
    const owned: { kind: Kind; name: string; other: Member }[] = [];
    for (const [kind, name] of all) {
      const ids = await owners(a, name);
      if (ids.includes(target.id)) owned.push({ kind, name, other: c.members.find((m) => m.id === ids.find((id) => id !== target.id))! });
    }
    for (const kind of ['numeric', 'text', 'histogram', 'nnt', 'nntAt9000'] as const) t.true(owned.some((o) => o.kind === kind), `the wiped node owns some ${kind} metrics`);
    const expected = new Map<string, string>();
    for (const o of owned) {
      const copy = await localCopy(target.url, o.kind, o.name);
      t.is(copy.status, 200, `${o.name} on the node before the wipe`);
      t.deepEqual(await localCopy(o.other.url, o.kind, o.name), copy, `${o.name}: both owners agree before the wipe`);
      expected.set(key(o), copy.body);
    }
    const activityBefore = await localFind(target.url, 'and(__name:c.rbd.*)');

    await c.kill(2);
    rmSync(target.dataDir, { recursive: true, force: true });
    // One peer is frozen, so the rebuild cannot finish until it resumes.
    const frozen = c.members[0]!;
    const live = c.members[1]!;
    frozen.running!.child.kill('SIGSTOP');
    const started = Date.now();
    await c.start(2, ['--rebuild']);
    await eventually('the rebuild to start', async () => (await getJson(`${target.url}/state`)).json.rebuild?.state === 'running');

    // Reads of what it owns go to the other owner (here those held by the live peer).
    const viaLive = owned.filter((o) => o.other.id === live.id && o.kind !== 'nntAt9000' && o.kind !== 'nnt');
    t.true(viaLive.length > 0);
    for (const o of viaLive) {
      const path = o.kind === 'numeric' ? `/raw/${UUID}/${o.name}?start_ts=0.000&end_ts=100000.000` : o.kind === 'text' ? `/read/0/100000/${UUID}/${o.name}` : `/histogram/0/100000/60/${UUID}/${o.name}`;
      for (const headers of [{}, LOCAL]) {
        const res = await fetch(`${target.url}${path}`, { headers });
        t.is(res.status, 200, `${o.name} through the rebuilding node`);
        t.is(res.headers.get('x-svc-proxied-to'), live.id, `${o.name}: answered by the other owner, even when asked as a proxied read`);
        t.is(await res.text(), expected.get(key(o))!, `${o.name} read correctly during the rebuild`);
      }
    }
    const tagRead = await getJson(`${target.url}/meta/check/tag/${tagged}`);
    t.is(tagRead.status, 503, 'check tags are refused while rebuilding');
    t.is(tagRead.json.code, 'FER_ERR_REBUILDING');
    // Writes are accepted meanwhile (journaled and replicated as usual).
    const during = owned.filter((o) => o.kind === 'numeric').map((o) => o.name);
    const nntVia = owned.find((o) => o.kind === 'nnt' && o.other.id === live.id);
    if (nntVia !== undefined) {
      const res = await fetch(`${target.url}/rollup/${UUID}/${nntVia.name}?start_ts=0.000&end_ts=100000.000&rollup_span=60s&get_engine=nnt`);
      t.is(await res.text(), expected.get(key(nntVia))!, 'a rollup read during the rebuild');
    }
    t.is((await put(target.url, during.map((n) => mLine('5000.000', n, 'n', '42')).join('\n'))).status, 200);
    const mid = (await getJson(`${target.url}/state`)).json.rebuild;
    t.is(mid.state, 'running', 'still rebuilding while a peer is frozen');
    t.true(mid.percent < 100);
    t.is(mid.peers[frozen.id], null, 'the frozen peer did not answer');

    frozen.running!.child.kill('SIGCONT');
    await eventually('the rebuild to finish', async () => (await getJson(`${target.url}/state`)).json.rebuild?.state === 'done', 120_000);
    const seconds = (Date.now() - started) / 1000;
    const report = (await getJson(`${target.url}/state`)).json.rebuild;
    t.is(report.percent, 100);
    t.true(report.metrics_received >= new Set(owned.map((o) => o.name)).size, 'every owned metric was received');
    t.true(report.bytes_received > 0);
    t.true(report.check_tag_updates_received > 0);
    const walk = (await getJson(`${live.url}/state`)).json.rebuild_walks?.[target.id];
    t.is(walk?.state, 'done', "the peer's /state shows its walk for the rebuilding node");
    t.log(`rebuild: ${report.metrics_received} metrics, ${report.records_received} records, ${report.bytes_received} bytes in ${report.elapsed_s} s (node's figure; ${seconds.toFixed(1)} s from start in the test, a peer frozen part of it), ${report.rate_bytes_per_s} B/s`);
    t.true(target.running!.log.some((l) => l.includes('rebuild complete: serving')), 'the log reports the end');
    await c.settled();

    // Value for value, read locally on the rebuilt node.
    for (const o of owned) {
      const want = o.kind === 'numeric' && during.includes(o.name) ? JSON.stringify([...JSON.parse(expected.get(key(o))!), [5000000, 42]]) : expected.get(key(o))!;
      const got = await localCopy(target.url, o.kind, o.name);
      t.is(got.status, 200, `${o.name} is back`);
      t.is(got.body, want, `${o.name} value for value`);
    }
    const activityAfter = await localFind(target.url, 'and(__name:c.rbd.*)');
    for (const o of owned) t.deepEqual(activityAfter.get(o.name), activityBefore.get(o.name), `${o.name}: activity as before`);
    t.is(activityAfter.size, activityBefore.size, 'it holds the same metrics as before');
    t.deepEqual((await getJson(`${target.url}/meta/check/tag/${tagged}`)).json, { [tagged]: ['team:rebuild'] }, 'check tags are back, removals included');

    // A restart after the rebuild does not rebuild again, though the flag is still given.
    await c.kill(2);
    await c.start(2, ['--rebuild']);
    t.is((await getJson(`${target.url}/state`)).json.rebuild.state, 'done');
    t.true(target.running!.log.some((l) => l.includes('not rebuilding again')));
    const res = await fetch(`${target.url}/raw/${UUID}/${owned[0]!.name}?start_ts=0.000&end_ts=100000.000`);
    t.is(res.headers.get('x-svc-proxied-to'), null, 'it serves its own data again');
  } finally {
    await c.stop();
  }
});

test.serial('a restart in the middle of a rebuild resumes it; a peer restarted after its walk walks again, and histograms still count once', async (t) => {
  const c = await startCluster(3, 2, ['--peer-timeout-ms', '2000']);
  try {
    const [a] = c.members.map((m) => m.url) as [string];
    const target = c.members[2]!;
    const names = Array.from({ length: 40 }, (_, i) => `c.rbr.n${i}`);
    const hists = Array.from({ length: 24 }, (_, i) => `c.rbr.h${i}`);
    const h = new Histogram();
    h.insert(7);
    const body = [...names.map((n, i) => mLine('1000.000', n, 'n', String(i))), ...hists.flatMap((n) => [1000, 1010].map((ts) => ['H1', `${ts}.000`, CHECK, n, histogramToBase64(h)].join('\t')))];
    t.is((await put(a, body.join('\n'))).status, 200);
    await c.settled();
    const mine = new Set<string>();
    for (const n of [...names, ...hists]) if ((await owners(a, n)).includes(target.id)) mine.add(n);
    await c.kill(2);
    rmSync(target.dataDir, { recursive: true, force: true });
    const [frozen, live] = [c.members[0]!, c.members[1]!];
    frozen.running!.child.kill('SIGSTOP');
    await c.start(2, ['--rebuild']);
    await eventually('the rebuild to start', async () => (await getJson(`${target.url}/state`)).json.rebuild?.state === 'running');
    const run = (await getJson(`${target.url}/state`)).json.rebuild.run;
    await eventually("the live peer's walk to be done", async () => (await getJson(`${target.url}/state`)).json.rebuild.peers[live.id]?.state === 'done');
    // Restarted without the flag: the stored state says a rebuild is under way.
    await c.kill(2);
    await c.start(2);
    const resumed = (await getJson(`${target.url}/state`)).json.rebuild;
    t.is(resumed.state, 'running');
    t.is(resumed.run, run, 'the same rebuild resumes');
    t.true(target.running!.log.some((l) => l.includes('resuming rebuild')));
    // The live peer restarts too: it has forgotten its walk, is asked again and sends everything again.
    await c.kill(1);
    await c.start(1);
    await eventually('the live peer to walk again', async () => live.running!.log.some((l) => l.includes('rebuild: everything sent was confirmed')));
    frozen.running!.child.kill('SIGCONT');
    await eventually('the rebuild to finish', async () => (await getJson(`${target.url}/state`)).json.rebuild?.state === 'done', 120_000);
    for (const [i, n] of names.entries()) {
      if (!mine.has(n)) continue;
      const res = await fetch(`${target.url}/raw/${UUID}/${n}?start_ts=0.000&end_ts=100000.000`, { headers: LOCAL });
      t.deepEqual(await res.json(), [[1000000, i]], `${n} is back`);
    }
    const minedHists = hists.filter((n) => mine.has(n));
    t.true(minedHists.length > 0 && mine.size > minedHists.length);
    for (const n of minedHists) {
      const res = await fetch(`${target.url}/histogram/0/100000/60/${UUID}/${n}`, { headers: LOCAL });
      t.deepEqual(await res.json(), [[960, 60, { '+70e-001': 2 }]], `${n}: counted once though sent twice`);
    }
  } finally {
    c.members[0]!.running?.child.kill('SIGCONT');
    await c.stop();
  }
});
