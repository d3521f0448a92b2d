// Fetch reducers (interface §4.3), applied in order to the transformed columns. Each
// declares the column kinds it takes and produces, so a request is checked before any read.
import { Histogram } from '../histogram/index.js';
import { commonTags, type Column, type HistogramColumn, type NumericColumn } from './column.js';
import { FetchRequestError } from './errors.js';
import type { StreamKind } from './transforms.js';
import { lookupTable } from '../lookup-table.js';

export type ReduceMethod = 'pass' | 'mean' | 'sum' | 'merge' | 'groupby_mean' | 'groupby_sum' | 'groupby_merge' | 'topk';

export interface ReduceSpec {
  label: string;
  method: ReduceMethod;
  params: string[];
}

interface Reducer {
  accepts: readonly StreamKind[];
  output(kinds: StreamKind[]): StreamKind[];
  check(params: string[], field: string): void;
  apply(columns: Column[], spec: ReduceSpec, count: number): Column[];
}

const NUMERIC: readonly StreamKind[] = ['numeric'];
const NUMERIC_OR_HISTOGRAM: readonly StreamKind[] = ['numeric', 'histogram'];

const noParams = (params: string[], field: string): void => {
  if (params.length > 0) throw new FetchRequestError(field, 'this method takes no parameters');
};
const categories = (params: string[], field: string): void => {
  if (params.length === 0) throw new FetchRequestError(field, 'name at least one tag category to group by');
  params.forEach((p, i) => {
    if (p === '') throw new FetchRequestError(`${field}[${i}]`, 'a tag category cannot be empty');
  });
};

/** One or more columns, all of `kind` (kind checks only need the set of kinds). */
const one = (kind: StreamKind) => (): StreamKind[] => [kind];
/** The label of a reduced stream: the reduce's label, else its method. */
export const nameOf = (spec: ReduceSpec): string => (spec.label === '' ? spec.method : spec.label);

export const REDUCE_METHODS: Record<string, Reducer> = lookupTable({
  pass: { accepts: ['numeric', 'histogram', 'text'], output: (k) => k, check: noParams, apply: (c) => c },
  mean: { accepts: NUMERIC, output: one('numeric'), check: noParams, apply: (c, s, n) => [foldCells(nameOf(s), 'mean', numericCells(c), n)] },
  sum: { accepts: NUMERIC, output: one('numeric'), check: noParams, apply: (c, s, n) => [foldCells(nameOf(s), 'sum', numericCells(c), n)] },
  merge: { accepts: NUMERIC_OR_HISTOGRAM, output: one('histogram'), check: noParams, apply: (c, s, n) => [histogram(nameOf(s), c, mergeAcross(c, n))] },
  groupby_mean: { accepts: NUMERIC, output: one('numeric'), check: categories, apply: (c, s, n) => groupBy(c, s).map(([label, g]) => foldCells(label, 'mean', numericCells(g), n)) },
  groupby_sum: { accepts: NUMERIC, output: one('numeric'), check: categories, apply: (c, s, n) => groupBy(c, s).map(([label, g]) => foldCells(label, 'sum', numericCells(g), n)) },
  groupby_merge: { accepts: NUMERIC_OR_HISTOGRAM, output: one('histogram'), check: categories, apply: (c, s, n) => groupBy(c, s).map(([label, g]) => histogram(label, g, mergeAcross(g, n))) },
  topk: { accepts: NUMERIC_OR_HISTOGRAM, output: (k) => k, check: (p, f) => void topkParams(p, f), apply: (c, s) => topk(c, topkParams(s.params, 'method_params')) },
});

export function applyReducers(columns: Column[], steps: readonly ReduceSpec[], count: number): Column[] {
  return steps.reduce((cols, step) => REDUCE_METHODS[step.method]!.apply(cols, step, count), columns);
}

const histogram = (label: string, inputs: Column[], values: (Histogram | null)[]): HistogramColumn => ({ kind: 'histogram', label, tags: commonTags(inputs), values });

/** A numeric stream before any reducer: its tags and one cell per slot (null or NaN: no value). */
export interface StreamCells {
  tags: string[];
  cells: ArrayLike<number | null>;
}

const numericCells = (cols: Column[]): StreamCells[] => (cols as NumericColumn[]).map((c) => ({ tags: c.tags, cells: c.values }));

/**
 * A `sum` or `mean` reduce of numeric streams (the fetch engine folds streams it read as
 * Float64Arrays this way too). Slot gaps are skipped; a slot where no input has a value is
 * null; with no inputs at all a sum is zeros.
 */
export function foldCells(label: string, how: 'sum' | 'mean', inputs: readonly StreamCells[], count: number): NumericColumn {
  const sums = new CellSums(1, count);
  // Stream by stream, as the cells lie in memory; always in stream order, so sums are repeatable.
  for (const { cells } of inputs) sums.add(0, cells);
  return sums.column(0, label, how, commonTags(inputs), inputs.length);
}

/**
 * Per-slot sums and counts of the values of numeric streams, in groups (group g's slot i at
 * g · count + i): what a sum, mean or groupby reduce needs of its inputs, so shards can fold
 * the streams they read and the node add up their partial sums.
 */
export class CellSums {
  readonly sum: Float64Array;
  readonly n: Uint32Array;

  constructor(
    readonly groups: number,
    readonly count: number,
  ) {
    this.sum = new Float64Array(groups * count);
    this.n = new Uint32Array(groups * count);
  }

