// A shard worker that dies is restarted and given its part of the journal again: meanwhile
// questions about its partitions get 503 with Retry-After while the other shard answers, and
// writes are refused; afterwards every acknowledged sample reads back, sealed or not.
import test from 'ava';
import { placeMetric, metricKey } from '../model/metric-key.js';
import { getJson, mLine, put, startNode, UUID } from './helpers/node.js';

const PARTITIONS = 16;
const SHARDS = 2;
const T0 = 1_700_000_000;

/** Metric names whose partitions fall in shard 0 and in shard 1. */
function namesByShard(count: number): string[][] {
  const out: string[][] = [[], []];
  for (let i = 0; out.some((l) => l.length < count); i++) {
    const name = `rec.${i}`;
    const shard = placeMetric(metricKey(UUID, name), PARTITIONS).partition % SHARDS;
    if (out[shard]!.length < count) out[shard]!.push(name);
  }
  return out;
}

test('a dead shard worker is restarted and replays the journal; only its partitions are unavailable meanwhile', async (t) => {
  const n = await startNode({ shards: SHARDS, partitions: PARTITIONS });
  try {
    const [zero, one] = namesByShard(3) as [string[], string[]];
    const lines = [...zero, ...one].flatMap((name, i) => [0, 1, 2].map((j) => mLine(`${T0 + j * 10}.000`, name, 'n', String(i * 10 + j))));
    t.is((await put(n.url, lines.join('\n'))).status, 200);
    const read = (name: string) => getJson(`${n.url}/raw/${UUID}/${name}?start_ts=${T0}&end_ts=${T0 + 60}`);

    await n.node.shards.kill(1);
    const refused = await fetch(`${n.url}/raw/${UUID}/${one[0]}?start_ts=${T0}&end_ts=${T0 + 60}`);
    // The restart takes a worker start and a store open: it is under way when the kill returns.
    t.is(refused.status, 503);
    t.is(refused.headers.get('retry-after'), '1');
    t.is(((await refused.json()) as { code: string }).code, 'FER_ERR_SHARD_UNAVAILABLE');
    t.is((await read(zero[0]!)).status, 200, 'the other shard answers');

    let after = await read(one[0]!);
    for (let i = 0; after.status !== 200 && i < 200; i++) after = await new Promise((r) => setTimeout(r, 50)).then(() => read(one[0]!));
    const all = [...zero, ...one];
    for (const [i, name] of all.entries()) t.deepEqual((await read(name)).json, [0, 1, 2].map((j) => [(T0 + j * 10) * 1000, i * 10 + j]), name);
    let write = await put(n.url, mLine(`${T0 + 30}.000`, one[1]!, 'n', '99'));
    for (let i = 0; write.status !== 200 && i < 200; i++) write = await new Promise((r) => setTimeout(r, 50)).then(() => put(n.url, mLine(`${T0 + 30}.000`, one[1]!, 'n', '99')));
    t.is(write.status, 200, 'writes are taken again');
    t.deepEqual((await read(one[1]!)).json.at(-1), [(T0 + 30) * 1000, 99]);
  } finally {
    await n.stop();
  }
});
