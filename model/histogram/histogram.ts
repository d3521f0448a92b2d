// A circllhist histogram (../shared/spec/circllhist.md §4, §7–§9): a sparse, sorted list of
// (bin, count) with uint64 counts (bigint, saturating on insert and merge). Statistics
// reproduce the reference's double arithmetic and its documented uint64 quirks.
import { binKey, binLower, binMidpoint, binOf, binOfIntScale, binOfKey, binToDouble, binUpper, binWidth, binLabel, type Bin } from './bin.js';

export type QuantileType = 1 | 7;

export class HistogramArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HistogramArgumentError';
  }
}

const U64_MAX = 2n ** 64n - 1n;
const U64_MASK = U64_MAX;
const NAN_KEY = 0;

const saturatingAdd = (a: bigint, b: bigint): bigint => (a + b > U64_MAX ? U64_MAX : a + b);
const toCount = (c: bigint | number): bigint => {
  const n = typeof c === 'bigint' ? c : BigInt(Math.trunc(c));
  if (n < 0n) throw new HistogramArgumentError(`a count cannot be negative (${n})`);
  return n > U64_MAX ? U64_MAX : n;
};

export class Histogram {
  /** Bin keys (bin.ts binKey), ascending; parallel to `counts`. */
  private keys: number[] = [];
  private counts: bigint[] = [];

  static empty(): Histogram {
    return new Histogram();
  }

  clone(): Histogram {
    const h = new Histogram();
    h.keys = this.keys.slice();
    h.counts = this.counts.slice();
    return h;
  }

  insert(value: number, count: bigint | number = 1n): this {
    return this.insertBin(binOf(value), count);
  }

  insertIntScale(value: bigint, scale: number, count: bigint | number = 1n): this {
    return this.insertBin(binOfIntScale(value, scale), count);
  }

  /** Adds `count` to the bin (creating it even for count 0, as the reference does). */
  insertBin(bin: Bin, count: bigint | number): this {
    this.addKey(binKey(bin), toCount(count));
    return this;
  }

  /** Subtracts from the bin, flooring at 0; the bin stays. */
  remove(value: number, count: bigint | number = 1n): this {
    const i = this.find(binKey(binOf(value)));
    if (i >= 0) {
      const c = this.counts[i]! - toCount(count);
      this.counts[i] = c < 0n ? 0n : c;
    }
    return this;
  }

  merge(other: Histogram): this {
    if (other.keys.length === 0) return this;
    if (this.keys.length === 0) {
      this.keys = other.keys.slice();
      this.counts = other.counts.slice();
      return this;
    }
    const keys: number[] = [];
    const counts: bigint[] = [];
    let i = 0;
    let j = 0;
    while (i < this.keys.length || j < other.keys.length) {
      const a = i < this.keys.length ? this.keys[i]! : Infinity;
      const b = j < other.keys.length ? other.keys[j]! : Infinity;
      if (a === b) {
        keys.push(a);
        counts.push(saturatingAdd(this.counts[i++]!, other.counts[j++]!));
      } else if (a < b) {
        keys.push(a);
        counts.push(this.counts[i++]!);
      } else {
        keys.push(b);
        counts.push(other.counts[j++]!);
      }
    }
    this.keys = keys;
    this.counts = counts;
    return this;
  }

  /** Per-bin subtraction, flooring at 0. */
  subtract(other: Histogram): this {
    for (let j = 0; j < other.keys.length; j++) {
      const i = this.find(other.keys[j]!);
      if (i < 0) continue;
      const c = this.counts[i]! - other.counts[j]!;
      this.counts[i] = c < 0n ? 0n : c;
    }
    return this;
  }

  entries(): readonly { bin: Bin; count: bigint }[] {
    return this.keys.map((k, i) => ({ bin: binOfKey(k), count: this.counts[i]! }));
  }

  get bucketCount(): number {
    return this.keys.length;
  }

  get isEmpty(): boolean {
    return this.counts.every((c) => c === 0n);
  }

  /** Every bin's count, the NaN bin included, saturating. */
  sampleCount(): bigint {
    let n = 0n;
    for (const c of this.counts) n = saturatingAdd(n, c);
    return n;
  }

  approxSum(): number {
    let sum = 0;
    this.eachFinite((bin, c) => (sum += binMidpoint(bin) * Number(c)));
    return sum;
  }

  approxMean(): number {
    let sum = 0;
    let n = 0;
    this.eachFinite((bin, c) => {
      sum += binMidpoint(bin) * Number(c);
      n += Number(c);
    });
    return n === 0 ? NaN : sum / n;
  }

  approxStddev(): number {
    let s1 = 0;
    let s2 = 0;
    let n = 0;
    this.eachFinite((bin, c) => {
      const m = binMidpoint(bin);
      const cd = Number(c);
      s1 += m * cd;
      s2 += m ** 2 * cd;
      n += cd;
    });
    if (n === 0) return NaN;
    const mean = s1 / n;
    return Math.sqrt(s2 / n - mean ** 2);
  }

  approxMoment(k: number): number {
    let s = 0;
    let n = 0;
    this.eachFinite((bin, c) => {
      s += binMidpoint(bin) ** k * Number(c);
      n += Number(c);
    });
    return n === 0 ? NaN : s / n ** k;
  }

