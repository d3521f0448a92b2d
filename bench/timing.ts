// Timing a repeated request the same way in every benchmark.

/** Runs `run` once to warm up (returning its result), then `rounds` timed times; ms sorted ascending. */
export async function timeRounds<T>(run: () => Promise<T>, rounds: number): Promise<{ first: T; ms: number[] }> {
  const first = await run();
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  return { first, ms: ms.sort((a, b) => a - b) };
}
