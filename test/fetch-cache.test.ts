// Whole /fetch answers kept for the next identical request (actors/coordinators/fetch-answers.ts),
// against a real node: a repeat over sealed data is the kept answer, and every change to what it
// read — a late sample, a delete, an /nnt write — is in the very next answer; reads over open
// buffers are never kept; answers of one document in two forms are not confused.
import test from 'ava';
import fc from 'fast-check';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  // Sealed 1.5 s after its last sample: a late sample's buffer is still open when the next fetch asks.
  n = await startNode({ checkpointIntervalMs: 20, sealQuietMs: 1500 });
  const lines: string[] = [];
  // c.a = 1, c.b = 10, c.d = 100 at 10 s steps over [0, 120 s): two 60 s slots
  for (const [name, v] of [['c.a', 1], ['c.b', 10], ['c.d', 100]] as const) for (let s = 0; s < 120; s += 10) lines.push(mLine(`${s}.000`, name, 'n', String(v)));
  const r = await put(n.url, lines.join('\n'));
  if (r.status !== 200) throw new Error(`setup ingest failed: ${JSON.stringify(r.json)}`);
});
test.after.always(async () => {
  await n?.stop();
});

const stream = (name: string) => ({ uuid: UUID, name, kind: 'numeric', transform: 'average' });
const sumDoc = (names: string[]) => ({ start: 0, period: 60, count: 2, streams: names.map(stream), reduce: [{ label: 's', method: 'sum', method_params: [] }] });
const passDoc = (names: string[]) => ({ ...sumDoc(names), reduce: [{ label: '', method: 'pass', method_params: [] }] });

async function fetchDf4(doc: unknown, accept?: string): Promise<{ status: number; type: string; body: Buffer }> {
  const res = await fetch(`${n.url}/fetch`, { method: 'POST', body: JSON.stringify(doc), headers: { 'content-type': 'application/json', ...(accept === undefined ? {} : { accept }) } });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()) };
}
const data = async (doc: unknown): Promise<unknown> => JSON.parse((await fetchDf4(doc)).body.toString()).data;
const cache = async (): Promise<{ entries: number; hits: number; misses: number; bytes: number }> => (await getJson(`${n.url}/state`)).json.fetch_cache;

