// Time windows (reference "Package window", "Package rolling", "Package aggregate").
//
// A window function computes on a grid of `period` (default VIEW_PERIOD) and answers, for each
// slot of the view at time t, the aggregate of the values whose slot starts in one window
// [w, w + d). Windows start at w = offset + k·skip (offset a duration, or an IANA zone whose
// local midnight aligns them). With align="start" a slot shows the window that started last at
// or before t; with align="end" the window that ended last at or before the slot's end (t +
// period), so it never shows data from after the slot.
//   window:*    skip = d, align = start: tumbling windows, each slot showing its own window.
//   rolling:*   skip = period, align = end: the window of length d ending with each slot.
//   aggregate:* the values of each view slot at a finer `period` (default 1M).
// Windows reach before the view (and, aligned at the start, after it) as far as they need.
import { Histogram } from '../../model/histogram/index.js';
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { durationSeconds, sig, type Signature } from '../signature.js';
import { gridCovering, type Stream } from '../stream.js';
import { AGGREGATES, quantile } from './numbers.js';
import { timeZone, type TimeZone } from './time.js';
import { define, requireHistogram, requireNumeric, withValues, type CaqlFunction } from './types.js';
import { maxOf, minOf } from '../../model/extremes.js';
import { lookupTable } from '../../model/lookup-table.js';

type Cell = number | Histogram | null;

interface Reducer {
  input: 'numeric' | 'histogram';
  output: 'numeric' | 'histogram';
  /** Values of one window in time order, NULLs included. */
  reduce(values: readonly Cell[], param: number): Cell;
}

const presentNumbers = (values: readonly Cell[]) => values.filter((v): v is number => typeof v === 'number');

/** Consecutive pairs of present values, in time order. */
function pairs(values: readonly Cell[]): [number, number][] {
  const v = presentNumbers(values);
  return v.slice(1).map((b, i) => [v[i]!, b]);
}

const numericReducer = (reduce: (v: number[], param: number) => number | null): Reducer => ({ input: 'numeric', output: 'numeric', reduce: (values, param) => reduce(presentNumbers(values), param) });

const REDUCERS: Record<string, Reducer> = lookupTable({
  delta: numericReducer((v) => (v.length < 2 ? null : v[v.length - 1]! - v[0]!)),
  first: numericReducer((v) => v[0] ?? null),
  last: numericReducer((v) => v[v.length - 1] ?? null),
  absent: numericReducer((v) => (v.length === 0 ? 1 : null)),
  present: numericReducer((v) => (v.length === 0 ? null : 1)),
  changes: { input: 'numeric', output: 'numeric', reduce: (values) => (presentNumbers(values).length === 0 ? null : pairs(values).filter(([a, b]) => a !== b).length) },
  resets: { input: 'numeric', output: 'numeric', reduce: (values) => (presentNumbers(values).length === 0 ? null : pairs(values).filter(([a, b]) => b < a).length) },
  increase: { input: 'numeric', output: 'numeric', reduce: (values) => (presentNumbers(values).length < 2 ? null : pairs(values).reduce((sum, [a, b]) => sum + (b >= a ? b - a : b), 0)) },
  percentile: numericReducer((v, p) => (v.length === 0 ? null : quantile(v, p / 100))),
  inverse_percentile: numericReducer((v, t) => (v.length === 0 ? null : (100 * v.filter((x) => x < t).length) / v.length)),
  histogram: {
    input: 'numeric',
    output: 'histogram',
    reduce: (values) => {
      const v = presentNumbers(values);
      return v.length === 0 ? null : v.reduce((h, x) => h.insert(x), new Histogram());
    },
  },
  merge: {
    input: 'histogram',
    output: 'histogram',
    reduce: (values) => {
      const hs = values.filter((h): h is Histogram => h instanceof Histogram);
      return hs.length === 0 ? null : hs.reduce((acc, h) => acc.merge(h), new Histogram());
    },
  },
});
for (const [name, aggregate] of Object.entries(AGGREGATES)) REDUCERS[name] = numericReducer(aggregate);

interface WindowSpec {
  durationS: number;
  skipS: number;
  offset: number | TimeZone;
  align: 'start' | 'end';
  /** The period the sources are read at. */
  periodS: number;
}

const WINDOW_KEYWORDS = 'skip:duration?, offset:literal?, align:string?, period:duration?';

function positive(inv: Invocation, what: string, v: number): number {
  if (!(v > 0)) throw new CaqlUserError(`${inv.name}: ${what} must be a positive duration`);
  return v;
}

/** `offset=`: a duration (a bare number is minutes; '2h' as a string too) or an IANA zone name. */
function offsetOf(inv: Invocation): number | TimeZone {
  const l = inv.lit('offset');
  if (l === undefined) return 0;
  const seconds = durationSeconds(l);
  if (seconds !== null && Number.isFinite(seconds)) return seconds;
  if (l.type === 'string') return timeZone(inv.name, l.value);
  throw new CaqlUserError(`${inv.name}: offset must be a duration or a time zone name`);
}

