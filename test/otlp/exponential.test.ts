// Exponential histograms → circllhist, and cumulative points → the change since the last one.
// Expected bins are worked out from the bucket boundaries in the comments beside them.
import test from 'ava';
import { CumulativeExponentials } from '../../model/otlp/cumulative.js';
import { exponentialToCircllhist, subtractExponential, type ExponentialCounts } from '../../model/otlp/exponential.js';
import type { ExponentialPoint } from '../../model/otlp/types.js';

const bins = (c: ExponentialCounts) => {
  const h = exponentialToCircllhist(c);
  return typeof h === 'string' ? h : h.toLabelCounts();
};
const counts = (scale: number, offset: number, positive: number[], zeroCount = 0, negative: number[] = []): ExponentialCounts => ({
  scale,
  zeroCount,
  positive: { offset, counts: positive },
  negative: { offset, counts: negative },
});
const point = (startMs: number, c: ExponentialCounts): ExponentialPoint => ({ ...c, attributes: [], startMs, timeMs: startMs + 1000, noRecordedValue: false, count: 0, zeroThreshold: 0 });

test('a bucket inside one bin lands there whole; counts are kept exactly', (t) => {
  // Scale 6: bucket 102 is (2^(102/64), 2^(103/64)] = (3.018, 3.051], inside bin [3.0, 3.1) → whole.
  t.deepEqual(bins(counts(6, 102, [7])), { '+30e-001': 7 });
  // Bucket 104 is (3.084, 3.118], across 3.1: log10(3.1/3.084) is 0.465 of its log-width
  // log10(2)/64 → round(7·0.465) = 3 in [3.0, 3.1), the other 4 in [3.1, 3.2).
  t.deepEqual(bins(counts(6, 104, [7])), { '+30e-001': 3, '+31e-001': 4 });
  // Scale 3: bucket 13 is (2^(13/8), 2^(14/8)] = (3.084, 3.364], over bins 3.0–3.3. F at 3.1, 3.2,
  // 3.3, end: log10(x/3.084)/log10(2^(1/8)) = 0.0581, 0.4246, 0.7797, 1 → round(100F) = 6, 42, 78,
  // 100 → 6, 36, 36, 22.
  t.deepEqual(bins(counts(3, 13, [100])), { '+30e-001': 6, '+31e-001': 36, '+32e-001': 36, '+33e-001': 22 });
  // Negative buckets mirror positive ones; the zero bucket is the zero bin.
  const negative: ExponentialCounts = { scale: 6, zeroCount: 4, positive: { offset: 0, counts: [] }, negative: { offset: 102, counts: [2] } };
  t.deepEqual(bins(negative), { '0': 4, '-30e-001': 2 });
});

test('what circllhist cannot hold is refused, below its range goes to the zero bin', (t) => {
  // Scale 0, bucket 426: (2^426, 2^427] ≈ (1.7e128, 3.5e128]: beyond circllhist's last bin (< 1e128).
  t.regex(bins(counts(0, 426, [1])) as string, /beyond circllhist's largest bin/);
  // Scale 0, bucket −430: (2^−430, 2^−429] ≈ (3.6e-130, 7.3e-130]: all below 1e-128 → zero bin.
  t.deepEqual(bins(counts(0, -430, [3])), { '0': 3 });
  t.regex(bins(counts(21, 0, [1])) as string, /scale 21 is outside/);
});

test('subtraction at the coarser scale, and null when a count went down', (t) => {
  // prev at scale 1: buckets 2, 3 = (2, 2.83], (2.83, 4] with 1, 1. cur at scale 0: bucket 1 = (2, 4]
  // with 5. prev downscaled: index 2>>1 = 1 and 3>>1 = 1 → bucket 1: 2. cur − prev = 3 in bucket 1.
  t.deepEqual(subtractExponential(counts(0, 1, [5]), counts(1, 2, [1, 1])), counts(0, 1, [3]));
  t.is(subtractExponential(counts(0, 1, [1]), counts(0, 1, [2])), null);
  t.is(subtractExponential(counts(0, 1, [1], 0), counts(0, 1, [1], 1)), null);
});

test('cumulative points: first whole (started after the node), then changes, restarts whole', (t) => {
  const c = new CumulativeExponentials(1_000);
  const first = c.delta('s', point(2_000, counts(0, 1, [2])));
  t.deepEqual(first.counts, point(2_000, counts(0, 1, [2])));
  // Not yet remembered (its request not stored): the same point again is still whole.
  t.deepEqual(c.delta('s', point(2_000, counts(0, 1, [2]))).counts, point(2_000, counts(0, 1, [2])));
  first.remember();
  t.deepEqual(c.delta('s', point(2_000, counts(0, 1, [5]))).counts, counts(0, 1, [3]));
  // A count went down: the producer restarted without saying so → whole.
  t.deepEqual(c.delta('s', point(2_000, counts(0, 1, [1]))).counts, point(2_000, counts(0, 1, [1])));
  // Another start time → whole.
  t.deepEqual(c.delta('s', point(9_000, counts(0, 1, [1]))).counts, point(9_000, counts(0, 1, [1])));
  // A series that started before the node did: only remembered, nothing stored.
  t.is(c.delta('old', point(500, counts(0, 1, [4]))).counts, null);
});
