// A node holding more series than its memory allows sheds writes (503) instead of ending out of
// memory (issue 30): a shard worker with a small heap is filled with new series until writes are
// refused for memory pressure; the node keeps answering, and what it acknowledged reads back.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID } from './helpers/node.js';

const TS = 1_700_000_000;
const SERIES_PER_BODY = 5000;

test('past the heap share, writes are refused for memory pressure; the node stays up and reads back what it took', async (t) => {
  // A 64 MiB shard heap, refused past half of it: reached after a few tens of thousands of series.
  const n = await startNode({ shardHeapMb: 64, memoryPressureShare: 0.5, writeLatencyBudgetMs: 0 });
  try {
    let refusal: { status: number; json: any } | null = null;
    let accepted = 0;
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
  } finally {
    await n.stop();
  }
});