  /** Adds one stream's cells (null or NaN: no value) to a group. */
  add(group: number, cells: ArrayLike<number | null>): void {
    const at = group * this.count;
    for (let i = 0; i < this.count; i++) {
      const v = cells[i];
      if (v === null || v === undefined || Number.isNaN(v)) continue;
      this.sum[at + i] += v;
      this.n[at + i]!++;
    }
  }

  /** Adds partial sums of the same groups and slots (another shard's). */
  merge(other: { sum: ArrayLike<number>; n: ArrayLike<number> }): void {
    for (let i = 0; i < this.sum.length; i++) {
      this.sum[i] += other.sum[i]!;
      this.n[i]! += other.n[i]!;
    }
  }

  /** One group's reduced column; `inputs` is how many streams the group had. */
  column(group: number, label: string, how: 'sum' | 'mean', tags: string[], inputs: number): NumericColumn {
    const at = group * this.count;
    const mean = how === 'mean';
    const values = new Array<number | null>(this.count);
    for (let i = 0; i < this.count; i++) {
      const n = this.n[at + i]!;
      const s = this.sum[at + i]!;
      values[i] = n === 0 ? (mean || inputs > 0 ? null : 0) : mean ? s / n : s;
    }
    return { kind: 'numeric', label, tags, values };
  }
}

/** Histograms merge; numbers become samples of the slot's histogram (nulls and NaN excluded). */
function mergeAcross(cols: Column[], count: number): (Histogram | null)[] {
  return Array.from({ length: count }, (_, i) => {
    let h: Histogram | null = null;
    for (const c of cols) {
      const v = c.values[i];
      if (v === null || v === undefined) continue;
      if (v instanceof Histogram) (h ??= Histogram.empty()).merge(v);
      else if (typeof v === 'number' && Number.isFinite(v)) (h ??= Histogram.empty()).insert(v);
    }
    return h;
  });
}

/**
 * Columns grouped by their values of the requested categories, in order of first
 * appearance; a column without a category is grouped with those lacking it too.
 * Labels are the group's `cat:value` tags (after the reduce label when there is one).
 */
export function groupBy<C extends Pick<Column, 'tags'>>(columns: C[], spec: ReduceSpec): [string, C[]][] {
  const out = new Map<string, C[]>();
  for (const c of columns) {
    const groupTags = spec.params.flatMap((cat) => {
      const tag = c.tags.find((t) => t.startsWith(`${cat}:`));
      return tag === undefined ? [] : [tag];
    });
    const key = groupTags.join(',');
    out.set(key, [...(out.get(key) ?? []), c]);
  }
  return [...out].map(([key, cols]) => [spec.label === '' ? key : `${spec.label} ${key}`.trim(), cols]);
}

/** How topk ranks a stream; `q` only matters for quantile. */
interface Mechanism {
  by: 'mean' | 'max' | 'min' | 'quantile';
  q: number;
}

function topkParams(params: string[], field: string): { k: number; mech: Mechanism } {
  const [kText, mechText = 'mean', qText] = params;
  const k = Number(kText);
  if (kText === undefined || !Number.isSafeInteger(k) || k <= 0) throw new FetchRequestError(`${field}[0]`, `K must be a positive integer, got ${JSON.stringify(kText ?? null)}`);
  if (mechText === 'quantile') {
    const q = qText === undefined || qText.trim() === '' ? NaN : Number(qText);
    if (!(q >= 0 && q <= 1)) throw new FetchRequestError(`${field}[2]`, `quantile needs a parameter in [0, 1], got ${JSON.stringify(qText ?? null)}`);
    return { k, mech: { by: 'quantile', q } };
  }
  if (mechText !== 'mean' && mechText !== 'max' && mechText !== 'min') throw new FetchRequestError(`${field}[1]`, `'${mechText}' is not one of mean, max, min, quantile`);
  if (params.length > 2) throw new FetchRequestError(field, `${mechText} takes no further parameter`);
  return { k, mech: { by: mechText, q: NaN } };
}

/** The K columns ranked highest; columns without data rank last. */
function topk(columns: Column[], p: { k: number; mech: Mechanism }): Column[] {
  const ranked = columns.map((c) => ({ c, rank: rankOf(c, p.mech) }));
  ranked.sort((a, b) => (Number.isNaN(b.rank) ? -1 : Number.isNaN(a.rank) ? 1 : b.rank - a.rank));
  return ranked.slice(0, p.k).map((r) => r.c);
}

/** Every measurement of the column accumulated into one histogram, then ranked by the mechanism. */
function rankOf(c: Column, mech: Mechanism): number {
  if (c.kind === 'numeric') {
    const values = c.values.filter((v): v is number => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
    if (values.length === 0) return NaN;
    if (mech.by === 'mean') return values.reduce((s, v) => s + v, 0) / values.length;
    if (mech.by === 'max') return values[values.length - 1]!;
    if (mech.by === 'min') return values[0]!;
    const at = (values.length - 1) * mech.q; // type 7
    const lo = Math.floor(at);
    return values[lo]! + (at - lo) * ((values[Math.ceil(at)] ?? values[lo]!) - values[lo]!);
  }
  const all = mergeAcross([c], c.values.length).reduce<Histogram>((acc, h) => (h === null ? acc : acc.merge(h)), Histogram.empty());
  if (mech.by === 'mean') return all.approxMean();
  return all.quantiles([mech.by === 'max' ? 1 : mech.by === 'min' ? 0 : mech.q])[0]!;
}
