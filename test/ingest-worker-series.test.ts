// actors/ingest/worker-series.ts: a parse worker's metrics as sids with typed columns.
import test from 'ava';
import { SidBatch, WorkerSeries } from '../actors/ingest/worker-series.js';
import { metricKey, placeMetric } from '../model/metric-key.js';
import type { AccountId } from '../model/types.js';

const uuid = (n: number) => `0b0b0b0b-0000-4000-8000-${String(n).padStart(12, '0')}`;

test('sids number metrics in order; each reads back its check, partition and key, past the columns\' growth', (t) => {
  const series = new WorkerSeries(true);
  const n = 3000;
  for (let i = 0; i < n; i++) {
    const key = metricKey(uuid(i % 7), `m${i}`);
    const { id, partition } = placeMetric(key, 16);
    t.is(series.find(id), -1);
    t.is(series.add(id, `m${i}`, (i % 3) as AccountId, uuid(i % 7), `c${i % 5}`, partition), i);
  }
  t.is(series.size, n);
  for (let i = 0; i < n; i++) {
    const key = metricKey(uuid(i % 7), `m${i}`);
    const { id, partition } = placeMetric(key, 16);
    if (series.find(id) !== i || series.partitionOf(i) !== partition || series.keyOf(i) !== key) return t.fail(`sid ${i}`);
    const check = series.checkOf(i);
    if (check.accountId !== i % 3 || check.uuid !== uuid(i % 7) || check.checkName !== `c${i % 5}`) return t.fail(`check of sid ${i}`);
  }
  t.pass();
});

test('a sid batch puts each sample in its metric\'s partition', (t) => {
  const series = new WorkerSeries(true);
  const sids = [0, 1, 2].map((i) => series.add(placeMetric(metricKey(uuid(1), `m${i}`), 4).id, `m${i}`, 1 as AccountId, uuid(1), 'c', [3, 1, 3][i]!));
  const batch = new SidBatch(series, () => 2);
  sids.forEach((sid, i) => batch.addNumeric(sid, 1000 + i, i));
  batch.add({ kind: 'text', metric: sids[1]!, ts: 5 as never, value: 'x' });
  t.deepEqual([...batch.parts.keys()].sort(), [1, 3]);
  t.deepEqual(batch.parts.get(3)!.metrics, [sids[0], sids[2]]);
  t.deepEqual([...batch.parts.get(3)!.values.subarray(0, 2)], [0, 2]);
  t.deepEqual(batch.parts.get(1)!.others.map((r) => r.metric), [sids[1]]);
  t.is(batch.size, 4);
});

test('series that keep no names (no series limits) still give each sid its partition and check, and refuse to make up a key', (t) => {
  const series = new WorkerSeries(false);
  const { id, partition } = placeMetric(metricKey(uuid(1), 'm'), 8);
  const sid = series.add(id, 'm', 4 as AccountId, uuid(1), 'c', partition);
  t.false(series.keepsNames);
  t.is(series.find(id), sid);
  t.is(series.partitionOf(sid), partition);
  t.deepEqual(series.checkOf(sid), { accountId: 4, uuid: uuid(1), checkName: 'c' });
  t.throws(() => series.keyOf(sid), { message: /keep no names/ });
});
