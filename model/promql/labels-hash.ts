// Prometheus' labels.Hash(): xxHash64 (seed 0) of `name 0xff value 0xff` for each label in
// name order. limit_ratio samples series by it, so the same series are kept as in Prometheus.

const P1 = 11400714785074694791n;
const P2 = 14029467366897019727n;
const P3 = 1609587929392839161n;
const P4 = 9650029242287828579n;
const P5 = 2870177450012600261n;
const MASK = (1n << 64n) - 1n;

const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & MASK;
const round = (acc: bigint, lane: bigint): bigint => (rotl((acc + lane * P2) & MASK, 31n) * P1) & MASK;
const merge = (acc: bigint, v: bigint): bigint => (((acc ^ round(0n, v)) * P1) & MASK) + P4 & MASK;

function u64(b: Uint8Array, i: number): bigint {
  let v = 0n;
  for (let k = 7; k >= 0; k--) v = (v << 8n) | BigInt(b[i + k]!);
  return v;
}

const u32 = (b: Uint8Array, i: number): bigint => BigInt((b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0);

export function xxhash64(b: Uint8Array): bigint {
  const n = b.length;
  let i = 0;
  let h: bigint;
  if (n >= 32) {
    let v1 = (P1 + P2) & MASK;
    let v2 = P2;
    let v3 = 0n;
    let v4 = (0n - P1) & MASK;
    for (; i + 32 <= n; i += 32) {
      v1 = round(v1, u64(b, i));
      v2 = round(v2, u64(b, i + 8));
      v3 = round(v3, u64(b, i + 16));
      v4 = round(v4, u64(b, i + 24));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & MASK;
    for (const v of [v1, v2, v3, v4]) h = merge(h, v);
  } else {
    h = P5;
  }
  h = (h + BigInt(n)) & MASK;
  for (; i + 8 <= n; i += 8) h = ((rotl(h ^ round(0n, u64(b, i)), 27n) * P1) & MASK) + P4 & MASK;
  if (i + 4 <= n) {
    h = ((rotl(h ^ ((u32(b, i) * P1) & MASK), 23n) * P2) & MASK) + P3 & MASK;
    i += 4;
  }
  for (; i < n; i++) h = (rotl(h ^ ((BigInt(b[i]!) * P5) & MASK), 11n) * P1) & MASK;
  h ^= h >> 33n;
  h = (h * P2) & MASK;
  h ^= h >> 29n;
  h = (h * P3) & MASK;
  h ^= h >> 32n;
  return h;
}

export function labelsHash(labels: Record<string, string>): bigint {
  const parts: number[] = [];
  const enc = new TextEncoder();
  for (const name of Object.keys(labels).sort()) {
    parts.push(...enc.encode(name), 0xff, ...enc.encode(labels[name]!), 0xff);
  }
  return xxhash64(Uint8Array.from(parts));
}
