// The devops data set of bench/devops (also bench/raw-bytes and bench/rollup-bytes): per host 24
// series — cpu usage_* (10 gauges in [0, 100], 2 decimals), mem/disk used_percent (2 decimals),
// mem/disk bytes as bounded random walks, and diskio/net counters that only grow. Seeded, so
// every run and every system see the same samples.

export type Kind = 'percent' | 'bytes' | 'counter';
export const FIELDS: [string, Kind][] = [
  ...['user', 'system', 'idle', 'nice', 'iowait', 'irq', 'softirq', 'steal', 'guest', 'guest_nice'].map((f): [string, Kind] => [`cpu_usage_${f}`, 'percent']),
  ['mem_used_percent', 'percent'],
  ['mem_free', 'bytes'],
  ['mem_used', 'bytes'],
  ['mem_cached', 'bytes'],
  ['mem_buffered', 'bytes'],
  ['disk_used_percent', 'percent'],
  ['disk_free', 'bytes'],
  ['disk_used', 'bytes'],
  ['diskio_reads', 'counter'],
  ['diskio_writes', 'counter'],
  ['diskio_read_bytes', 'counter'],
  ['diskio_write_bytes', 'counter'],
  ['net_bytes_recv', 'counter'],
  ['net_bytes_sent', 'counter'],
];

/** mulberry32: a small seeded PRNG, so every run (and both systems) see the same data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One series' values: a random walk clamped to its range, or a counter's running total. */
export function series(kind: Kind, points: number, rand: () => number): Float64Array {
  const out = new Float64Array(points);
  const GiB = 2 ** 30;
  let v = kind === 'percent' ? rand() * 100 : kind === 'bytes' ? (4 + rand() * 28) * GiB : Math.floor(rand() * 1e9);
  for (let i = 0; i < points; i++) {
    if (kind === 'percent') v = Math.round(Math.min(100, Math.max(0, v + (rand() - 0.5) * 2)) * 100) / 100;
    else if (kind === 'bytes') v = Math.round(Math.min(32 * GiB, Math.max(0, v + (rand() - 0.5) * 64 * 2 ** 20)));
    else v += Math.floor(rand() * 4096);
    out[i] = v;
  }
  return out;
}
