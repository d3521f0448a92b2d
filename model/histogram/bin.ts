// circllhist bins (docs: ../shared/spec/circllhist.md §1–§3): a bin is (val, exp), two
// signed bytes; regular bins hold two significant decimal digits `val` in a decade `exp`.

import { hexFloat } from '../hex-float.js';

export interface Bin {
  readonly val: number;
  readonly exp: number;
}

export const ZERO_BIN: Bin = Object.freeze({ val: 0, exp: 0 });
export const NAN_BIN: Bin = Object.freeze({ val: -1, exp: 0 });

/** P[e + 128] = the double nearest 10^e: the correctly rounded literal, never Math.pow (§2 step 5). */
const POW10 = Array.from({ length: 256 }, (_, i) => Number(`1e${i - 128}`));
const p10 = (e: number): number => POW10[e + 128]!;

export function isNanBin(b: Bin): boolean {
  return b.val === -1 && b.exp === 0;
}

/** The bins a reader accepts (§1): regular bins, any zero bin, and exactly (−1, 0). */
export function binIsValid(b: Bin): boolean {
  const a = Math.abs(b.val);
  if (b.val === 0) return true;
  if (isNanBin(b)) return true;
  return a >= 10 && a <= 99 && b.exp >= -128 && b.exp <= 127;
}

/** Value → bin, exactly as the reference does it (§2), including its +1e-13 margin. */
export function binOf(d: number): Bin {
  if (!Number.isFinite(d)) return NAN_BIN;
  if (d === 0) return ZERO_BIN;
  const sign = d < 0 ? -1 : 1;
  const a = Math.abs(d);
  let e = Math.floor(Math.log10(a));
  if (e > 127 || e < -128) return e >= 0 ? NAN_BIN : ZERO_BIN;
  let x = a / p10(e);
  x = x * 10;
  let v = sign * Math.floor(x + 1e-13);
  if (Math.abs(v) === 100) {
    if (e >= 127) return NAN_BIN;
    v = v / 10;
    e = e + 1;
  }
  if (v === 0) return ZERO_BIN;
  if (Math.abs(v) < 10 || Math.abs(v) > 99) return NAN_BIN;
  return { val: v, exp: e };
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** value · 10^scale → bin, in integer arithmetic with truncation (§2.1). */
export function binOfIntScale(value: bigint, scale: number): Bin {
  if (value === 0n) return ZERO_BIN;
  let s = scale + 1;
  const sign = value < 0n ? -1 : 1;
  let v = value === INT64_MIN ? INT64_MAX : value < 0n ? -value : value;
  if (v < 10n) {
    v *= 10n;
    s -= 1;
  }
  while (v >= 100n) {
    v /= 10n;
    s += 1;
  }
  if (s < -128) return ZERO_BIN;
  if (s > 127) return NAN_BIN;
  return { val: sign * Number(v), exp: s };
}

/**
 * A number that sorts like the §1 total order: NaN bin, negatives from most negative,
 * zero bins, positives ascending. Keys are what histograms store.
 */
export function binKey(b: Bin): number {
  if (isNanBin(b) || (b.val !== 0 && (Math.abs(b.val) < 10 || Math.abs(b.val) > 99))) return 0;
  if (b.val === 0) return (2 << 16) | ((b.exp + 128) << 8);
  if (b.val < 0) return (1 << 16) | ((127 - b.exp) << 8) | (b.val + 100);
  return (3 << 16) | ((b.exp + 128) << 8) | b.val;
}

export function binOfKey(key: number): Bin {
  const group = key >>> 16;
  const hi = (key >>> 8) & 0xff;
  const lo = key & 0xff;
  if (group === 0) return NAN_BIN;
  if (group === 2) return hi === 128 ? ZERO_BIN : { val: 0, exp: hi - 128 };
  if (group === 1) return { val: lo - 100, exp: 127 - hi };
  return { val: lo, exp: hi - 128 };
}

export function compareBins(a: Bin, b: Bin): number {
  return binKey(a) - binKey(b);
}

/** The edge nearer zero (`hist_bucket_to_double`), computed in the reference's order. */
export function binToDouble(b: Bin): number {
  if (isNanBin(b)) return NaN;
  if (b.val === 0) return 0;
  return (b.val / 10) * p10(b.exp);
}

export function binWidth(b: Bin): number {
  if (isNanBin(b)) return NaN;
  if (b.val === 0) return 0;
  return p10(b.exp) / 10;
}

/** Lower edge (towards −∞). */
export function binLower(b: Bin): number {
  const d = binToDouble(b);
  return d >= 0 ? d : d - binWidth(b);
}

/** Upper edge (towards +∞). */
export function binUpper(b: Bin): number {
  const d = binToDouble(b);
  return d > 0 ? d + binWidth(b) : d === 0 ? 0 : d;
}

/** The harmonic ("paretro") midpoint of the bin's edges, as the reference computes it. */
export function binMidpoint(b: Bin): number {
  if (isNanBin(b)) return NaN;
  if (b.val === 0) return 0;
  const bottom = binToDouble(b);
  const interval = bottom < 0 ? -binWidth(b) : binWidth(b);
  const top = bottom + interval;
  return bottom + interval * (bottom / (bottom + top));
}

/** The reference's text form: `+15e-001` for (15, 0); `0` and `NaN` for the special bins. */
export function binLabel(b: Bin): string {
  if (isNanBin(b)) return 'NaN';
  if (b.val === 0) return '0';
  const e = b.exp - 1;
  return `${b.val < 0 ? '-' : '+'}${String(Math.abs(b.val)).padStart(2, '0')}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(3, '0')}`;
}

/** The bin's edge nearer zero as C's `%a` (`0x1.8p+1`), exact to the bit; `nan` for the NaN bin. */
export function binHexLabel(b: Bin): string {
  return hexFloat(binToDouble(b));
}

const LABEL = /^([+-])(\d\d)e([+-])(\d{3})$/;

export function parseBinLabel(s: string): Bin | null {
  if (s === 'NaN') return NAN_BIN;
  if (s === '0') return ZERO_BIN;
  const m = LABEL.exec(s);
  if (m === null) return null;
  const val = (m[1] === '-' ? -1 : 1) * Number(m[2]);
  const exp = (m[3] === '-' ? -1 : 1) * Number(m[4]) + 1;
  const b = { val, exp };
  return Math.abs(val) >= 10 && exp >= -128 && exp <= 127 ? b : null;
}