/** Asks `doc` until an answer is served kept (its window sealed); the answer. */
async function kept(doc: unknown): Promise<Buffer> {
  for (let i = 0; i < 200; i++) {
    const before = (await cache()).hits;
    const r = await fetchDf4(doc);
    if ((await cache()).hits > before) return r.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the answer was never kept (the window never sealed?)');
}

test.serial('a repeat over sealed data is the kept answer, byte for byte', async (t) => {
  const doc = passDoc(['c.a', 'c.b']);
  const first = await kept(doc);
  const before = await cache();
  const again = await fetchDf4(doc);
  const after = await cache();
  t.is(after.hits, before.hits + 1);
  t.deepEqual(again.body, first);
  t.deepEqual(JSON.parse(again.body.toString()).data, [
    [1, 1],
    [10, 10],
  ]);
  t.true(after.entries > 0 && after.bytes > first.length);
});

test.serial('a late sample into a kept answer is in the next answer', async (t) => {
  const doc = sumDoc(['c.a', 'c.b']);
  await kept(doc);
  t.deepEqual(await data(doc), [[11, 11]]);
  // c.a's first slot: six 1s and a 7 → average 13/7
  t.is((await put(n.url, mLine('25.000', 'c.a', 'n', '7'))).status, 200);
  t.deepEqual(await data(doc), [[13 / 7 + 10, 11]]);
});

test.serial('a delete is in the next answer', async (t) => {
  const doc = passDoc(['c.d']);
  await kept(doc);
  const res = await fetch(`${n.url}/raw/${UUID}/${encodeURIComponent('c.d')}`, { method: 'DELETE', headers: { 'x-svc-delete-time': '60' } });
  t.is(res.status, 200);
  t.deepEqual(await data(doc), [[null, 100]]);
});

test.serial('an /nnt write into a kept answer is in the next answer', async (t) => {
  const doc = { ...passDoc(['c.nnt']), streams: [{ ...stream('c.nnt'), transform: 'count' }] };
  const nnt = (ts: number, count: number) =>
    fetch(`${n.url}/write/nnt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ metric: 'c.nnt', id: UUID, offset: ts, count, value: 1, stddev: 0, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 }]) });
  t.is((await nnt(0, 3)).status, 200);
  await kept(doc);
  t.deepEqual(await data(doc), [[3, null]]);
  t.is((await nnt(60, 5)).status, 200);
  t.deepEqual(await data(doc), [[3, 5]]);
});

test.serial('a read over an open buffer is never kept, and sees every sample', async (t) => {
  const now = Math.floor(Date.now() / 60_000) * 60;
  const doc = { start: now - 60, period: 60, count: 2, streams: [stream('c.live')], reduce: [{ label: '', method: 'pass', method_params: [] }] };
  t.is((await put(n.url, mLine(`${now}.000`, 'c.live', 'n', '2'))).status, 200);
  const before = await cache();
  t.deepEqual(await data(doc), [[null, 2]]);
  t.is((await put(n.url, mLine(`${now + 1}.000`, 'c.live', 'n', '4'))).status, 200);
  t.deepEqual(await data(doc), [[null, 3]]);
  t.is((await cache()).hits, before.hits);
});

test.serial('one document asked for in JSON and in FlatBuffer gets each form', async (t) => {
  const doc = passDoc(['c.b']);
  await kept(doc);
  const fb = await fetchDf4(doc, 'application/x-irondb-df4-flatbuffer');
  t.is(fb.status, 200);
  t.is(fb.type, 'application/x-irondb-df4-flatbuffer');
  const json = await fetchDf4(doc);
  t.regex(json.type, /application\/json/);
  t.deepEqual(JSON.parse(json.body.toString()).data, [[10, 10]]);
});

test('with fetchCacheBytes 0 nothing is kept', async (t) => {
  const m = await startNode({ checkpointIntervalMs: 20, sealQuietMs: 0, fetchCacheBytes: 0 });
  try {
    t.is((await put(m.url, mLine('0.000', 'c.a', 'n', '1'))).status, 200);
    const body = JSON.stringify(passDoc(['c.a']));
    for (let i = 0; i < 5; i++) await fetch(`${m.url}/fetch`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }).then((r) => r.arrayBuffer());
    t.deepEqual((await getJson(`${m.url}/state`)).json.fetch_cache, { entries: 0, bytes: 0, hits: 0, misses: 0 });
  } finally {
    await m.stop();
  }
});

test.serial('random late samples, deletes and /nnt writes: a kept answer always equals one read afresh', async (t) => {
  const names = ['p.a', 'p.b'];
  const seed: string[] = [];
  for (const name of names) for (let s = 0; s < 600; s += 10) seed.push(mLine(`${s}.000`, name, 'n', String(s % 7)));
  t.is((await put(n.url, seed.join('\n'))).status, 200);
  const docs = [sumDoc(names), passDoc(names), { ...passDoc(names), count: 10 }].map((d) => ({ ...d, streams: [...d.streams, { ...stream('p.nnt'), transform: 'count' }] }));
  let fresh = 0;
  /** The same document, spaced so no kept answer matches it: read afresh. */
  const afresh = (doc: unknown) => fetch(`${n.url}/fetch`, { method: 'POST', body: JSON.stringify(doc) + ' '.repeat(++fresh), headers: { 'content-type': 'application/json' } }).then(async (r) => JSON.parse(await r.text()).data);
  const op = fc.oneof(
    fc.record({ kind: fc.constant('late' as const), name: fc.constantFrom(...names), ts: fc.integer({ min: 0, max: 599 }), v: fc.integer({ min: -5, max: 50 }) }),
    fc.record({ kind: fc.constant('delete' as const), name: fc.constantFrom(...names), before: fc.integer({ min: 0, max: 600 }) }),
    fc.record({ kind: fc.constant('nnt' as const), offset: fc.constantFrom(0, 60, 120), count: fc.integer({ min: 1, max: 9 }) }),
    fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 1600 }) }),
  );
  let checked = 0;
  const before = (await cache()).hits;
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 6 }), async (ops) => {
      for (const o of ops) {
        if (o.kind === 'late') await put(n.url, mLine(`${o.ts}.500`, o.name, 'n', String(o.v)));
        else if (o.kind === 'delete') await fetch(`${n.url}/raw/${UUID}/${encodeURIComponent(o.name)}`, { method: 'DELETE', headers: { 'x-svc-delete-time': String(o.before) } }).then((r) => r.arrayBuffer());
        else if (o.kind === 'nnt') await fetch(`${n.url}/write/nnt`, { method: 'POST', body: JSON.stringify([{ metric: 'p.nnt', id: UUID, offset: o.offset, count: o.count, value: 1, stddev: 0, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 }]) }).then((r) => r.arrayBuffer());
        else await new Promise((resolve) => setTimeout(resolve, o.ms));
        for (const doc of docs) {
          // Asked twice (the second is served kept once its streams are settled), then afresh.
          const first = JSON.stringify(await data(doc));
          const second = JSON.stringify(await data(doc));
          const read = JSON.stringify(await afresh(doc));
          if (first !== read || second !== read) return false;
          checked++;
        }
      }
      return true;
    }),
    { numRuns: 3, seed: 20261128 },
  );
  const hits = (await cache()).hits - before;
  t.true(checked > 0 && hits > 0, `${checked} answers compared, ${hits} served kept`);
});
