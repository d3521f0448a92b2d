// Load shedding for writes. Without a bound, a burst of writers queues bodies on the event
// loop and records in partition mailboxes faster than they are applied: latency grows to
// seconds for everyone (reads included) and memory with it. A write is admitted only while
// the bytes of write bodies in flight (received, not yet answered) and the records handed
// to partitions but not yet applied stay under their limits; otherwise it is refused at
// once with 503 and Retry-After, before its body is read.

export interface AdmissionLimits {
  /** Bytes of write bodies being parsed, journaled or waiting to be answered. */
  maxBytes: number;
  /** Records dispatched to partition actors and not yet applied. */
  maxPendingRecords: number;
}

export class IngestAdmission {
  private bytes = 0;
  private pendingRecords = 0;
  /** Writes refused since start (for /stats.json). */
  refused = 0;

  constructor(private readonly limits: AdmissionLimits) {}

  /**
   * Admits a write of `bytes` (its content length) or says why not. A body larger than the
   * whole budget is admitted when nothing else is in flight, so it can still make progress.
   */
  admit(bytes: number): string | null {
    if (this.pendingRecords >= this.limits.maxPendingRecords) return this.refuse(`${this.pendingRecords} records wait to be applied`);
    if (this.bytes > 0 && this.bytes + bytes > this.limits.maxBytes) return this.refuse(`${this.bytes} bytes of writes are in flight`);
    this.bytes += bytes;
    return null;
  }

  release(bytes: number): void {
    this.bytes -= bytes;
  }

  dispatched(records: number): void {
    this.pendingRecords += records;
  }

  applied(records: number): void {
    this.pendingRecords -= records;
  }

  report(): { bytes_in_flight: number; records_pending_apply: number; refused: number } {
    return { bytes_in_flight: this.bytes, records_pending_apply: this.pendingRecords, refused: this.refused };
  }

  private refuse(why: string): string {
    this.refused++;
    return why;
  }
}
