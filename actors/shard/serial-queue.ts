// One partition's mailbox: work runs one task at a time, in the order it was queued, so no
// two writers ever race on a metric and a read sees every write queued before it. (What
// nact gave the partition actors, without an actor system: a shard owns its partitions.)

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;

  /** Tasks waiting or running. */
  get depth(): number {
    return this.queued;
  }

  /** Runs `task` after every task queued before it; resolves or rejects with its outcome. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    this.queued++;
    const result = this.tail.then(task);
    this.tail = result.then(
      () => this.queued--,
      () => this.queued--,
    );
    return result;
  }
}
