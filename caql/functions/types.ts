// What a CAQL function is (its signature and its body) and the helpers most bodies share.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import type { Signature } from '../signature.js';
import type { Grid, HistogramStream, NumericStream, Stream } from '../stream.js';

export interface CaqlFunction {
  sig: Signature;
  run: (inv: Invocation) => Promise<Stream[]>;
}

export function define(sig: Signature, run: CaqlFunction['run']): CaqlFunction {
  return { sig, run };
}

export function requireNumeric(fn: string, s: Stream): NumericStream {
  if (s.kind !== 'numeric') throw new CaqlUserError(`${fn}: expects numeric streams, got a histogram stream (${s.label})`);
  return s;
}

export function requireHistogram(fn: string, s: Stream): HistogramStream {
  if (s.kind !== 'histogram') throw new CaqlUserError(`${fn}: expects histogram streams, got a numeric stream (${s.label})`);
  return s;
}

/** The same stream (label, tags, vector key) with new numeric values. */
export function withValues(s: Stream, values: (number | null)[]): NumericStream {
  const out: NumericStream = { label: s.label, tags: s.tags, name: s.name, canonical: s.canonical, kind: 'numeric', values };
  if (s.key !== undefined) out.key = s.key;
  return out;
}

/** A numeric value, or null for missing and non-finite results. */
export function finite(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

/** The numeric sources of a call. */
export async function numericSources(inv: Invocation, grid?: Grid): Promise<NumericStream[]> {
  return (await inv.sources(grid)).map((s) => requireNumeric(inv.name, s));
}

/** One value per slot of the call's grid; the deadline is checked as it goes (a slot may cost a sort over thousands of streams). */
export function perSlot<T>(inv: Invocation, at: (i: number) => T): T[] {
  return Array.from({ length: inv.grid.count }, (_, i) => {
    if ((i & 1023) === 0) inv.checkDeadline();
    return at(i);
  });
}

/** A function of each present value of each numeric stream (NULL stays NULL; a non-finite result becomes NULL); `check` vets the arguments first. */
export function valuewise(signature: Signature, f: (v: number, inv: Invocation) => number, check?: (inv: Invocation) => void): CaqlFunction {
  return define(signature, async (inv) => {
    check?.(inv);
    return (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => (v === null ? null : finite(f(v, inv))))));
  });
}
