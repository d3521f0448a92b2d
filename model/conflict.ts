// Which value is stored when two numeric samples share (timestamp ms, uuid, name)
// (interface §2.8, irondb-reference §5.5). Every resolver is commutative and
// deterministic, so replicas and journal replays agree without coordination.
// The `last_*` resolvers first let the higher generation (MetricList `generation`, set
// by relays that re-aggregate) win, and fall back to the plain resolver between equals.
import type { Sample } from './series.js';
import type { NumericValue } from './types.js';

const PLAIN_RESOLVERS = ['abs_biggest', 'abs_smallest', 'biggest', 'smallest'] as const;
type PlainResolverName = (typeof PLAIN_RESOLVERS)[number];
export const CONFLICT_RESOLVERS = [...PLAIN_RESOLVERS, ...PLAIN_RESOLVERS.map((n) => `last_${n}` as const)] as const;
export type ConflictResolverName = (typeof CONFLICT_RESOLVERS)[number];

export type ConflictResolver = (a: NumericValue, b: NumericValue) => NumericValue;
/** Picks the sample kept at one point from two that collide there. */
export type SampleCombiner = (kept: Sample<NumericValue>, incoming: Sample<NumericValue>) => Sample<NumericValue>;

/** The value-only resolver behind a name (`last_x` compares values like `x`). */
export function conflictResolver(name: ConflictResolverName): ConflictResolver {
  switch (plainName(name)) {
    case 'abs_biggest':
      return pick((a, b) => compareAbs(a, b) > 0);
    case 'abs_smallest':
      return pick((a, b) => compareAbs(a, b) < 0);
    case 'biggest':
      return pick((a, b) => a > b);
    case 'smallest':
      return pick((a, b) => a < b);
  }
}

/**
 * How stored samples combine under the configured resolver. The kept generation is the
 * higher of the two either way, so a sample a relay re-sent stays marked as such.
 */
export function sampleCombiner(name: ConflictResolverName): SampleCombiner {
  const resolve = conflictResolver(name);
  const byGeneration = name.startsWith('last_');
  return (kept, incoming) => {
    if (byGeneration && kept.gen !== incoming.gen) return kept.gen > incoming.gen ? kept : incoming;
    return { value: resolve(kept.value, incoming.value), gen: Math.max(kept.gen, incoming.gen) };
  };
}

const plainName = (name: ConflictResolverName): PlainResolverName => (name.startsWith('last_') ? name.slice(5) : name) as PlainResolverName;

type Defined = number | bigint;

/**
 * A value beats null, a number beats NaN; otherwise `wins(a, b)` decides, and an exact
 * tie of the measure (5 and -5 under abs_*) goes to the larger value so the choice
 * never depends on arrival order.
 */
function pick(wins: (a: Defined, b: Defined) => boolean): ConflictResolver {
  return (a, b) => {
    if (a === null || isNaNValue(a)) return b === null ? a : b;
    if (b === null || isNaNValue(b)) return a;
    if (wins(a, b)) return a;
    if (wins(b, a)) return b;
    return a >= b ? a : b;
  };
}

function isNaNValue(v: Defined): boolean {
  return typeof v === 'number' && Number.isNaN(v);
}

function compareAbs(a: Defined, b: Defined): number {
  const x = abs(a);
  const y = abs(b);
  return x > y ? 1 : x < y ? -1 : 0;
}

function abs(v: Defined): Defined {
  return typeof v === 'bigint' ? (v < 0n ? -v : v) : Math.abs(v);
}
