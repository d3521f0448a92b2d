import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import type { HistogramStream, NumericStream, Stream } from '../stream.js';

export type CaqlFunction = (inv: Invocation) => Promise<Stream[]>;

export function requireNumeric(fn: string, s: Stream): NumericStream {
  if (s.kind !== 'numeric') throw new CaqlUserError(`${fn}: expects numeric streams, got a histogram stream (${s.label})`);
  return s;
}

export function requireHistogram(fn: string, s: Stream): HistogramStream {
  if (s.kind !== 'histogram') throw new CaqlUserError(`${fn}: expects histogram streams, got a numeric stream (${s.label})`);
  return s;
}

/** The same stream (label, tags) with new numeric values. */
export function withValues(s: Stream, values: (number | null)[]): NumericStream {
  return { label: s.label, tags: s.tags, name: s.name, canonical: s.canonical, kind: 'numeric', values };
}

/** A numeric value, or null for missing and non-finite results. */
export function finite(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}
