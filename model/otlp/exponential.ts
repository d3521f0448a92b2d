// OTLP exponential histograms → circllhist (docs: README "OpenTelemetry", ../shared/spec/circllhist.md).
//
// An exponential bucket of index i at scale s holds the values in (b^i, b^(i+1)], b = 2^(2^-s)
// (negative buckets mirror it). A circllhist bin (v, e), 10 ≤ v ≤ 99, holds [v, v+1)·10^(e-1).
// Each bucket's count is spread over the bins its range overlaps, in proportion to the overlap
// measured in log10 — the exponential histogram assumes values spread evenly in log space
// within a bucket — and rounded so that every bucket's count is kept exactly: the bins it
// overlaps get round(c·F_j) − round(c·F_{j−1}), F_j the fraction of the bucket's log-range up
// to the end of bin j. A bucket inside one bin (the usual case from scale 3 up) lands there
// whole. The zero bucket goes to the zero bin; the part of a bucket below 1e-128 too (circllhist
// has no smaller bin); a bucket reaching 1e128 or beyond cannot be held, and rejects its point.
import { ZERO_BIN, type Bin } from '../histogram/bin.js';
import { Histogram } from '../histogram/histogram.js';
import type { ExponentialBuckets } from './types.js';

export interface ExponentialCounts {
  scale: number;
  zeroCount: number;
  positive: ExponentialBuckets;
  negative: ExponentialBuckets;
}

/** The scales OTLP defines (the data model's −10 … 20). */
export const MIN_SCALE = -10;
export const MAX_SCALE = 20;
/** circllhist's bins cover magnitudes in [1e-128, 1e128). */
const MIN_LOG10 = -128;
const MAX_LOG10 = 128;
const LOG10_2 = Math.log10(2);

/** The circllhist of an exponential histogram, or why it cannot be one. */
export function exponentialToCircllhist(p: ExponentialCounts): Histogram | string {
  if (!Number.isInteger(p.scale) || p.scale < MIN_SCALE || p.scale > MAX_SCALE) return `scale ${p.scale} is outside OTLP's ${MIN_SCALE}…${MAX_SCALE}`;
  const h = Histogram.empty();
  if (p.zeroCount > 0) h.insertBin(ZERO_BIN, p.zeroCount);
  for (const [side, sign] of [[p.positive, 1], [p.negative, -1]] as const) {
    for (let k = 0; k < side.counts.length; k++) {
      const count = side.counts[k]!;
      if (count === 0) continue;
      const problem = spreadBucket(h, side.offset + k, p.scale, count, sign);
      if (problem !== null) return problem;
    }
  }
  return h;
}

/** Adds one bucket's count to the bins it overlaps; a reason when it cannot. */
function spreadBucket(h: Histogram, index: number, scale: number, count: number, sign: 1 | -1): string | null {
  const width = 2 ** -scale * LOG10_2;
  const lo = index * width;
  const hi = (index + 1) * width;
  if (hi > MAX_LOG10) return `bucket ${index} at scale ${scale} reaches 10^${hi.toFixed(1)}, beyond circllhist's largest bin (below 1e128)`;
  const share = shareOut(count, hi - lo);
  if (lo < MIN_LOG10) share(ZERO_BIN, Math.min(hi, MIN_LOG10) - lo, h);
  for (let b = binAt(Math.max(lo, MIN_LOG10)); b.from < hi; b = nextBin(b)) {
    const overlap = Math.min(b.to, hi) - Math.max(b.from, lo);
    if (overlap > 0) share({ val: sign * b.v, exp: b.e }, overlap, h);
  }
  share.finish(h);
  return null;
}

/**
 * Cumulative rounding: each call adds round(count·F) − (what was given so far) to `bin`, F
 * the fraction of the bucket's log-width covered so far; `finish` gives the last bin the
 * remainder (F = 1 exactly), so the parts always add up to `count`.
 */
function shareOut(count: number, total: number) {
  let covered = 0;
  let given = 0;
  let last: Bin | null = null;
  const share = (bin: Bin, width: number, h: Histogram): void => {
    if (last !== null) {
      const upTo = Math.round((count * covered) / total);
      if (upTo > given) h.insertBin(last, upTo - given);
      given = Math.max(given, upTo);
    }
    covered += width;
    last = bin;
  };
  share.finish = (h: Histogram): void => {
    if (last !== null && count > given) h.insertBin(last, count - given);
  };
  return share;
}

/** A positive circllhist bin (v, e) with its log10 edges [from, to). */
interface LogBin {
  v: number;
  e: number;
  from: number;
  to: number;
}

function logBin(v: number, e: number): LogBin {
  return { v, e, from: e - 1 + Math.log10(v), to: e - 1 + Math.log10(v + 1) };
}

function nextBin(b: LogBin): LogBin {
  return b.v === 99 ? logBin(10, b.e + 1) : logBin(b.v + 1, b.e);
}

/** The bin whose log10 range holds x (x in [−128, 128)). */
function binAt(x: number): LogBin {
  const e = Math.floor(x);
  let b = logBin(Math.min(99, Math.max(10, Math.floor(10 ** (x - e + 1)))), e);
  // Rounding in 10^… may land one bin off at an edge; step to the bin that holds x.
  while (x < b.from) b = b.v === 10 ? logBin(99, b.e - 1) : logBin(b.v - 1, b.e);
  while (x >= b.to) b = nextBin(b);
  return b;
}

// ---- cumulative → delta ----

/** `cur − prev` bucket by bucket at their common (coarser) scale; null when any count went down (a reset). */
export function subtractExponential(cur: ExponentialCounts, prev: ExponentialCounts): ExponentialCounts | null {
  const scale = Math.min(cur.scale, prev.scale);
  const zeroCount = cur.zeroCount - prev.zeroCount;
  if (zeroCount < 0) return null;
  const positive = subtractBuckets(downscale(cur.positive, cur.scale - scale), downscale(prev.positive, prev.scale - scale));
  const negative = subtractBuckets(downscale(cur.negative, cur.scale - scale), downscale(prev.negative, prev.scale - scale));
  if (positive === null || negative === null) return null;
  return { scale, zeroCount, positive, negative };
}

/** Merges each 2^by neighbouring buckets (index i → ⌊i / 2^by⌋), as a lower scale does. */
function downscale(b: ExponentialBuckets, by: number): ExponentialBuckets {
  if (by === 0 || b.counts.length === 0) return b;
  const f = 2 ** by;
  const offset = Math.floor(b.offset / f);
  const counts: number[] = [];
  b.counts.forEach((c, k) => {
    const at = Math.floor((b.offset + k) / f) - offset;
    counts[at] = (counts[at] ?? 0) + c;
  });
  return { offset, counts: Array.from(counts, (c) => c ?? 0) };
}

function subtractBuckets(cur: ExponentialBuckets, prev: ExponentialBuckets): ExponentialBuckets | null {
  const counts = cur.counts.slice();
  for (let k = 0; k < prev.counts.length; k++) {
    const c = prev.counts[k]!;
    if (c === 0) continue;
    const at = prev.offset + k - cur.offset;
    if (at < 0 || at >= counts.length || counts[at]! < c) return null;
    counts[at]! -= c;
  }
  return { offset: cur.offset, counts };
}

export function isEmptyExponential(p: ExponentialCounts): boolean {
  return p.zeroCount === 0 && p.positive.counts.every((c) => c === 0) && p.negative.counts.every((c) => c === 0);
}
