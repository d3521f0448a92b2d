// Arithmetic over streams (spec/caql.md §5): `op:*` (NULL in, NULL out; operators parse to
// these), `each:*` (a constant applied to every stream), `stats:*` (many streams into one
// per slot, NULLs ignored), and per-stream time functions: counter, delay, integrate, fill.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { constant, numeric, widen, type NumericStream, type Stream } from '../stream.js';
import { finite, requireNumeric, withValues, type CaqlFunction } from './types.js';
import { maxOf, minOf } from '../../model/extremes.js';
import { lookupTable } from '../../model/lookup-table.js';

type Binary = (a: number, b: number) => number;

const OPS: Record<string, { combine: Binary; unary?: (a: number) => number }> = lookupTable({
  sum: { combine: (a, b) => a + b },
  sub: { combine: (a, b) => a - b },
  prod: { combine: (a, b) => a * b },
  div: { combine: (a, b) => a / b },
  div2: { combine: (a, b) => a / b },
  mod: { combine: (a, b) => a % b },
  exp: { combine: (a, b) => a ** b },
  eq: { combine: (a, b) => Number(a === b) },
  neq: { combine: (a, b) => Number(a !== b) },
  geq: { combine: (a, b) => Number(a >= b) },
  gt: { combine: (a, b) => Number(a > b) },
  leq: { combine: (a, b) => Number(a <= b) },
  lt: { combine: (a, b) => Number(a < b) },
  and: { combine: (a, b) => Number(a !== 0 && b !== 0) },
  or: { combine: (a, b) => Number(a !== 0 || b !== 0) },
});

/**
 * `op:<name>`: with an `x` argument it replaces the second input. Sources pair up slot by
 * slot, stream by stream; a source of one stream is broadcast against one of many. A single
 * source of many streams (and no x) is folded into one stream.
 */
function op(name: string, combine: Binary): CaqlFunction {
  return async (inv) => {
    const groups = (await inv.sourceGroups()).map((g) => g.map((s) => requireNumeric(inv.name, s)));
    if (inv.args.length > 0) groups.push([constant(inv.number(0), inv.grid)]);
    if (groups.length === 0) throw new CaqlUserError(`${inv.name}: needs inputs`);
    if (groups.length === 1) {
      const only = groups[0]!;
      if (only.length === 0) return [];
      return [withValues(only[0]!, slots(inv, (i) => fold(only.map((s) => s.values[i] ?? null), combine)))];
    }
    if (name === 'div2' && groups.length !== 2) throw new CaqlUserError('op:div2 (/) takes exactly two inputs');
    const width = Math.max(...groups.map((g) => g.length));
    if (groups.some((g) => g.length !== 1 && g.length !== width)) {
      throw new CaqlUserError(`${inv.name}: inputs of ${groups.map((g) => g.length).join(' and ')} streams cannot be paired`);
    }
    return Array.from({ length: width }, (_, k) => {
      const row = groups.map((g) => g[g.length === 1 ? 0 : k]!);
      const head = row.find((s) => !/^-?[0-9.e+]+$|^NULL$/.test(s.label)) ?? row[0]!;
      return withValues(head, slots(inv, (i) => fold(row.map((s) => s.values[i] ?? null), combine)));
    });
  };
}

function fold(values: (number | null)[], combine: Binary): number | null {
  if (values.some((v) => v === null)) return null;
  return finite((values as number[]).reduce(combine));
}

function slots(inv: Invocation, at: (i: number) => number | null): (number | null)[] {
  return Array.from({ length: inv.grid.count }, (_, i) => at(i));
}

async function numericSources(inv: Invocation): Promise<NumericStream[]> {
  return (await inv.sources()).map((s) => requireNumeric(inv.name, s));
}

/** `each:<op>(x)`: every stream combined with the constant x. */
function each(combine: Binary): CaqlFunction {
  return async (inv) => {
    const x = inv.number(0);
    return (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => (v === null ? null : finite(combine(v, x))))));
  };
}

