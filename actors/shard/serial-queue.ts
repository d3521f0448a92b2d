// One partition's mailbox: writes run one at a time, in the order they were queued, so no two
// writers ever race on a metric; a read runs once every write queued before it has ended, so it
// sees each of them. Reads queued one after another run side by side (each waits on RocksDB for
// most of its time: one at a time, a 100-stream fetch left the shard idle a third of the
// time), and a write queued after them waits for all of them. (What nact gave the partition
// actors, without an actor system: a shard owns its partitions.)

/** Past this many reads since the last write, they are waited for as one (a read-only load never writes). */
const MAX_TRACKED_READS = 64;
/**
 * Reads of one partition at once, at most: enough to keep RocksDB's threads busy while the shard
 * decodes, few enough that a walk over every metric (a rebuild, a sweep) holds a handful of
 * iterators and decoded series at a time, not thousands.
 */
export const MAX_READS_AT_ONCE = 4;

export class SerialQueue {
  /** Settles when the last write queued has (whatever its outcome). */
  private lastWrite: Promise<unknown> = Promise.resolve();
  /** Reads queued since the last write, settled whatever their outcome: the next write waits for them. */
  private reads: Promise<unknown>[] = [];
  /** The last MAX_READS_AT_ONCE reads queued (settled whatever their outcome), oldest first: a new read waits for the oldest. */
  private recentReads: Promise<unknown>[] = [];
  private queued = 0;

  /** Tasks waiting or running. */
  get depth(): number {
    return this.queued;
  }

  /** Runs `task` alone, after every task queued before it; resolves or rejects with its outcome. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    this.queued++;
    const before = this.reads.length === 0 ? this.lastWrite : Promise.all([this.lastWrite, ...this.reads]);
    const result = before.then(task);
    this.lastWrite = this.settled(result);
    this.reads = [];
    this.recentReads = []; // reads queued after this write wait for it, so for every read before it
    return result;
  }

  /**
   * Runs `task`, which must not change what the partition holds (caches aside), after every
   * write queued before it, alongside other reads; resolves or rejects with its outcome.
   */
  read<T>(task: () => T | Promise<T>): Promise<T> {
    this.queued++;
    const before = this.recentReads.length < MAX_READS_AT_ONCE ? this.lastWrite : Promise.all([this.lastWrite, this.recentReads.shift()]);
    const result = before.then(task);
    const done = this.settled(result);
    this.recentReads.push(done);
    this.reads.push(done);
    if (this.reads.length >= MAX_TRACKED_READS) this.reads = [Promise.all(this.reads)];
    return result;
  }

  private settled(result: Promise<unknown>): Promise<unknown> {
    return result.then(
      () => this.queued--,
      () => this.queued--,
    );
  }
}
