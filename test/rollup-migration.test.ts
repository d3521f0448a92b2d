// Rollup format v1 (one 101-byte record per period, as ferrite wrote before chunks) in a
// data dir is migrated to v2 chunks when a node opens it, and reads back the same.
import test from 'ava';
import { emptyAccumulator, encodeAccumulator, rollupFields, type RollupAccumulator } from '../model/rollup/accumulator.js';
import { CF, rollupKey, STATE_KEY } from '../storage/keys.js';
import { Store } from '../storage/rocks.js';
import { getJson, mLine, onlyShardDir, put, startNode, tempDir, UUID } from './helpers/node.js';

const DAY = 86_400_000;
const T = 10 * DAY; // a chunk start at 60 s (and 300 s) periods

function acc(n: number, mean: number): RollupAccumulator {
  const a = emptyAccumulator();
  a.value = { n, sum: n * mean, sumsq: n * mean * mean + n };
  a.derivative = { n: n - 1, sum: (n - 1) * 0.5, sumsq: (n - 1) * 0.25 };
  a.counter = { ...a.derivative };
  return a;
}

test('v1 rollup records are migrated to chunks at open and read back unchanged', async (t) => {
  const dir = tempDir();
  const first = await startNode({ shards: 1 }, dir);
  t.is((await put(first.url, mLine('1.000', 'mig.a', 'n', '1'))).status, 200);
  const found = first.node.registry.lookup(UUID, 'mig.a');
  if (!found.ok) throw new Error(found.reason);
  const id = found.metric.id;
  await first.stop(false);

  // What the old code left: base records (one at the chunk's first key), a coarser one, no format marker.
  const v1: [number, number, RollupAccumulator][] = [
    [60, T, acc(6, 10)],
    [60, T + 60_000, acc(6, 20)],
    [60, T + 240_000, acc(3, 30)],
    [60, T + 2 * DAY + 60_000, acc(2, 40)],
    [300, T, acc(15, 18)],
  ];
  const store = await Store.open(onlyShardDir(dir));
  const batch = store.batch();
  for (const [period, start, a] of v1) batch.put(CF.rollup, rollupKey(id, period, start), encodeAccumulator(a));
  batch.delete(CF.state, STATE_KEY.rollupFormat);
  await batch.write();
  await store.close();

  const second = await startNode({ shards: 1 }, dir);
  try {
    const read = async (start: number, end: number, span: number) => {
      const q = `start_ts=${start / 1000}&end_ts=${end / 1000}&rollup_span=${span}s&get_engine=nnt&type=all`;
      const r = await getJson(`${second.url}/rollup/${UUID}/mig.a?${q}`);
      t.is(r.status, 200, r.text);
      return r.json as [number, unknown][];
    };
    const expect = (start: number, a: RollupAccumulator | null) => [start / 1000, a === null ? null : JSON.parse(JSON.stringify(rollupFields(a)))];
    t.deepEqual(await read(T, T + 300_000, 60), [expect(T, v1[0]![2]), expect(T + 60_000, v1[1]![2]), expect(T + 120_000, null), expect(T + 180_000, null), expect(T + 240_000, v1[2]![2])]);
    t.deepEqual(await read(T + 2 * DAY, T + 2 * DAY + 120_000, 60), [expect(T + 2 * DAY, null), expect(T + 2 * DAY + 60_000, v1[3]![2])]);
    t.deepEqual(await read(T, T + 300_000, 300), [expect(T, v1[4]![2])]);
  } finally {
    await second.stop(false);
  }

  const after = await Store.open(onlyShardDir(dir));
  try {
    const versions = new Set<number>();
    for await (const { value } of after.scan(CF.rollup, {})) versions.add(value[0]!);
    t.deepEqual([...versions], [3], 'only chunks of the current format (v3) remain');
    t.deepEqual([...((await after.get(CF.state, STATE_KEY.rollupFormat)) ?? [])], [3]);
  } finally {
    await after.close();
  }
});
