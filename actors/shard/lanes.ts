// Work over every partition of a shard, a few partitions at a time. A partition sealing holds
// its batch's blocks (up to SEAL_CHUNK, with their keys and write records) until RocksDB has
// written them: all sixteen partitions of a million-series node sealing at once held ≈ 320 000
// blocks, and a graceful stop grew the shard's heap by ≈ 200 MiB. Two lanes keep one
// partition encoding while another's batch is written.

/** Partitions working at once in a checkpoint or a stop. */
export const PARTITION_LANES = 2;

/** `fn` over `items`, at most `lanes` at a time, in order; the results in the items' order. */
export async function inLanes<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, lanes = PARTITION_LANES): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  return results;
}
