// `outlier:*` (reference "Package outlier"): how far streams stray from their peers, slot by
// slot. What ferrite computes:
//   std_score(trim=0, show_model=0, normalize=0)  the reference's formula: (y − mean(c))/NORM
//       for the first stream y against the others c (their `trim` lowest and highest values
//       dropped); NORM is 1, their population standard deviation (normalize=1) or |their mean|
//       (normalize=2); show_model=1 answers mean(c) instead.
//   cluster_score(normalize=0)  for every stream, |its std_score against all the others|.
//   count(sensitivity=50)  how many values lie further than k·σ̂ from the median, σ̂ = 1.4826 ×
//       the median absolute deviation (a robust standard deviation) and k = 3·(100 − s)/s as in
//       anomaly_detection (s = 50: 3σ̂; 100: anything off the median; 0: nothing).
//   normal_range(sensitivity=50)  that band: two streams, median − k·σ̂ and median + k·σ̂.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { sig } from '../signature.js';
import { numeric, type NumericStream } from '../stream.js';
import { thresholdOf } from './anomaly.js';
import { mean, popvar, present, quantile } from './numbers.js';
import { commonTags } from './stats.js';
import { define, finite, numericSources, perSlot, withValues, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

/** Consistency constant: σ ≈ 1.4826 × MAD for normally distributed data. */
const MAD_TO_SIGMA = 1.4826;

function normalizeMode(inv: Invocation): 0 | 1 | 2 {
  const n = inv.num('normalize');
  if (n !== 0 && n !== 1 && n !== 2) throw new CaqlUserError(`${inv.name}: normalize must be 0, 1 or 2, got ${n}`);
  return n;
}

/** (y − mean(c)) / NORM, or null without context. */
function standardScore(y: number, context: readonly number[], normalize: 0 | 1 | 2): number | null {
  if (context.length === 0) return null;
  const m = mean(context);
  const norm = normalize === 0 ? 1 : normalize === 1 ? Math.sqrt(popvar(context)) : Math.abs(m);
  return finite((y - m) / norm);
}

const stdScore = define(sig('trim:number=0, show_model:number=0, normalize:number=0'), async (inv) => {
  const normalize = normalizeMode(inv);
  const trim = inv.num('trim');
  if (!Number.isInteger(trim) || trim < 0) throw new CaqlUserError(`${inv.name}: trim must be a whole number ≥ 0`);
  const [first, ...rest] = await numericSources(inv);
  if (first === undefined) return [];
  const values = perSlot(inv, (i) => {
    const sorted = present(rest.map((s) => s.values[i] ?? null)).sort((a, b) => a - b);
    const context = sorted.slice(trim, Math.max(trim, sorted.length - trim));
    if (inv.num('show_model') !== 0) return context.length === 0 ? null : mean(context);
    const y = first.values[i] ?? null;
    return y === null ? null : standardScore(y, context, normalize);
  });
  return [withValues(first, values)];
});

/** Per slot, each stream's |std_score| against all the others, from the slot's totals (linear in the streams). */
const clusterScore = define(sig('normalize:number=0'), async (inv) => {
  const normalize = normalizeMode(inv);
  const streams = await numericSources(inv);
  const totals = perSlot(inv, (i) => {
    const v = present(streams.map((s) => s.values[i] ?? null));
    return { n: v.length, sum: v.reduce((a, b) => a + b, 0), squares: v.reduce((a, b) => a + b * b, 0) };
  });
  return streams.map((s) =>
    withValues(
      s,
      s.values.map((y, i) => {
        const { n, sum, squares } = totals[i]!;
        if (y === null || n < 2) return null;
        const m = (sum - y) / (n - 1);
        const norm = normalize === 0 ? 1 : normalize === 1 ? Math.sqrt(Math.max(0, (squares - y * y) / (n - 1) - m * m)) : Math.abs(m);
        return finite(Math.abs(y - m) / norm);
      }),
    ),
  );
});

/** Per slot: the median and the robust spread of the values present. */
function centre(streams: readonly NumericStream[], i: number): { values: number[]; median: number; sigma: number } | null {
  const values = present(streams.map((s) => s.values[i] ?? null));
  if (values.length === 0) return null;
  const median = quantile(values, 0.5);
  return { values, median, sigma: MAD_TO_SIGMA * quantile(values.map((v) => Math.abs(v - median)), 0.5) };
}

const SENSITIVITY = sig('sensitivity:number=50');

const count = define(SENSITIVITY, async (inv) => {
  const k = thresholdOf(inv);
  const streams = await numericSources(inv);
  const values = perSlot(inv, (i) => {
    const c = centre(streams, i);
    return c === null ? null : c.values.filter((v) => Math.abs(v - c.median) > k * c.sigma).length;
  });
  return [numeric({ label: 'outliers', tags: commonTags(streams) }, values)];
});

const normalRange = define(SENSITIVITY, async (inv) => {
  const k = thresholdOf(inv);
  const streams = await numericSources(inv);
  const tags = commonTags(streams);
  const bound = (sign: number) =>
    perSlot(inv, (i) => {
      const c = centre(streams, i);
      return c === null ? null : finite(c.median + sign * (k === 0 ? 0 : k * c.sigma));
    });
  return [numeric({ label: 'normal_range lower', tags }, bound(-1)), numeric({ label: 'normal_range upper', tags }, bound(1))];
});

export const OUTLIER: Record<string, CaqlFunction> = lookupTable({
  'outlier:std_score': stdScore,
  'outlier:cluster_score': clusterScore,
  'outlier:count': count,
  'outlier:normal_range': normalRange,
});
