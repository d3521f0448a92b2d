// `stats:*` (reference "Package stats"): many input streams combined per slot, NULLs ignored
// unless stated. A slot where no input has a value stays NULL (counts are 0). An optional `x`
// joins the inputs as one more constant stream.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { formatLabel } from './label-format.js';
import { sig, type Signature } from '../signature.js';
import { constant, numeric, type NumericStream, type Stream } from '../stream.js';
import { AGGREGATES, present, quantile, sampleVar, sum } from './numbers.js';
import { define, finite, numericSources, perSlot, withValues, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

export function commonTags(streams: readonly Stream[]): string[] {
  if (streams.length === 0) return [];
  const rest = streams.slice(1).map((s) => new Set(s.tags));
  return streams[0]!.tags.filter((t) => rest.every((r) => r.has(t)));
}

async function inputs(inv: Invocation): Promise<NumericStream[]> {
  const streams = await numericSources(inv);
  if (inv.given('x')) streams.push(constant(inv.num('x'), inv.grid));
  return streams;
}

const WITH_X = sig('x:number?');

/** One stream from the values present in each slot (`reduce` decides what no values give). */
function combine(label: string, reduce: (values: number[]) => number | null, signature: Signature = WITH_X): CaqlFunction {
  return define(signature, async (inv) => {
    const streams = await inputs(inv);
    const values = perSlot(inv, (i) => {
      return reduce(present(streams.map((s) => s.values[i] ?? null)));
    });
    return [numeric({ label, tags: commonTags(streams) }, values.map((v) => (v === null ? null : finite(v))))];
  });
}

/**
 * `stats:sub` and `stats:div`: the first stream minus the sum (over the product) of the rest;
 * a missing value counts as 0 (as 1 for div), so only a slot with no value at all is NULL.
 */
function firstAgainstRest(label: string, neutral: number, apply: (first: number, rest: number[]) => number): CaqlFunction {
  return define(WITH_X, async (inv) => {
    const streams = await inputs(inv);
    const values = perSlot(inv, (i) => {
      const row = streams.map((s) => s.values[i] ?? null);
      if (row.every((v) => v === null)) return null;
      const [first, ...rest] = row.map((v) => v ?? neutral);
      return finite(apply(first!, rest));
    });
    return [numeric({ label, tags: commonTags(streams) }, values)];
  });
}

/** `stats:percentile(p…)`: one stream per percentile of the values present in each slot. */
const percentile = define(sig('...p:number'), async (inv) => {
  const ps = inv.nums('p');
  for (const p of ps) if (!(p >= 0 && p <= 100)) throw new CaqlUserError(`${inv.name}: ${p} is not between 0 and 100`);
  const streams = await numericSources(inv);
  const tags = commonTags(streams);
  return ps.map((p) =>
    numeric(
      { label: `p${p}`, tags },
      perSlot(inv, (i) => {
        const v = present(streams.map((s) => s.values[i] ?? null));
        return v.length === 0 ? null : quantile(v, p / 100);
      }),
    ),
  );
});

/** `stats:ratio(partition_fmt=, partition=, of=1)`: each stream's share of its partition's total (× of). */
const ratio = define(sig('', 'partition_fmt:string?, partition:string?, of:number=1'), async (inv) => {
  const streams = await numericSources(inv);
  const fmt = inv.optStr('partition_fmt');
  const cat = inv.optStr('partition');
  const partOf = (s: Stream, i: number) => (fmt !== undefined ? formatLabel(fmt, s, i, streams) : cat !== undefined ? (s.tags.find((t) => t.startsWith(`${cat}:`)) ?? '') : '');
  const parts = streams.map((s, i) => partOf(s, i));
  const totals = new Map<string, number[]>();
  for (const part of new Set(parts)) {
    const members = streams.filter((_, j) => parts[j] === part);
    totals.set(part, perSlot(inv, (i) => sum(present(members.map((m) => m.values[i] ?? null)))));
  }
  const of = inv.num('of');
  return streams.map((s, k) => withValues(s, s.values.map((v, i) => (v === null ? null : finite((v / totals.get(parts[k]!)![i]!) * of)))));
});

/** `stats:clamp(min, max)`: every value bounded (either bound may be NULL or left out). */
const clamp = define(sig('min:literal?, max:literal?'), async (inv) => {
  const bound = (name: string): number | null => {
    const l = inv.lit(name);
    if (l === undefined || l.type === 'null') return null;
    if (l.type === 'number') return l.value;
    throw new CaqlUserError(`${inv.name}: argument '${name}' must be a number or NULL`);
  };
  const [lo, hi] = [bound('min'), bound('max')];
  if (lo !== null && hi !== null && lo > hi) throw new CaqlUserError(`${inv.name}: min ${lo} is above max ${hi}`);
  return (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => (v === null ? null : Math.min(hi ?? Infinity, Math.max(lo ?? -Infinity, v))))));
});

