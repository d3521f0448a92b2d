// Global functions over time (reference "Global Functions", "Package integrate", "Package
// fill"): pass, count, is_missing, coalesce, if, delay, diff, counter, derivative, wait,
// normalize, randomwalk, integrate, integrate:while, fill, fill:forward.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { sig } from '../signature.js';
import { numeric, widen, type NumericStream, type Stream } from '../stream.js';
import { maxOf, minOf } from '../../model/extremes.js';
import { lookupTable } from '../../model/lookup-table.js';
import { pairRows, rowHead } from './op.js';
import { commonTags } from './stats.js';
import { define, numericSources, perSlot, requireNumeric, withValues, type CaqlFunction } from './types.js';
import { seededRandom } from './random.js';

const NONE = sig();

/** `pass()`: the sources unchanged; `pass{A, B}` concatenates them. */
const pass = define(NONE, (inv) => inv.sources());

/** `count()`: per slot, how many inputs have a value. */
const count = define(NONE, async (inv) => {
  const streams = await numericSources(inv);
  return [numeric({ label: 'count', tags: commonTags(streams) }, perSlot(inv, (i) => streams.filter((s) => s.values[i] !== null).length))];
});

/** `is_missing()`: 1 where a stream has no value, else 0. */
const isMissing = define(NONE, async (inv) => (await inv.sources()).map((s) => withValues(s, s.values.map((v) => (v === null ? 1 : 0)))));

/** `coalesce()`: per slot, the first input with a value. */
const coalesce = define(NONE, async (inv) => {
  const streams = await numericSources(inv);
  if (streams.length === 0) return [];
  return [withValues(streams[0]!, perSlot(inv, (i) => streams.find((s) => s.values[i] !== null)?.values[i] ?? null))];
});

/** `if{cond, then, else}`: per slot, `then` where cond is non-zero, `else` where it is 0, NULL where cond is. */
const ifElse = define(NONE, async (inv) => {
  const groups = (await inv.sourceGroups()).map((g) => g.map((s) => requireNumeric(inv.name, s)));
  if (groups.length !== 3) throw new CaqlUserError(`if: takes three sources, if{cond, then, else}; got ${groups.length}`);
  return pairRows(inv.name, groups).map(([c, a, b]) => withValues(rowHead([a!, b!, c!]), perSlot(inv, (i) => (c!.values[i] === null ? null : c!.values[i] !== 0 ? (a!.values[i] ?? null) : (b!.values[i] ?? null)))));
});

/** `delay(d…)`: each stream shifted later by each duration (one output per delay). */
const delay = define(sig('...t:duration?'), async (inv) => {
  const delays = inv.nums('t');
  const out: Stream[] = [];
  for (const d of delays.length === 0 ? [0] : delays) {
    const slotsBack = Math.round(d / inv.grid.periodS);
    out.push(...(await inv.sources({ ...inv.grid, startS: inv.grid.startS - slotsBack * inv.grid.periodS })));
  }
  return out;
});

/** The numeric sources on the grid one slot wider at the start, so slot 0 has a predecessor. */
async function withPrevious(inv: Invocation): Promise<NumericStream[]> {
  const { grid } = widen(inv.grid, inv.grid.periodS);
  return numericSources(inv, grid);
}

/** `diff()`: each value minus the one in the slot before (NULL if either is missing). */
const diff = define(NONE, async (inv) =>
  (await withPrevious(inv)).map((s) => withValues(s, s.values.slice(1).map((v, i) => (v === null || s.values[i] === null ? null : v - s.values[i]!)))),
);

/** `derivative()`: `diff()` per second. */
const derivative = define(NONE, async (inv) =>
  (await withPrevious(inv)).map((s) => withValues(s, s.values.slice(1).map((v, i) => (v === null || s.values[i] === null ? null : (v - s.values[i]!) / inv.grid.periodS)))),
);

/** `counter()`: per-second rate of a monotonic series against the previous value present; a decrease (a reset) gives no rate. */
const counter = define(NONE, async (inv) =>
  (await numericSources(inv)).map((s) => {
    let previous: number | null = null;
    const values = s.values.map((v) => {
      const rate = v === null || previous === null || v < previous ? null : (v - previous) / inv.grid.periodS;
      if (v !== null) previous = v;
      return rate;
    });
    return withValues(s, values);
  }),
);

/** `wait(t)`: 1 where the stream has been non-zero in every slot of the last t (this slot included), else 0; NULL where it is NULL. */
const wait = define(sig('t:duration'), async (inv) => {
  const slots = Math.max(1, Math.round(inv.num('t') / inv.grid.periodS));
  const { grid, offset } = widen(inv.grid, (slots - 1) * inv.grid.periodS);
  return (await numericSources(inv, grid)).map((s) => {
    let run = 0;
    const values = s.values.map((v) => {
      run = v !== null && v !== 0 ? run + 1 : 0;
      return v === null ? null : Number(run >= slots);
    });
    return withValues(s, values.slice(offset));
  });
});

