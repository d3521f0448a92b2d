// actors/shard/open-buffers.ts: when open buffers fall due (full, window ended and quiet, too
// old), each once, at most a limit at a time; the journal low-water mark they hold; and each
// metric's buffers, found from its MetricInfo or from its id alone.
import test from 'ava';
import { NO_BUFFER, OpenBuffers } from '../../actors/shard/open-buffers.js';
import { SeriesTable } from '../../actors/shard/series-table.js';
import { noSeriesTable } from '../../actors/shard/window-buffer.js';
import { newMetricInfo, type MetricInfo } from '../../model/metric-info.js';
import { canonicalizeMetricName } from '../../model/metric-name.js';
import type { AccountId, MetricKey } from '../../model/types.js';

const SPAN = 60_000;
const rules = { spanMs: SPAN, maxBlockSamples: 4, sealQuietMs: 5_000, maxBufferAgeMs: 600_000 };

function metric(n: number): MetricInfo {
  const name = canonicalizeMetricName(`m${n}`);
  if (!name.ok) throw new Error(name.reason);
  const id = Buffer.alloc(16, n);
  return newMetricInfo({ key: `u-m${n}` as MetricKey, accountId: 1 as AccountId, uuid: 'u', checkName: 'c', name: name.value }, id, id.toString('hex'), 0);
}

function open(buffers: OpenBuffers, m: MetricInfo, window: number, seq: number, now: number, samples = 1) {
  const b = buffers.bufferFor(m, 'numeric', window, seq, now);
  for (let i = 0; i < samples; i++) buffers.table.append(b, window + i, i, now);
  if (buffers.table.size(b) >= rules.maxBlockSamples) buffers.filled(b);
  return b;
}

test('a window falls due once it has ended and been quiet; a full buffer at once', (t) => {
  const buffers = new OpenBuffers(rules);
  const quiet = open(buffers, metric(1), 0, 1, 1_000);
  const full = open(buffers, metric(2), 0, 2, 1_000, 4);
  t.deepEqual(buffers.due(2_000), [full], 'full: due before its window ends');
  buffers.close(full); // sealed
  t.deepEqual(buffers.due(SPAN + 4_999), [], 'not quiet long enough after the window');
  t.deepEqual(buffers.due(SPAN + 5_000), [quiet]);
});

test('a late append pushes the seal back; a closed buffer is never handed out again, though its row is reused', (t) => {
  const buffers = new OpenBuffers(rules);
  const m = metric(1);
  const b = open(buffers, m, 0, 1, 1_000);
  buffers.table.append(b, 30_000, 1, SPAN + 3_000);
  t.deepEqual(buffers.due(SPAN + 5_000), [], 'appended 2 s ago: not quiet yet');
  t.deepEqual(buffers.due(SPAN + 8_000), [b]);
  buffers.close(b);
  t.is(m.openHead, NO_BUFFER, 'a metric with no open buffer has no head');
  t.deepEqual(buffers.due(10 * SPAN), []);
  const again = open(buffers, metric(2), 10 * SPAN, 2, 10 * SPAN);
  t.is(again, b, 'the row is reused');
  t.deepEqual(buffers.table.series(again), { ts: [10 * SPAN], values: [0] }, 'without the samples of the buffer closed before');
  t.deepEqual(buffers.due(10 * SPAN + 1), [], 'and scheduled for its own window, not the old one');
});

test('at most `limit` scheduled buffers a call; the rest come next time', (t) => {
  const buffers = new OpenBuffers(rules);
  for (let n = 1; n <= 5; n++) open(buffers, metric(n), 0, n, 0);
  const first = buffers.due(SPAN + 5_000, 2);
  t.is(first.length, 2);
  for (const b of first) buffers.close(b);
  t.is(buffers.due(SPAN + 5_000, 10).length, 3);
});

test('the low-water mark is the oldest journal sequence an open buffer holds', (t) => {
  const buffers = new OpenBuffers(rules);
  t.is(buffers.lowWater(), Infinity);
  const [m1, m2] = [metric(1), metric(2)];
  const a = open(buffers, m1, 0, 7, 0);
  open(buffers, m2, 0, 9, 0);
  open(buffers, m1, 0, 12, 0);
  t.is(buffers.lowWater(), 7, 'a buffer keeps the sequence it was opened at');
  buffers.close(a);
  t.is(buffers.lowWater(), 9);
  buffers.drop(m2);
  t.is(buffers.lowWater(), Infinity);
});

test("a metric's buffers: one per kind and window, listed by window, found by id too, any closed", (t) => {
  const m = metric(1);
  const buffers = new OpenBuffers(rules, { find: (idHex) => (idHex === m.idHex ? m : undefined), metricAt: noSeriesTable });
  const a = buffers.bufferFor(m, 'numeric', 0, 1, 0);
  t.is(buffers.bufferFor(m, 'numeric', 0, 2, 0), a, 'the same window is the same buffer');
  const b = buffers.bufferFor(m, 'numeric', SPAN, 3, 0);
  const c = buffers.bufferFor(m, 'text', 0, 4, 0);
  t.deepEqual(buffers.numericWindows(m).sort((x, y) => x - y), [0, SPAN]);
  t.deepEqual(buffers.overlapping(m, 'numeric', 30_000, SPAN + 1_000), [a, b], 'oldest window first');
  t.deepEqual(buffers.overlapping({ id: m.id, idHex: m.idHex }, 'numeric', 0, 2 * SPAN), [a, b], 'a metric named by its id alone');
  buffers.close(a);
  t.is(buffers.bufferFor(m, 'text', 0, 5, 0), c, 'the others are still found after one is closed');
  t.is(buffers.bufferFor(m, 'numeric', SPAN, 5, 0), b);
  t.deepEqual(buffers.all().sort(), [b, c].sort());
});

test("buffers of a series table's metrics keep their rows: the owner read back is that metric, and closing relinks its list", (t) => {
  const table = new SeriesTable(() => null);
  const wire = (n: number) => ({ ...metric(n), name: metric(n).name, partition: n % 2 });
  const [m1, m2] = [table.adopt(wire(1)), table.adopt(wire(2))];
  const buffers = new OpenBuffers(rules, table);
  const a = open(buffers, m1, 0, 1, 0);
  const b = open(buffers, m2, 0, 2, 0);
  const c = open(buffers, table.adopt(wire(1)), SPAN, 3, 0);
  t.is(table.find(m1.idHex)!.openHead, c, "the newest buffer heads the metric's list, through another view of its row");
  for (const [buffer, m] of [[a, m1], [b, m2], [c, m1]] as const) {
    t.is(buffers.table.owner(buffer).idHex, m.idHex);
    t.is(buffers.table.owner(buffer).partition, m.partition);
  }
  buffers.close(c);
  t.is(m1.openHead, a, 'closing the head relinks the list');
  t.deepEqual([...buffers.table.open()].sort(), [a, b].sort());
  t.deepEqual(buffers.overlapping({ id: m2.id, idHex: m2.idHex }, 'numeric', 0, SPAN), [b], 'found by id alone through the table');
});
