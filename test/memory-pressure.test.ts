// A node holding more series than its memory allows sheds writes (503) instead of ending out of
// memory (issue 30): a shard worker with a small heap is filled with new series until writes are
// refused for memory pressure; the node keeps answering, stops cleanly, and what it acknowledged
// reads back after a restart.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID } from './helpers/node.js';

const TS = 1_700_000_000;
const SERIES_PER_BODY = 5000;

test('past the heap share, writes are refused for memory pressure; the node stays up, stops cleanly and reads back what it took after a restart', async (t) => {
  // A 64 MiB shard heap, refused past half of it: reached after some tens of thousands of series
  // (or a few hundred thousand: a series takes little of the heap, and garbage decides when).
  const n = await startNode({ shardHeapMb: 64, memoryPressureShare: 0.5, writeLatencyBudgetMs: 0 });
  let accepted = 0;
  let stopped = false;
  try {
    let refusal: { status: number; json: any } | null = null;
    for (let body = 0; body < 80 && refusal === null; body++) {
      const lines = Array.from({ length: SERIES_PER_BODY }, (_, i) => mLine(`${TS}.000`, `pressure.${body}.${i}|ST[host:h${i % 50}]`, 'n', String(i)));
      const r = await put(n.url, lines.join('\n'));
      if (r.status === 503) refusal = r;
      else {
        t.is(r.status, 200, JSON.stringify(r.json));
        accepted++;
        // The shard says how full its heap is once a second: give it the chance between bodies.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    t.not(refusal, null, `refused after ${accepted} bodies of ${SERIES_PER_BODY} new series`);
    t.regex(refusal!.json.error, /memory pressure: shard 0's heap is \d+ % of its limit, over 50 %/);
    const state = (await getJson(`${n.url}/state`)).json;
    t.regex(state.admission.memory_pressure, /memory pressure/);
    t.true(state.admission.heap_shares['shard 0'] > 0.5);
    // Still answering, and what it acknowledged is there.
    const raw = await getJson(`${n.url}/raw/${UUID}/${encodeURIComponent('pressure.0.7|ST[host:h7]')}?start_ts=${TS}&end_ts=${TS + 1}`);
    t.deepEqual(raw.json, [[TS * 1000, 7]]);
    // A graceful stop with the heap this full seals every buffer and flushes without running out
    // of memory (the index snapshot, a cache, is skipped when the heap has no room for it).
    await n.stop(false);
    stopped = true;
  } finally {
    if (!stopped) await n.stop();
  }
  const again = await startNode({}, n.dataDir);
  try {
    const state = (await getJson(`${again.url}/state`)).json;
    t.is(state.shards.reduce((sum: number, s: { index_metrics: number }) => sum + s.index_metrics, 0), accepted * SERIES_PER_BODY, 'every acknowledged series is indexed after the restart');
    const last = accepted - 1;
    const raw = await getJson(`${again.url}/raw/${UUID}/${encodeURIComponent(`pressure.${last}.4999|ST[host:h49]`)}?start_ts=${TS}&end_ts=${TS + 1}`);
    t.deepEqual(raw.json, [[TS * 1000, 4999]]);
  } finally {
    await again.stop();
  }
});
