import test from 'ava';
import fc from 'fast-check';
import { maxOf, minOf } from '../model/extremes.js';

test('minOf and maxOf agree with Math.min and Math.max, NaN and empty lists included', (t) => {
  fc.assert(
    fc.property(fc.array(fc.double(), { maxLength: 50 }), (values) => {
      t.is(minOf(values), Math.min(...values));
      t.is(maxOf(values), Math.max(...values));
    }),
  );
});

test('minOf and maxOf take lists far past the call-argument limit', (t) => {
  const values = Float64Array.from({ length: 1_000_000 }, (_, i) => i - 500_000);
  t.is(minOf(values), -500_000);
  t.is(maxOf(values), 499_999);
});