  /** Quantiles by the reference's resampling walk (§8); type 1 default, 7 discretized. */
  quantiles(qs: readonly number[], type: QuantileType = 1): number[] {
    for (let i = 0; i < qs.length; i++) {
      if (i > 0 && qs[i]! < qs[i - 1]!) throw new HistogramArgumentError('quantiles must be non-decreasing');
      if (!(qs[i]! >= 0 && qs[i]! <= 1)) throw new HistogramArgumentError(`quantile ${qs[i]} is outside [0, 1]`);
    }
    const idx: number[] = [];
    let total = 0;
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keys[i] === NAN_KEY) continue;
      idx.push(i);
      total += Number(this.counts[i]!);
    }
    if (total === 0) return qs.map(() => NaN);
    let at = idx.findIndex((i) => this.counts[i]! > 0n);
    let lo = 0;
    let hi = Number(this.counts[idx[at]!]!);
    return qs.map((q) => {
      const target = type === 1 ? total * q : Math.floor((total - 1) * q + 1);
      while (at < idx.length - 1 && hi < target) {
        at++;
        lo = hi;
        hi = lo + Number(this.counts[idx[at]!]!);
      }
      const i = idx[at]!;
      const bin = binOfKey(this.keys[i]!);
      const w = binWidth(bin);
      if (w === 0) return 0;
      let k = type === 1 ? Math.ceil(target - lo) : target - lo;
      if (type === 1 && k === 0) k = 1;
      const n1 = Number((this.counts[i]! + 1n) & U64_MASK);
      return binLower(bin) + (k / n1) * w;
    });
  }

  /** Fraction of samples below each threshold (§9), linear inside a bin. */
  inverseQuantiles(thresholds: readonly number[]): number[] {
    for (let i = 1; i < thresholds.length; i++) {
      if (thresholds[i]! < thresholds[i - 1]!) throw new HistogramArgumentError('thresholds must be non-decreasing');
    }
    let totalU = 0n;
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] !== NAN_KEY) totalU = (totalU + this.counts[i]!) & U64_MASK;
    if (totalU === 0n) return thresholds.map(() => NaN);
    const total = Number(totalU);
    const out: number[] = [];
    let t = 0;
    let below = 0n;
    for (let i = 0; i < this.keys.length && t < thresholds.length; i++) {
      if (this.keys[i] === NAN_KEY) continue;
      const bin = binOfKey(this.keys[i]!);
      const zero = binWidth(bin) === 0;
      const lo = zero ? -1e-128 : binLower(bin);
      const hi = zero ? 1e-128 : binUpper(bin);
      const c = this.counts[i]!;
      while (t < thresholds.length && thresholds[t]! < hi) {
        const x = thresholds[t++]!;
        if (x < lo || zero) out.push(Number(below) / total);
        else out.push((Number(below) + ((x - lo) / (hi - lo)) * Number(c)) / total);
      }
      below = (below + c) & U64_MASK;
    }
    while (t++ < thresholds.length) out.push(1);
    return out;
  }

  /** Samples in bins up to the threshold's bin (inclusive) or strictly below it; NaN bin excluded; uint64 wrapping. */
  countBelow(t: number, inclusive = true): bigint {
    return this.sumBelow(binKey(binOf(t)), inclusive);
  }

  /** sample_count (NaN bin included) minus the samples below; uint64 wrapping like the reference. */
  countAbove(t: number, inclusive = true): bigint {
    return (this.sampleCount() - this.sumBelow(binKey(binOf(t)), !inclusive)) & U64_MASK;
  }

  /** The count of the bin whose interval contains t by double comparison. */
  countNearby(t: number): bigint {
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keys[i] === NAN_KEY) continue;
      const bin = binOfKey(this.keys[i]!);
      const d = binToDouble(bin);
      if (d === 0 ? t > -1e-128 && t < 1e-128 : d > 0 ? t >= binLower(bin) && t < binUpper(bin) : t > binLower(bin) && t <= binUpper(bin)) {
        return this.counts[i]!;
      }
    }
    return 0n;
  }

  toLabelCounts(label: (b: Bin) => string = binLabel): Record<string, number> {
    const out: Record<string, number> = {};
    for (let i = 0; i < this.keys.length; i++) {
      if (this.counts[i]! > 0n) out[label(binOfKey(this.keys[i]!))] = Number(this.counts[i]!);
    }
    return out;
  }

  equals(other: Histogram): boolean {
    return this.keys.length === other.keys.length && this.keys.every((k, i) => k === other.keys[i] && this.counts[i] === other.counts[i]);
  }

  private sumBelow(key: number, inclusive: boolean): bigint {
    let sum = 0n;
    for (let i = 0; i < this.keys.length; i++) {
      const k = this.keys[i]!;
      if (k === NAN_KEY) continue;
      if (k > key || (!inclusive && k === key)) break;
      sum = (sum + this.counts[i]!) & U64_MASK;
    }
    return sum;
  }

  private eachFinite(fn: (bin: Bin, count: bigint) => void): void {
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] !== NAN_KEY) fn(binOfKey(this.keys[i]!), this.counts[i]!);
  }

  private find(key: number): number {
    let lo = 0;
    let hi = this.keys.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const k = this.keys[mid]!;
      if (k === key) return mid;
      if (k < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return -(lo + 1);
  }

  private addKey(key: number, count: bigint): void {
    const i = this.find(key);
    if (i >= 0) {
      this.counts[i] = saturatingAdd(this.counts[i]!, count);
      return;
    }
    const at = -(i + 1);
    this.keys.splice(at, 0, key);
    this.counts.splice(at, 0, count);
  }
}
