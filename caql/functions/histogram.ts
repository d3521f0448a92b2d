// Histogram functions and time windows (spec/caql.md §5): `histogram()` builds a histogram
// per slot from numeric inputs; `histogram:merge`, `:percentile`, `:count`, `:rate`,
// `:mean`, `:stddev` reuse the fetch transforms; `window:*` aggregates tumbling windows
// (aligned to the epoch) and `rolling:*` the window ending at each slot.
import { Histogram } from '../../model/histogram/index.js';
import { HISTOGRAM_TRANSFORMS, histogramCell } from '../../model/fetch/histogram.js';
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { widen, type Grid, type HistogramStream, type Stream } from '../stream.js';
import { requireHistogram, requireNumeric, withValues, type CaqlFunction } from './types.js';
import { maxOf, minOf } from '../../model/extremes.js';
import { lookupTable } from '../../model/lookup-table.js';

const create: CaqlFunction = async (inv) => {
  const inputs = (await inv.sources()).map((s) => requireNumeric(inv.name, s));
  const values = Array.from({ length: inv.grid.count }, (_, i) => {
    const present = inputs.map((s) => s.values[i] ?? null).filter((v): v is number => v !== null);
    if (present.length === 0) return null;
    const h = new Histogram();
    for (const v of present) h.insert(v);
    return h;
  });
  return [{ label: 'histogram', tags: [], name: 'histogram', canonical: 'histogram', kind: 'histogram', values }];
};

function mergeSlots(streams: HistogramStream[], i: number): Histogram | null {
  const present = streams.map((s) => s.values[i] ?? null).filter((h): h is Histogram => h !== null);
  return present.length === 0 ? null : present.reduce((acc, h) => acc.merge(h), new Histogram());
}

const merge: CaqlFunction = async (inv) => {
  const inputs = (await inv.sources()).map((s) => requireHistogram(inv.name, s));
  const values = Array.from({ length: inv.grid.count }, (_, i) => mergeSlots(inputs, i));
  return [{ label: 'merge', tags: [], name: 'merge', canonical: 'merge', kind: 'histogram', values }];
};

/** A per-histogram number (count, rate, mean, stddev), one output per input. */
function transform(name: string): CaqlFunction {
  const t = HISTOGRAM_TRANSFORMS[name]!;
  return async (inv) => {
    // histogram:rate(period=1s): samples per `period` (a slot holds grid.periodS seconds).
    const per = name === 'rate' ? (inv.kwDuration('period') ?? 1) : 1;
    return (await inv.sources()).map((s) => withValues(s, requireHistogram(inv.name, s).values.map((h) => scale(histogramCell(t, h, 0, inv.grid.periodS), per))));
  };
}

const scale = (v: number | null, by: number) => (v === null ? null : v * by);

const percentile: CaqlFunction = async (inv) => {
  const ps = inv.numbers();
  if (ps.length === 0) throw new CaqlUserError('histogram:percentile: needs at least one percentile (0–100)');
  for (const p of ps) if (!(p >= 0 && p <= 100)) throw new CaqlUserError(`histogram:percentile: ${p} is not between 0 and 100`);
  const t = HISTOGRAM_TRANSFORMS.percentile!;
  const out: Stream[] = [];
  for (const s of await inv.sources()) {
    const h = requireHistogram(inv.name, s);
    for (const p of ps) out.push({ ...withValues(s, h.values.map((x) => histogramCell(t, x, p, inv.grid.periodS))), label: `${s.label} p${p}` });
  }
  return out;
};

type Aggregate = (values: number[]) => number;
const AGGREGATES: Record<string, Aggregate> = lookupTable({
  sum: (v) => v.reduce((a, b) => a + b, 0),
  mean: (v) => v.reduce((a, b) => a + b, 0) / v.length,
  max: (v) => maxOf(v),
  min: (v) => minOf(v),
  count: (v) => v.length,
});

/** Slot i's window, as indexes into the widened grid's values. */
type WindowOf = (i: number, wide: Grid, offset: number) => [number, number];

/**
 * A windowed function: reads the sources on a grid widened `backS` earlier, then for each
 * slot aggregates the values (or merges the histograms) in its window.
 */
function windowed(kind: 'window' | 'rolling', aggregate: string): CaqlFunction {
  return async (inv) => {
    const d = inv.duration(0);
    const slots = Math.max(1, Math.round(d / inv.grid.periodS));
    const { grid: wide, offset } = widen(inv.grid, kind === 'rolling' ? (slots - 1) * inv.grid.periodS : d);
    const span: WindowOf =
      kind === 'rolling'
        ? (i) => [i + offset - slots + 1, i + offset + 1]
        : (i) => {
            const t = inv.grid.startS + i * inv.grid.periodS;
            const windowStart = t - (((t % d) + d) % d);
            const first = Math.round((windowStart - wide.startS) / wide.periodS);
            return [first, Math.min(first + slots, wide.count)];
          };
    return (await inv.sources(wide)).map((s) => aggregateWindows(inv, s, aggregate, span, wide, offset));
  };
}

function aggregateWindows(inv: Invocation, s: Stream, aggregate: string, span: WindowOf, wide: Grid, offset: number): Stream {
  if (aggregate === 'merge') {
    const h = requireHistogram(inv.name, s);
    const values = Array.from({ length: inv.grid.count }, (_, i) => {
      const [from, to] = span(i, wide, offset);
      const present = h.values.slice(Math.max(0, from), to).filter((x): x is Histogram => x !== null);
      return present.length === 0 ? null : present.reduce((acc, x) => acc.merge(x), new Histogram());
    });
    return { ...h, values };
  }
  const n = requireNumeric(inv.name, s);
  const fold = AGGREGATES[aggregate]!;
  return withValues(
    n,
    Array.from({ length: inv.grid.count }, (_, i) => {
      const [from, to] = span(i, wide, offset);
      const present = n.values.slice(Math.max(0, from), to).filter((v): v is number => v !== null);
      return present.length === 0 ? null : fold(present);
    }),
  );
}

export const HISTOGRAMS: Record<string, CaqlFunction> = lookupTable({
  histogram: create,
  'histogram:create': create,
  'histogram:merge': merge,
  'histogram:percentile': percentile,
  'histogram:count': transform('count'),
  'histogram:rate': transform('rate'),
  'histogram:mean': transform('mean'),
  'histogram:stddev': transform('stddev'),
});
for (const kind of ['window', 'rolling'] as const) {
  for (const aggregate of [...Object.keys(AGGREGATES), 'merge']) HISTOGRAMS[`${kind}:${aggregate}`] = windowed(kind, aggregate);
}