/** `stats:<name>([x])`: one stream from all inputs per slot, NULLs ignored (sum counts them 0). */
function stats(label: string, reduce: (present: number[]) => number | null): CaqlFunction {
  return async (inv) => {
    const inputs = await numericSources(inv);
    if (inv.args.length > 0) inputs.push(constant(inv.number(0), inv.grid));
    const values = slots(inv, (i) => {
      const present = inputs.map((s) => s.values[i] ?? null).filter((v): v is number => v !== null);
      return present.length === 0 ? null : reduce(present);
    });
    return [numeric({ label, tags: commonTags(inputs) }, values)];
  };
}

export function commonTags(streams: readonly Stream[]): string[] {
  if (streams.length === 0) return [];
  const rest = streams.slice(1).map((s) => new Set(s.tags));
  return streams[0]!.tags.filter((t) => rest.every((r) => r.has(t)));
}

/** `counter()`: per-second rate of a monotonic series; a decrease (a reset) gives no rate. */
const counter: CaqlFunction = async (inv) =>
  (await numericSources(inv)).map((s) => {
    let previous: number | null = null;
    const values = s.values.map((v) => {
      const rate = v === null || previous === null || v < previous ? null : (v - previous) / inv.grid.periodS;
      if (v !== null) previous = v;
      return rate;
    });
    return withValues(s, values);
  });

/** `delay(d…)`: each stream shifted later by each duration (one output per delay). */
const delay: CaqlFunction = async (inv) => {
  const delays = inv.args.length === 0 ? [0] : inv.args.map((_, k) => inv.duration(k));
  const out: Stream[] = [];
  for (const d of delays) {
    const slotsBack = Math.round(d / inv.grid.periodS);
    out.push(...(await inv.sources({ ...inv.grid, startS: inv.grid.startS - slotsBack * inv.grid.periodS })));
  }
  return out;
};

/** `integrate()`: running sum of per-minute values over the view (each slot adds value × period/60). */
const integrate: CaqlFunction = async (inv) =>
  (await numericSources(inv)).map((s) => {
    let total = inv.kwNumber('base', 0);
    return withValues(
      s,
      s.values.map((v) => {
        if (v !== null) total += (v * inv.grid.periodS) / 60;
        return total;
      }),
    );
  });

const fill: CaqlFunction = async (inv) => {
  const x = inv.number(0, 0);
  return (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => v ?? x)));
};

/** `fill:forward(limit=d)`: the last value carried forward, at most `limit` back (default the whole view). */
const fillForward: CaqlFunction = async (inv) => {
  const limitS = inv.kwDuration('limit');
  const lookback = limitS === null ? 0 : limitS;
  const { grid, offset } = widen(inv.grid, lookback);
  return (await inv.sources(grid)).map((raw) => {
    const s = requireNumeric(inv.name, raw);
    let last: { v: number; i: number } | null = null;
    const values = s.values.map((v, i) => {
      if (v !== null) last = { v, i };
      else if (last !== null && (limitS === null || (i - last.i) * grid.periodS <= limitS)) return last.v;
      return v;
    });
    return withValues(s, values.slice(offset));
  });
};

const pass: CaqlFunction = (inv) => inv.sources();

export const ARITH: Record<string, CaqlFunction> = lookupTable({
  pass,
  counter,
  delay,
  integrate,
  fill,
  'fill:forward': fillForward,
  'op:neg': async (inv) => (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => (v === null ? null : -v)))),
  'op:not': async (inv) => (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => (v === null ? null : Number(v === 0))))),
  'each:add': each((a, x) => a + x),
  'each:sub': each((a, x) => a - x),
  'each:mul': each((a, x) => a * x),
  'each:div': each((a, x) => a / x),
  'each:exp': each((a, x) => a ** x),
  'each:mod': each((a, x) => a % x),
  'stats:sum': stats('sum', (p) => p.reduce((a, b) => a + b, 0)),
  'stats:mean': stats('mean', (p) => p.reduce((a, b) => a + b, 0) / p.length),
  'stats:max': stats('max', (p) => maxOf(p)),
  'stats:min': stats('min', (p) => minOf(p)),
  'stats:count': stats('count', (p) => p.length),
});
for (const [name, { combine }] of Object.entries(OPS)) ARITH[`op:${name}`] = op(name, combine);