/** `normalize(scale=1, default=0.5)`: (v − min)/(max − min) × scale over the view; `default` where a value is missing or the stream is flat. */
const normalize = define(sig('scale:number=1, default:number=0.5'), async (inv) => {
  const [scale, fallback] = [inv.num('scale'), inv.num('default')];
  return (await numericSources(inv)).map((s) => {
    const v = s.values.filter((x): x is number => x !== null);
    const [lo, hi] = [minOf(v), maxOf(v)];
    return withValues(s, s.values.map((x) => (x === null || !(hi > lo) ? fallback : ((x - lo) / (hi - lo)) * scale)));
  });
});

/**
 * `randomwalk(max=100, min=0, change=(max−min)/20, seed=-1)`: a synthetic stream starting
 * midway, each slot moving by a uniform step in [−change, change], kept within [min, max].
 * A seed ≥ 0 gives the same walk every time; -1 a new one.
 */
const randomwalk = define(sig('max:number=100, min:number=0, change:number?', 'seed:number=-1'), async (inv) => {
  const [max, min] = [inv.num('max'), inv.num('min')];
  if (!(max >= min)) throw new CaqlUserError(`${inv.name}: max ${max} is below min ${min}`);
  const change = inv.optNum('change') ?? (max - min) / 20;
  const random = seededRandom(inv.num('seed'));
  let v = (max + min) / 2;
  return [numeric({ label: 'randomwalk' }, perSlot(inv, () => (v = Math.min(max, Math.max(min, v + (random() * 2 - 1) * change)))))];
});

/** Each slot adds value × period/60: the integral of per-minute values (spec/caql.md §5). */
const perMinute = (inv: Invocation, v: number) => (v * inv.grid.periodS) / 60;

/** `integrate()`: running sum over the view, from `base` (0). */
const integrate = define(sig('', 'base:number=0'), async (inv) =>
  (await numericSources(inv)).map((s) => {
    let total = inv.num('base');
    return withValues(s, s.values.map((v) => (total += v === null ? 0 : perMinute(inv, v))));
  }),
);

const HOLDS: Record<string, (now: number, before: number) => boolean> = lookupTable({
  constant: (now, before) => now === before,
  rising: (now, before) => now > before,
  falling: (now, before) => now < before,
});

/**
 * `integrate:while{cond, streams…}(condition="constant")`: integrates each stream while the
 * first source's value keeps the condition against its previous value; where it does not (a
 * new month from time:tz, say), the sum restarts from that slot's value.
 */
const integrateWhile = define(sig('condition:string=constant'), async (inv) => {
  const holds = HOLDS[inv.str('condition')];
  if (holds === undefined) throw new CaqlUserError(`${inv.name}: condition must be constant, rising or falling, not '${inv.str('condition')}'`);
  const [cond, ...streams] = await numericSources(inv);
  if (cond === undefined) throw new CaqlUserError(`${inv.name}: needs a condition source and streams to integrate`);
  const restart = perSlot(inv, (i) => {
    const [now, before] = [cond.values[i] ?? null, i === 0 ? null : (cond.values[i - 1] ?? null)];
    return i === 0 || (now !== null && before !== null && !holds(now, before));
  });
  return streams.map((s) => {
    let total = 0;
    return withValues(s, s.values.map((v, i) => (total = (restart[i] ? 0 : total) + (v === null ? 0 : perMinute(inv, v)))));
  });
});

/** `fill(value)`: NULLs replaced by a constant. */
const fill = define(sig('value:number'), async (inv) => (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => v ?? inv.num('value')))));

/** `fill:forward(limit=d)`: the last value carried forward, at most `limit` back (default: within the view). */
const fillForward = define(sig('', 'limit:duration?'), async (inv) => {
  const limitS = inv.optNum('limit');
  const { grid, offset } = widen(inv.grid, limitS ?? 0);
  return (await numericSources(inv, grid)).map((s) => {
    let last: { v: number; i: number } | null = null;
    const values = s.values.map((v, i) => {
      if (v !== null) last = { v, i };
      else if (last !== null && (limitS === undefined || (i - last.i) * grid.periodS <= limitS)) return last.v;
      return v;
    });
    return withValues(s, values.slice(offset));
  });
});

export const SERIES: Record<string, CaqlFunction> = lookupTable({
  pass,
  count,
  is_missing: isMissing,
  coalesce,
  if: ifElse,
  delay,
  diff,
  derivative,
  counter,
  wait,
  normalize,
  randomwalk,
  integrate,
  'integrate:while': integrateWhile,
  fill,
  'fill:forward': fillForward,
});