/** `stats:trim(n)`: in each slot the n lowest and n highest values become NULL; the streams stay. */
const trim = define(sig('n:number'), async (inv) => {
  const n = inv.num('n');
  if (!Number.isInteger(n) || n < 0) throw new CaqlUserError(`${inv.name}: n must be a whole number ≥ 0`);
  const streams = await numericSources(inv);
  const kept = streams.map((s) => [...s.values]);
  for (let i = 0; i < inv.grid.count; i++) {
    const order = streams.map((s, k) => ({ k, v: s.values[i] ?? null })).filter((x): x is { k: number; v: number } => x.v !== null);
    order.sort((a, b) => a.v - b.v || a.k - b.k);
    for (const { k } of [...order.slice(0, n), ...order.slice(Math.max(n, order.length - n))]) kept[k]![i] = null;
  }
  return streams.map((s, k) => withValues(s, kept[k]!));
});

/** `stats:select(n)`: the n-th input stream (0-based, as `%d` counts); none when there are fewer. */
const select = define(sig('n:number'), async (inv) => {
  const n = inv.num('n');
  if (!Number.isInteger(n) || n < 0) throw new CaqlUserError(`${inv.name}: n must be a whole number ≥ 0`);
  const streams = await inv.sources();
  return n < streams.length ? [streams[n]!] : [];
});

/** `stats:absent()`: 1 where no input has a value, else NULL (PromQL's absent). */
const absent = define(sig(), async (inv) => {
  const streams = await numericSources(inv);
  return [numeric({ label: 'absent', tags: commonTags(streams) }, perSlot(inv, (i) => (streams.every((s) => s.values[i] === null) ? 1 : null)))];
});

const NONE = sig();

export const STATS: Record<string, CaqlFunction> = lookupTable({
  'stats:sum': combine('sum', AGGREGATES.sum!),
  'stats:mean': combine('mean', AGGREGATES.mean!),
  'stats:max': combine('max', AGGREGATES.max!),
  'stats:min': combine('min', AGGREGATES.min!),
  'stats:prod': firstAgainstRest('prod', 1, (first, rest) => rest.reduce((a, b) => a * b, first)),
  'stats:sub': firstAgainstRest('sub', 0, (first, rest) => first - sum(rest)),
  'stats:div': firstAgainstRest('div', 1, (first, rest) => first / rest.reduce((a, b) => a * b, 1)),
  'stats:count': combine('count', AGGREGATES.count!, NONE),
  'stats:stddev': combine('stddev', AGGREGATES.stddev!, NONE),
  'stats:popvar': combine('popvar', AGGREGATES.popvar!, NONE),
  'stats:var': combine('var', (v) => finite(sampleVar(v)), NONE),
  'stats:alwaysone': combine('alwaysone', (v) => (v.length === 0 ? null : 1), NONE),
  'stats:percentile': percentile,
  'stats:ratio': ratio,
  'stats:clamp': clamp,
  'stats:trim': trim,
  'stats:select': select,
  'stats:absent': absent,
});
