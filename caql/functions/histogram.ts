// `histogram:*` (reference "Package histogram"): build histograms from numbers, merge and
// subtract them, and read numbers off them per slot. Functions taking thresholds or
// percentiles (t1, t2, …) answer one stream per value, labelled `<label> <function>(<value>)`.
// Thresholds are matched at bin resolution: `count_above(t)` counts every bin from t's bin up.
import { Histogram } from '../../model/histogram/index.js';
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { durationSeconds, sig, type Signature } from '../signature.js';
import type { HistogramStream, Stream } from '../stream.js';
import { present } from './numbers.js';
import { normalDraw, seededRandom } from './random.js';
import { define, finite, numericSources, perSlot, requireHistogram, withValues, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

const NONE = sig();

const histogramStream = (label: string, values: (Histogram | null)[]): HistogramStream => ({ label, tags: [], name: label, canonical: label, kind: 'histogram', values });

/** `histogram()` / `histogram:create()`: per slot, a histogram of every numeric input's value. */
const create = define(NONE, async (inv) => {
  const inputs = await numericSources(inv);
  const values = perSlot(inv, (i) => {
    const v = present(inputs.map((s) => s.values[i] ?? null));
    return v.length === 0 ? null : v.reduce((h, x) => h.insert(x), new Histogram());
  });
  return [histogramStream('histogram', values)];
});

async function histogramSources(inv: Invocation): Promise<HistogramStream[]> {
  return (await inv.sources()).map((s) => requireHistogram(inv.name, s));
}

/** `histogram:merge()`: every input merged into one stream. */
const merge = define(NONE, async (inv) => {
  const inputs = await histogramSources(inv);
  const values = perSlot(inv, (i) => {
    const hs = inputs.map((s) => s.values[i] ?? null).filter((h): h is Histogram => h !== null);
    return hs.length === 0 ? null : hs.reduce((acc, h) => acc.merge(h), new Histogram());
  });
  return [histogramStream('merge', values)];
});

/** `histogram:subtract()`: the first input minus the rest, bin by bin (a count never goes below 0). */
const subtract = define(NONE, async (inv) => {
  const [first, ...rest] = await histogramSources(inv);
  if (first === undefined) return [];
  const values = first.values.map((h, i) => (h === null ? null : rest.reduce((acc, r) => (r.values[i] ? acc.subtract(r.values[i]!) : acc), h.clone())));
  return [{ ...first, values }];
});

/** What a reading knows besides the histogram: the slot's length, and for rates the `period=` scale (period / slot). */
interface Slot {
  slotS: number;
  scale: number;
}

const read = (inv: Invocation, s: Stream, f: (h: Histogram) => number) => withValues(s, requireHistogram(inv.name, s).values.map((h) => (h === null ? null : finite(f(h)))));

const slotOf = (inv: Invocation, signature: Signature): Slot => ({
  slotS: inv.grid.periodS,
  scale: [...signature.positional, ...signature.keywords].some((p) => p.name === 'period') ? per(inv, inv.grid.periodS) : 1,
});

function perHistogram(signature: Signature, reading: (h: Histogram, slot: Slot) => number): CaqlFunction {
  return define(signature, async (inv) => {
    const slot = slotOf(inv, signature);
    return (await inv.sources()).map((s) => read(inv, s, (h) => reading(h, slot)));
  });
}

interface PerValueOptions {
  /** A problem with a value, or null. */
  check?: (v: number) => string | null;
  keywords?: string;
  label?: (label: string, v: number) => string;
}

/** One output per value of the variadic parameter. */
function perValue(param: string, reading: (h: Histogram, v: number, slot: Slot) => number, options: PerValueOptions = {}): CaqlFunction {
  const signature = sig(`...${param}:number`, options.keywords ?? '');
  return define(signature, async (inv) => {
    const slot = slotOf(inv, signature);
    const vs = inv.nums(param);
    for (const v of vs) {
      const problem = options.check?.(v) ?? null;
      if (problem !== null) throw new CaqlUserError(`${inv.name}: ${problem}`);
    }
    const short = inv.name.slice('histogram:'.length);
    const labelOf = options.label ?? ((label, v) => `${label} ${short}(${v})`);
    const out: Stream[] = [];
    for (const s of await inv.sources()) {
      for (const v of vs) out.push({ ...read(inv, s, (h) => reading(h, v, slot)), label: labelOf(s.label, v) });
    }
    return out;
  });
}

const count = (h: Histogram) => Number(h.sampleCount());
const quantileOf = (h: Histogram, q: number) => h.quantiles([q])[0]!;
const percentRange = (v: number) => (v >= 0 && v <= 100 ? null : `${v} is not between 0 and 100`);
/**
 * `period=1s`: rates are per this many seconds. Unlike other durations, a bare number here is
 * seconds, as the reference documents (`histogram:rate(60)` is a per-minute rate).
 */
function per(inv: Invocation, slotS: number): number {
  const l = inv.lit('period');
  const seconds = l === undefined ? 1 : l.type === 'number' ? l.value : durationSeconds(l);
  if (seconds === null || !(seconds > 0) || !Number.isFinite(seconds)) throw new CaqlUserError(`${inv.name}: period must be a positive duration such as 1s or 1m`);
  return seconds / slotS;
}

/** `histogram:count_between(lo, hi)` and friends: samples with lo < x ≤ hi (at bin resolution). */
const between = (h: Histogram, lo: number, hi: number) => Number(h.countBelow(hi, true) - h.countBelow(lo, true));

function twoThresholds(reading: (h: Histogram, lo: number, hi: number) => number): CaqlFunction {
  return define(sig('t_lower:number, t_upper:number'), async (inv) => {
    const [lo, hi] = [inv.num('t_lower'), inv.num('t_upper')];
    if (lo > hi) throw new CaqlUserError(`${inv.name}: t_lower ${lo} is above t_upper ${hi}`);
    return (await inv.sources()).map((s) => read(inv, s, (h) => reading(h, lo, hi)));
  });
}

/** Synthetic samples for `histogram:random`, by method. */
const DRAWS: Record<string, (random: () => number, inv: Invocation) => number> = lookupTable({
  normal: (random, inv) => (inv.optNum('mean') ?? 0) + (inv.optNum('sd') ?? 1) * normalDraw(random),
  lognormal: (random, inv) => Math.exp((inv.optNum('mean') ?? 0) + (inv.optNum('sd') ?? 1) * normalDraw(random)),
  uniform: (random, inv) => (inv.optNum('min') ?? 0) + random() * ((inv.optNum('max') ?? 1) - (inv.optNum('min') ?? 0)),
  exponential: (random, inv) => -Math.log(1 - random()) / (inv.optNum('rate') ?? 1),
});
/** Most samples one slot of `histogram:random` may draw. */
const MAX_RANDOM_SAMPLES = 10_000;

/**
 * `histogram:random(method="normal", samples=1, seed=-1, …)`: per slot, a histogram of
 * `samples` draws (or as many as a source's value in that slot) from the distribution:
 * normal(mean=0, sd=1), lognormal(mean=0, sd=1 of the logarithm), uniform(min=0, max=1),
 * exponential(rate=1).
 */
const random = define(
  sig('', 'max:number?, seed:number=-1, p:number?, rate:number?, xnonc:number?, df:number?, min:number?, beta:number?, n:number?, method:string=normal, mean:number?, alpha:number?, samples:number=1, sd:number?, dfd:number?, dfn:number?'),
  async (inv) => {
    const draw = DRAWS[inv.str('method')];
    if (draw === undefined) throw new CaqlUserError(`${inv.name}: method must be one of ${Object.keys(DRAWS).join(', ')}, not '${inv.str('method')}'`);
    const [source] = await numericSources(inv);
    const rng = seededRandom(inv.num('seed'));
    const values = perSlot(inv, (i) => {
      if ((i & 255) === 0) inv.checkDeadline();
      const n = source === undefined ? inv.num('samples') : source.values[i];
      if (n === null || n === undefined) return null;
      if (!(n >= 0 && n <= MAX_RANDOM_SAMPLES)) throw new CaqlUserError(`${inv.name}: ${n} samples in a slot; between 0 and ${MAX_RANDOM_SAMPLES}`);
      const h = new Histogram();
      for (let k = 0; k < Math.round(n); k++) h.insert(draw(rng, inv));
      return h;
    });
    return [histogramStream(`random ${inv.str('method')}`, values)];
  },
);

export const HISTOGRAMS: Record<string, CaqlFunction> = lookupTable({
  histogram: create,
  'histogram:create': create,
  'histogram:merge': merge,
  'histogram:subtract': subtract,
  'histogram:random': random,
  'histogram:percentile': perValue('p', (h, p) => quantileOf(h, p / 100), { check: percentRange, label: (label, p) => `${label} p${p}` }),
  'histogram:count': perHistogram(NONE, count),
  'histogram:rate': perHistogram(sig('period:literal?'), (h, { scale }) => count(h) * scale),
  'histogram:mean': perHistogram(NONE, (h) => h.approxMean()),
  'histogram:stddev': perHistogram(NONE, (h) => h.approxStddev()),
  'histogram:sum': perHistogram(NONE, (h) => h.approxSum()),
  'histogram:min': perHistogram(NONE, (h) => quantileOf(h, 0)),
  'histogram:max': perHistogram(NONE, (h) => quantileOf(h, 1)),
  'histogram:median': perHistogram(NONE, (h) => quantileOf(h, 0.5)),
  'histogram:IQR': define(sig('range:number=50'), async (inv) => {
    const range = inv.num('range');
    if (percentRange(range) !== null) throw new CaqlUserError(`${inv.name}: range ${percentRange(range)}`);
    return (await inv.sources()).map((s) => read(inv, s, (h) => quantileOf(h, 0.5 + range / 200) - quantileOf(h, 0.5 - range / 200)));
  }),
  'histogram:count_above': perValue('t', (h, t) => Number(h.countAbove(t))),
  'histogram:count_below': perValue('t', (h, t) => Number(h.countBelow(t))),
  'histogram:count_bin': perValue('t', (h, t) => Number(h.countNearby(t))),
  'histogram:count_between': twoThresholds(between),
  'histogram:inverse_percentile': perValue('t', (h, t) => h.inverseQuantiles([t])[0]! * 100),
  'histogram:rate_above': perValue('t', (h, t, { scale }) => Number(h.countAbove(t)) * scale, { keywords: 'period:literal?' }),
  'histogram:rate_below': perValue('t', (h, t, { scale }) => Number(h.countBelow(t)) * scale, { keywords: 'period:literal?' }),
  'histogram:rate_bin': perValue('t', (h, t, { slotS }) => Number(h.countNearby(t)) / slotS),
  'histogram:ratio_above': perValue('t', (h, t) => Number(h.countAbove(t)) / count(h)),
  'histogram:ratio_below': perValue('t', (h, t) => Number(h.countBelow(t)) / count(h)),
  'histogram:ratio_between': twoThresholds((h, lo, hi) => between(h, lo, hi) / count(h)),
});
