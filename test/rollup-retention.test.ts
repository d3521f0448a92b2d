// Rollup retention with chunked storage: a level's chunks are dropped only once their whole
// span has expired, so no period younger than the retention is lost.
import test from 'ava';
import { getJson, startNode, UUID } from './helpers/node.js';

const DAY_S = 86_400;

test('expired rollup chunks are dropped whole; the chunk holding the cut and coarser levels stay', async (t) => {
  const n = await startNode({ rollups: [{ period: 60, retention: 3 * DAY_S }, { period: 300, retention: 0 }] });
  try {
    const today = Math.floor(Date.now() / 1000 / DAY_S) * DAY_S;
    const at = (s: number) => ({ metric: 'ret.a', id: UUID, offset: s, count: 1, value: 7, stddev: 0, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 });
    // 10 days ago (expired), the start of the day holding the cut (expired, but its chunk holds the cut), yesterday.
    const cut = Math.floor(Date.now() / 1000) - 3 * DAY_S - 60;
    const times = [today - 10 * DAY_S, Math.floor(cut / DAY_S) * DAY_S, today - DAY_S];
    const res = await fetch(`${n.url}/write/nnt`, { method: 'POST', body: JSON.stringify(times.map(at)) });
    t.is(res.status, 200);
    await n.node.sweepRetention();
    const count = async (s: number, span: number) => (await getJson(`${n.url}/rollup/${UUID}/ret.a?start_ts=${s}&end_ts=${s + span}&rollup_span=${span}s&get_engine=nnt&type=count`)).json[0][1];
    t.is(await count(times[0]!, 60), null, 'past the retention');
    t.is(await count(times[1]!, 60), 1, 'older than the retention, but in the chunk holding the cut: kept until all of the chunk expires');
    t.is(await count(times[2]!, 60), 1);
    for (const s of times) t.is(await count(s, 300), 1, 'the coarser level keeps everything');
  } finally {
    await n.stop();
  }
});
