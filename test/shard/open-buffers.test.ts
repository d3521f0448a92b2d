// actors/shard/open-buffers.ts: when open buffers fall due (full, window ended and quiet, too
// old), each once, at most a limit at a time; and the journal low-water mark they hold.
import test from 'ava';
import { OpenBuffers } from '../../actors/shard/open-buffers.js';
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
  const state = buffers.stateOf(m);
  const b = buffers.bufferFor(state, 'numeric', window, seq, now);
  for (let i = 0; i < samples; i++) b.append(window + i, i, now);
  if (b.size >= rules.maxBlockSamples) buffers.filled(state, b);
  return { state, b };
}

test('a window falls due once it has ended and been quiet; a full buffer at once', (t) => {
  const buffers = new OpenBuffers(rules);
  const quiet = open(buffers, metric(1), 0, 1, 1_000);
  const full = open(buffers, metric(2), 0, 2, 1_000, 4);
  t.deepEqual(buffers.due(2_000).map((s) => s.buffer), [full.b], 'full: due before its window ends');
  buffers.close(full.state, full.b); // sealed
  t.deepEqual(buffers.due(SPAN + 4_999), [], 'not quiet long enough after the window');
  t.deepEqual(buffers.due(SPAN + 5_000).map((s) => s.buffer), [quiet.b]);
});

test('a late append pushes the seal back; a closed buffer is never handed out again', (t) => {
  const buffers = new OpenBuffers(rules);
  const { state, b } = open(buffers, metric(1), 0, 1, 1_000);
  b.append(30_000, 1, SPAN + 3_000);
  t.deepEqual(buffers.due(SPAN + 5_000), [], 'appended 2 s ago: not quiet yet');
  t.deepEqual(buffers.due(SPAN + 8_000).map((s) => s.buffer), [b]);
  buffers.close(state, b);
  t.is(b.size, 0, 'a closed buffer lets go of its samples (the schedule may hold it until its window is due)');
  t.deepEqual(b.series(), { ts: [], values: [] });
  t.deepEqual(buffers.due(10 * SPAN), []);
  t.is(buffers.get(metric(1).idHex), undefined, 'a metric with no open buffer is forgotten');
});

test('at most `limit` scheduled buffers a call; the rest come next time', (t) => {
  const buffers = new OpenBuffers(rules);
  for (let n = 1; n <= 5; n++) open(buffers, metric(n), 0, n, 0);
  const first = buffers.due(SPAN + 5_000, 2);
  t.is(first.length, 2);
  for (const s of first) buffers.close(s.state, s.buffer);
  t.is(buffers.due(SPAN + 5_000, 10).length, 3);
});

test('the low-water mark is the oldest journal sequence an open buffer holds', (t) => {
  const buffers = new OpenBuffers(rules);
  t.is(buffers.lowWater(), Infinity);
  const a = open(buffers, metric(1), 0, 7, 0);
  open(buffers, metric(2), 0, 9, 0);
  open(buffers, metric(1), 0, 12, 0);
  t.is(buffers.lowWater(), 7, 'a buffer keeps the sequence it was opened at');
  buffers.close(a.state, a.b);
  t.is(buffers.lowWater(), 9);
  buffers.drop(metric(2).idHex);
  t.is(buffers.lowWater(), Infinity);
});
