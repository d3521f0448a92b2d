// Text fetch transforms (interface §4.3). Every transform but `none` counts entries per
// slot, so a slot without entries is 0, not null. Cumulative forms start at zero at the
// first requested slot, and the window's first entry is never a transition.
import { lookupTable } from '../lookup-table.js';

/** A text sample: epoch ms and its value. */
export type TextEntry = [number, string];

/** The entries of each slot, in time order. */
export type TextSlots = TextEntry[][];

interface SlotCounts {
  count: number[];
  distinct: number[];
  distinctCumulative: number[];
  transitions: number[];
}

function slotCounts(slots: TextSlots): SlotCounts {
  const seen = new Set<string>();
  let previous: string | undefined;
  const out: SlotCounts = { count: [], distinct: [], distinctCumulative: [], transitions: [] };
  for (const slot of slots) {
    let transitions = 0;
    for (const [, value] of slot) {
      if (previous !== undefined && value !== previous) transitions++;
      previous = value;
      seen.add(value);
    }
    out.count.push(slot.length);
    out.distinct.push(new Set(slot.map(([, v]) => v)).size);
    out.distinctCumulative.push(seen.size);
    out.transitions.push(transitions);
  }
  return out;
}

const cumulative = (xs: number[]): number[] => {
  let sum = 0;
  return xs.map((x) => (sum += x));
};
const perSecond = (xs: number[], periodS: number): number[] => xs.map((x) => x / periodS);
const increments = (xs: number[]): number[] => xs.map((x, i) => x - (i === 0 ? 0 : xs[i - 1]!));

export const TEXT_TRANSFORMS: Record<string, ((c: SlotCounts, periodS: number) => number[]) | null> = lookupTable({
  none: null,
  count: (c) => c.count,
  count_cumulative: (c) => cumulative(c.count),
  count_distinct: (c) => c.distinct,
  count_distinct_cumulative: (c) => c.distinctCumulative,
  count_transition: (c) => c.transitions,
  count_transition_cumulative: (c) => cumulative(c.transitions),
  rate: (c, p) => perSecond(c.count, p),
  rate_distinct: (c, p) => perSecond(c.distinct, p),
  rate_distinct_cumulative: (c, p) => perSecond(increments(c.distinctCumulative), p),
  rate_transition: (c, p) => perSecond(c.transitions, p),
});

/** The numeric column of a counting transform over the slots. */
export function textCounts(name: string, slots: TextSlots, periodS: number): number[] {
  return TEXT_TRANSFORMS[name]!(slotCounts(slots), periodS);
}