function windowSpec(inv: Invocation, family: 'window' | 'rolling'): WindowSpec {
  const periodS = positive(inv, 'period', inv.optNum('period') ?? inv.grid.periodS);
  const durationS = positive(inv, 'window_duration', inv.num('window_duration'));
  const align = inv.optStr('align') ?? (family === 'window' ? 'start' : 'end');
  if (align !== 'start' && align !== 'end') throw new CaqlUserError(`${inv.name}: align must be "start" or "end", not '${align}'`);
  const skipS = positive(inv, 'skip', inv.optNum('skip') ?? (family === 'window' ? durationS : periodS));
  return { durationS, skipS, offset: offsetOf(inv), align, periodS };
}

/** The window [from, to) slot time t shows. */
function windowAt(spec: WindowSpec, t: number, viewPeriodS: number): [number, number] {
  const anchor = spec.align === 'start' ? t : t + viewPeriodS - spec.durationS;
  const shift = typeof spec.offset === 'number' ? spec.offset : -spec.offset.offsetS(anchor);
  const start = Math.floor((anchor - shift) / spec.skipS) * spec.skipS + shift;
  return [start, start + spec.durationS];
}

/** Evaluates a windowed function: read the sources once on the covering grid, reduce each slot's window. */
async function windowed(inv: Invocation, spec: WindowSpec, reducer: Reducer, param: number): Promise<Stream[]> {
  const windows = Array.from({ length: inv.grid.count }, (_, i) => windowAt(spec, inv.grid.startS + i * inv.grid.periodS, inv.grid.periodS));
  const grid = gridCovering(inv.name, minOf(windows.map(([a]) => a)), maxOf(windows.map(([, b]) => b)), spec.periodS);
  const index = (t: number) => Math.max(0, Math.ceil((t - grid.startS) / grid.periodS));
  return (await inv.sources(grid)).map((s) => {
    const cells: readonly Cell[] = reducer.input === 'histogram' ? requireHistogram(inv.name, s).values : requireNumeric(inv.name, s).values;
    let previous: { from: number; to: number; value: Cell } | null = null;
    const values = windows.map(([from, to], i) => {
      if ((i & 15) === 0) inv.checkDeadline();
      if (previous === null || previous.from !== from || previous.to !== to) previous = { from, to, value: reducer.reduce(cells.slice(index(from), index(to)), param) };
      return previous.value;
    });
    if (reducer.output === 'numeric') return withValues(s, values as (number | null)[]);
    return { label: s.label, tags: s.tags, name: s.name, canonical: s.canonical, ...(s.key === undefined ? {} : { key: s.key }), kind: 'histogram' as const, values: values as (Histogram | null)[] };
  });
}

/** The parameter a reducer takes after the duration, and its valid range. */
const PARAMS: Record<string, { name: string; check: (v: number) => boolean; range: string }> = lookupTable({
  percentile: { name: 'percentile', check: (v) => v >= 0 && v <= 100, range: 'between 0 and 100' },
  inverse_percentile: { name: 'threshold', check: () => true, range: '' },
});

function windowFunction(family: 'window' | 'rolling', name: string): CaqlFunction {
  const param = PARAMS[name];
  const signature: Signature = sig(`window_duration:duration${param === undefined ? '' : `, ${param.name}:number`}`, WINDOW_KEYWORDS);
  return define(signature, async (inv) => {
    const value = param === undefined ? 0 : inv.num(param.name);
    if (param !== undefined && !param.check(value)) throw new CaqlUserError(`${inv.name}: ${param.name} ${value} is not ${param.range}`);
    return windowed(inv, windowSpec(inv, family), REDUCERS[name]!, value);
  });
}

/** `aggregate:<name>([period=1M])`: each view slot reduced from the values at `period` inside it. */
function aggregateFunction(name: string): CaqlFunction {
  return define(sig('period:duration=60'), async (inv) => {
    const spec: WindowSpec = { durationS: inv.grid.periodS, skipS: inv.grid.periodS, offset: 0, align: 'start', periodS: positive(inv, 'period', inv.num('period')) };
    return windowed(inv, spec, REDUCERS[name]!, 0);
  });
}

/** `histogram:window(d)` / `histogram:rolling(d)`: the deprecated forms of window:merge / rolling:merge. */
function deprecatedMerge(family: 'window' | 'rolling'): CaqlFunction {
  const modern = windowFunction(family, 'merge');
  return define(sig('window_duration:duration'), async (inv) => {
    inv.warn(`histogram:${family} is deprecated; use ${family}:merge`);
    return modern.run(inv);
  });
}

export const WINDOWS: Record<string, CaqlFunction> = lookupTable({
  'histogram:window': deprecatedMerge('window'),
  'histogram:rolling': deprecatedMerge('rolling'),
});
for (const family of ['window', 'rolling'] as const) {
  for (const name of Object.keys(REDUCERS)) WINDOWS[`${family}:${name}`] = windowFunction(family, name);
}
for (const name of ['count', 'histogram', 'max', 'mean', 'min', 'sum']) WINDOWS[`aggregate:${name}`] = aggregateFunction(name);
