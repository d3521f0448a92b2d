// Property tests of the histogram library: round trips, merge algebra, quantile order,
// and that arbitrary bytes never raise anything but HistogramFormatError.
import test from 'ava';
import fc from 'fast-check';
import { deserializeHistogram, Histogram, HistogramFormatError, histogramFromBase64, histogramToBase64, serializeHistogram } from '../../model/histogram/index.js';

const sample = fc.oneof(fc.double({ noNaN: false }), fc.integer({ min: -1000, max: 1000 }).map((n) => n / 10));
const inserts = fc.array(fc.tuple(sample, fc.bigInt({ min: 1n, max: 2n ** 64n - 1n })), { maxLength: 40 });
const hist = inserts.map((list) => {
  const h = Histogram.empty();
  for (const [v, c] of list) h.insert(v, c);
  return h;
});

test('serialize → deserialize and base64 round trips', (t) => {
  fc.assert(
    fc.property(hist, (h) => {
      t.true(deserializeHistogram(serializeHistogram(h)).equals(h));
      t.true(histogramFromBase64(histogramToBase64(h)).equals(h));
    }),
  );
});

test('merge is commutative and associative, and adds counts (saturating)', (t) => {
  fc.assert(
    fc.property(hist, hist, hist, (a, b, c) => {
      t.true(a.clone().merge(b).equals(b.clone().merge(a)));
      t.true(a.clone().merge(b).merge(c).equals(a.clone().merge(b.clone().merge(c))));
      const sum = a.sampleCount() + b.sampleCount();
      const merged = a.clone().merge(b).sampleCount();
      t.true(merged === sum || merged === 2n ** 64n - 1n);
    }),
  );
});

// Counts a double represents exactly: beyond 2^53 the reference's own walk loses order.
const exactHist = fc.array(fc.tuple(sample, fc.bigInt({ min: 1n, max: 2n ** 40n })), { maxLength: 40 }).map((list) => {
  const h = Histogram.empty();
  for (const [v, c] of list) h.insert(v, c);
  return h;
});

test('quantiles are non-decreasing in q', (t) => {
  const qs = [0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1];
  fc.assert(
    fc.property(exactHist, (h) => {
      for (const type of [1, 7] as const) {
        const v = h.quantiles(qs, type).filter((x) => !Number.isNaN(x));
        for (let i = 1; i < v.length; i++) t.true(v[i]! >= v[i - 1]!);
      }
    }),
  );
});

test('arbitrary bytes decode or raise HistogramFormatError', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      try {
        deserializeHistogram(bytes);
        histogramFromBase64(Buffer.from(bytes).toString('base64'));
      } catch (error) {
        t.true(error instanceof HistogramFormatError);
      }
    }),
  );
});
