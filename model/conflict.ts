// Which value is stored when two numeric samples share (timestamp ms, uuid, name)
// (interface §2.8, irondb-reference §5.5). Every resolver is commutative and
// deterministic, so replicas and journal replays agree without coordination.
import type { NumericValue } from './types.js';

export const CONFLICT_RESOLVERS = ['abs_biggest', 'abs_smallest', 'biggest', 'smallest'] as const;
export type ConflictResolverName = (typeof CONFLICT_RESOLVERS)[number];

export type ConflictResolver = (a: NumericValue, b: NumericValue) => NumericValue;

export function conflictResolver(name: ConflictResolverName): ConflictResolver {
  switch (name) {
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
