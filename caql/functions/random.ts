// Seeded pseudo-random numbers for the synthetic functions (randomwalk, histogram:random):
// a seed ≥ 0 repeats the same sequence; -1 draws a fresh seed.

/** Uniform numbers in [0, 1) from a 32-bit seed (the mulberry32 generator). */
export function seededRandom(seed: number): () => number {
  let state = (seed < 0 ? Math.floor(Math.random() * 2 ** 32) : Math.floor(seed)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A standard normal draw (Box–Muller). */
export function normalDraw(random: () => number): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}
