// The vocabulary shared by Prometheus' protocols, the query API and the PromQL engine.
import type { Histogram } from '../histogram/index.js';
import { ownValue, setOwn } from '../lookup-table.js';

/** Labels as Prometheus has them: name → value, `__name__` included. */
export type Labels = Record<string, string>;

/**
 * A label's value, '' when absent. Own properties only: a label named `toString` or
 * `constructor` must not find Object.prototype's.
 */
export function labelValue(labels: Labels, name: string): string {
  return ownValue(labels, name) ?? '';
}

/** Sets a label as an own property (a label may be named `__proto__`). */
export function setLabel(labels: Labels, name: string, value: string): void {
  setOwn(labels, name, value);
}

export type MatcherType = '=' | '!=' | '=~' | '!~';

export interface LabelMatcher {
  type: MatcherType;
  name: string;
  value: string;
}

/** A sample value: a float, or one of ferrite's native (circllhist) histograms. */
export type PromValue = number | Histogram;

/**
 * Samples of one series in time order, parallel arrays; epoch ms. A `null` value is a gap
 * marker (a stored null or non-finite value, which is how Prometheus' staleness markers
 * come back): the series has no value from there until its next sample.
 */
export interface SampleSeries {
  ts: number[];
  values: (PromValue | null)[];
}

export interface SeriesData {
  labels: Labels;
  samples: SampleSeries;
}
