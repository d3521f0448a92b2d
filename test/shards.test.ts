// A node with several shards answers as one: finds and facets merge every shard's part in
// name order with exact counts, fetch reducers pushed down to the shards add up to the values
// worked out by hand, and deletes select across shards.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

const ACCOUNT = 123; // the account of the standard test check
const HOSTS = 12;
const T0 = 1_700_000_040; // a multiple of 60
/** host h, point j (60 s apart): h · 10 + j. */
const value = (h: number, j: number): number => h * 10 + j;

let n: TestNode;
test.before(async () => {
  n = await startNode({ shards: 3, partitions: 16, ingestWorkers: 1 });
  const lines: string[] = [];
  for (let h = 0; h < HOSTS; h++) for (let j = 0; j < 3; j++) lines.push(mLine(`${T0 + j * 60}.000`, `load|ST[host:h${String(h).padStart(2, '0')},rack:r${h % 2}]`, 'n', String(value(h, j))));
  const r = await put(n.url, lines.join('\n'));
  if (r.status !== 200 || r.json.errors !== 0) throw new Error(JSON.stringify(r.json));
});
test.after.always(async () => n?.stop());

const fetchBody = (method: string, params: string[] = []) => ({
  start: T0,
  period: 60,
  count: 3,
  streams: Array.from({ length: HOSTS }, (_, h) => ({ uuid: UUID, name: `load|ST[host:h${String(h).padStart(2, '0')},rack:r${h % 2}]`, kind: 'numeric', transform: 'average' })),
  reduce: [{ label: '', method, method_params: params }],
});

async function fetchJson(body: object): Promise<any> {
  const res = await fetch(`${n.url}/fetch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

test.serial('the metrics are spread over the shards', async (t) => {
  const state = await getJson(`${n.url}/state`);
  t.is(state.json.index.metrics, HOSTS, 'index figures are summed over the shards');
  const shards = state.json.shards as { series: number; heap_used_bytes: number; heap_committed_bytes: number; index_metrics: number }[];
  t.is(shards.length, 3, 'one figure per shard');
  t.is(shards.reduce((sum, s) => sum + s.index_metrics, 0), HOSTS, "the shards' index slices add up to the whole");
  t.true(shards.filter((s) => s.index_metrics > 0).length > 1, 'more than one shard holds metrics');
  t.true(shards.every((s) => s.heap_used_bytes > 0) && state.json.heap_used_bytes > 0, 'each heap is reported');
  const held = (h: { heap_used_bytes: number; heap_committed_bytes: number }) => h.heap_committed_bytes >= h.heap_used_bytes;
  t.true(shards.every(held) && held(state.json), 'and what it holds from the system, at least what it uses');
  const buffers = state.json.shards as { open_buffers: number; open_buffer_bytes: { allocated: number; used: number } }[];
  t.true(buffers.every((s) => Number.isSafeInteger(s.open_buffers) && s.open_buffers <= HOSTS && s.open_buffer_bytes.used <= s.open_buffer_bytes.allocated), 'open buffers and their pooled bytes');
  const workers = state.json.parse_workers as { heap_used_bytes: number; heap_committed_bytes: number }[];
  t.true(workers.length > 0 && workers.every((w) => w.heap_used_bytes > 0 && held(w)), "each parse worker's heap is reported");
  const disk = state.json.disk as { total_bytes: number; by_kind: Record<string, number> };
  t.deepEqual(Object.keys(disk.by_kind), ['raw', 'rollups', 'histograms', 'index', 'journal', 'outbox', 'state']);
  t.is(Object.values(disk.by_kind).reduce((a, b) => a + b, 0), disk.total_bytes, 'the kinds add up to the total');
  t.true(disk.by_kind.index! > 0, 'the index of the stored metrics takes room');
});

test.serial('find merges every shard in name order, with the total count', async (t) => {
  const all = await getJson(`${n.url}/find/${ACCOUNT}/tags?query=and(__name:load)`);
  t.deepEqual(
    all.json.map((r: { metric_name: string }) => r.metric_name),
    Array.from({ length: HOSTS }, (_, h) => `load|ST[host:h${String(h).padStart(2, '0')},rack:r${h % 2}]`),
  );
  const res = await fetch(`${n.url}/find/${ACCOUNT}/tags?query=and(__name:load)`, { headers: { 'x-svc-advisory-limit': '5' } });
  const limited = (await res.json()) as { metric_name: string }[];
  t.is(limited.length, 5);
  t.is(limited[4]!.metric_name, 'load|ST[host:h04,rack:r0]', 'the first five of all shards, not of one');
  t.is(res.headers.get('x-svc-search-result-count'), String(HOSTS));
  const vals = await getJson(`${n.url}/find/${ACCOUNT}/tag_vals?query=and(__name:load)&category=rack`);
  t.deepEqual(vals.json, ['r0', 'r1']);
});

test.serial('sum and mean are folded by the shards and added up exactly', async (t) => {
  // Slot j: Σ_h (10h + j) = 10 · 66 + 12j.
  const sum = await fetchJson(fetchBody('sum'));
  t.deepEqual(sum.data, [[660, 672, 684]]);
  const mean = await fetchJson(fetchBody('mean'));
  t.deepEqual(mean.data, [[55, 56, 57]]);
});

test.serial('groupby_sum groups across shards by tag', async (t) => {
  // rack r0: hosts 0,2,…,10 → Σ 10h = 300, + 6j; rack r1: hosts 1,…,11 → 360, + 6j.
  const grouped = await fetchJson(fetchBody('groupby_sum', ['rack']));
  t.deepEqual(grouped.meta.map((m: { label: string }) => m.label), ['rack:r0', 'rack:r1']);
  t.deepEqual(grouped.data, [
    [300, 306, 312],
    [360, 366, 372],
  ]);
});

test.serial('a tag-query delete acts on metrics of every shard', async (t) => {
  const res = await fetch(`${n.url}/raw/tags?query=${encodeURIComponent('and(rack:r1)')}`, { method: 'DELETE', headers: { 'x-svc-account-id': String(ACCOUNT), 'x-svc-delete-time': String(T0 + 60), 'x-svc-confirm-delete': '1' } });
  const results = (await res.json()) as { metric_name: string; delete_result: string }[];
  t.is(results.length, HOSTS / 2);
  t.true(results.every((r) => r.delete_result === 'deleted'));
  // Rack r1 keeps points j = 1, 2: Σ over its hosts (10h + j) = 360 + 6j; rack r0 all three.
  const sum = await fetchJson(fetchBody('sum'));
  t.deepEqual(sum.data, [[300, 672, 684]]);
});
