// What CAQL computes with: streams on a slot grid (spec/caql.md §2). A stream has one value
// per period slot: a number, a histogram, or null. Streams are DF4 columns plus the name
// parts `label()` formats need.
import type { Histogram } from '../model/histogram/index.js';
import { CaqlUserError } from './errors.js';

export interface Grid {
  /** Epoch seconds of slot 0, a multiple of the period. */
  startS: number;
  periodS: number;
  count: number;
}

interface StreamHead {
  label: string;
  /** `cat:value` tags, `__check_uuid` and `__name` included for fetched streams. */
  tags: string[];
  /** The metric name without tags and with them (for `%n` and `%cn`); the label otherwise. */
  name: string;
  canonical: string;
  /** The stream's index in a vector (`vector:pack`): binary operators pair vectors by key. */
  key?: string;
}

export type NumericStream = StreamHead & { kind: 'numeric'; values: (number | null)[] };
export type HistogramStream = StreamHead & { kind: 'histogram'; values: (Histogram | null)[] };
export type Stream = NumericStream | HistogramStream;

/** A metric found by tag search. */
export interface FoundMetric {
  uuid: string;
  /** Canonical name. */
  name: string;
  types: string[];
}

export interface FetchStream {
  uuid: string;
  name: string;
  kind: 'numeric' | 'histogram';
  /** A `/fetch` transform: average, count, counter, … or none for histograms. */
  transform: string;
}

/** Where CAQL gets data: the node's tag search and fetch engine (actors/coordinators/sources/caql.ts). */
export interface DataSource {
  find(query: string, limit: number, grid: Grid): Promise<{ metrics: FoundMetric[]; truncated: boolean }>;
  fetch(grid: Grid, streams: FetchStream[]): Promise<Stream[]>;
}

export function numeric(head: Pick<StreamHead, 'label'> & Partial<StreamHead>, values: (number | null)[]): NumericStream {
  return { tags: [], name: head.label, canonical: head.label, ...head, kind: 'numeric', values };
}

/** A constant stream (a number used as a source). */
export function constant(value: number | null, grid: Grid): NumericStream {
  return numeric({ label: value === null ? 'NULL' : String(value) }, new Array(grid.count).fill(value));
}

/** Most slots any grid may hold, the view's and the wider ones windows read (a window of years at 1 s is a mistake). */
export const MAX_GRID_SLOTS = 1_000_000;

/** The grid starting at least `backS` earlier (whole slots), ending where `grid` ends; `offset` is the added slots. */
export function widen(grid: Grid, backS: number): { grid: Grid; offset: number } {
  const offset = Math.ceil(backS / grid.periodS);
  if (!(grid.count + offset <= MAX_GRID_SLOTS)) {
    throw new CaqlUserError(`a window of ${backS} s at period ${grid.periodS} s needs ${grid.count + offset} periods; at most ${MAX_GRID_SLOTS}`);
  }
  return { grid: { ...grid, startS: grid.startS - offset * grid.periodS, count: grid.count + offset }, offset };
}

/** The grid of `periodS` covering [fromS, toS). */
export function gridCovering(fn: string, fromS: number, toS: number, periodS: number): Grid {
  const startS = Math.floor(fromS / periodS) * periodS;
  const count = Math.max(1, Math.ceil((toS - startS) / periodS));
  if (!(count <= MAX_GRID_SLOTS)) throw new CaqlUserError(`${fn}: needs ${count} periods of ${periodS} s; at most ${MAX_GRID_SLOTS}`);
  return { startS, periodS, count };
}
