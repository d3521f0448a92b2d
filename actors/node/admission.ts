// Load shedding for writes. Without a bound, a burst of writers queues bodies on the event
// loop and records in partition mailboxes faster than they are applied: latency grows to
// seconds for everyone (reads included) and memory with it. A write is admitted only while
// the bytes of write bodies in flight (received, not yet answered) and the records handed
// to partitions but not yet applied stay under their limits, acknowledged writes stay
// within their latency budget, and neither a V8 heap of the node (main thread, shard workers) nor
// the process's resident memory is nearly full; otherwise it is refused with 503 and Retry-After,
// before its body is read.
// Behind the records limit alone a write first waits (`roomToApply`, up to `maxQueueMs`): the
// shards are busy, not the node's memory, and a refused client would leave them idle for its
// Retry-After while a waiting one costs only its connection.
import { heapShare } from '../../model/heap.js';
import { mib, ResidentMemory } from '../../model/resident-memory.js';

export interface AdmissionLimits {
  /** Bytes of write bodies being parsed, journaled or waiting to be answered. */
  maxBytes: number;
  /** Records dispatched to partition actors and not yet applied. */
  maxPendingRecords: number;
  /** p99 of acknowledged writes (recent) above which new writes are refused while others are in flight; 0 = off. */
  latencyBudgetMs: number;
  /**
   * Writes in flight below which none is refused for latency: as many as the node works on at
   * once (parse lanes, the journal). A write that is slow for lack of CPU, not for waiting behind
   * others, gets no faster when the writes beside it are refused; the CPU only idles while their
   * clients wait out Retry-After. Default 1.
   */
  latencyFloorWrites?: number;
  /**
   * Share of a V8 heap's limit, and of `memoryLimitBytes` for the process's resident memory, above
   * which writes are refused (memory pressure); 0 or absent = off.
   */
  memoryPressureShare?: number;
  /** The memory the process may use (model/resident-memory.ts `memoryLimitBytes`); absent = the resident set is not judged. */
  memoryLimitBytes?: number;
  /** How long a write waits for room under `maxPendingRecords` before it is refused; 0 or absent = refused at once. */
  maxQueueMs?: number;
}

/** Writes that may wait for room at once; more are refused at once (each holds a connection). */
const MAX_ROOM_WAITERS = 256;
/**
 * Once a heap is this share of the way to `memoryPressureShare`, the shards may have at most
 * NEAR_PRESSURE_RECORDS records waiting: records not yet applied are heap their shard has still
 * to find (new series above all), and a shard that reports its heap after it applies must not be
 * handed more than it can hold before its report stops the writes.
 */
const NEAR_PRESSURE = 0.75;
const NEAR_PRESSURE_RECORDS = 10_000;

/** Acknowledged writes the latency budget looks at: the last this many, at most this old. */
const LATENCY_SAMPLES = 512;
const LATENCY_WINDOW_MS = 5_000;
/** The p99 is worked out again at most this often (a sort of the samples). */
const P99_EVERY_MS = 100;

export class IngestAdmission {
  private bytes = 0;
  private writes = 0;
  private pendingRecords = 0;
  /** Writes refused since start (for /stats.json). */
  refused = 0;
  /** Recent acknowledged writes: when (ms) and how long they took (ms), a ring. */
  private readonly ackedAt = new Float64Array(LATENCY_SAMPLES);
  private readonly ackedMs = new Float64Array(LATENCY_SAMPLES);
  private acked = 0;
  private p99 = 0;
  private p99At = -Infinity;
  /** The last heap share reported by each shard worker (`shard <n>`). */
  private readonly heaps = new Map<string, number>();
  /** Writes waiting for the shards' backlog to come under `maxPendingRecords`: each one's wake-up. */
  private readonly roomWaiters = new Set<() => void>();
  private readonly resident: ResidentMemory;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.resident = new ResidentMemory(now);
  }

  /** Notes an acknowledged write and how long it took, for the latency budget. */
  acknowledged(ms: number): void {
    const i = this.acked++ % LATENCY_SAMPLES;
    this.ackedAt[i] = this.now();
    this.ackedMs[i] = ms;
  }

  /** p99 of the writes acknowledged in the last LATENCY_WINDOW_MS (0 when none). */
  recentP99(): number {
    const now = this.now();
    if (now - this.p99At < P99_EVERY_MS) return this.p99;
    const recent: number[] = [];
    for (let i = 0; i < Math.min(this.acked, LATENCY_SAMPLES); i++) if (now - this.ackedAt[i]! <= LATENCY_WINDOW_MS) recent.push(this.ackedMs[i]!);
    recent.sort((a, b) => a - b);
    this.p99 = recent.length === 0 ? 0 : recent[Math.min(recent.length - 1, Math.floor(recent.length * 0.99))]!;
    this.p99At = now;
    return this.p99;
  }

  /**
   * Admits a write of `bytes` (its content length) or says why not. A body larger than the
   * whole budget is admitted when nothing else is in flight, so it can still make progress.
   */
  admit(bytes: number): string | null {
    const pressure = this.memoryPressure();
    if (pressure !== null) return this.refuse(pressure);
    if (this.backlogged()) return this.refuse(`${this.pendingRecords} records wait to be applied`);
    if (this.bytes > 0 && this.bytes + bytes > this.limits.maxBytes) return this.refuse(`${this.bytes} bytes of writes are in flight`);
    // Over the latency budget, writes queue behind each other: refuse new ones while the node
    // already works on as many as it can at once (when fewer are in flight, they get through, so
    // the figure can come down).
    const budget = this.limits.latencyBudgetMs;
    if (budget > 0 && this.writes >= (this.limits.latencyFloorWrites ?? 1) && this.recentP99() > budget) return this.refuse(`acknowledged writes take ${Math.round(this.p99)} ms at p99, over the write latency budget of ${budget} ms`);
    this.bytes += bytes;
    this.writes++;
    return null;
  }

  /**
   * Resolves once fewer than `maxPendingRecords` records wait to be applied (true), or after
   * `maxQueueMs` (false; `admit` then says why). At once when there is room, when waiting is off,
   * or when MAX_ROOM_WAITERS writes already wait.
   */
  roomToApply(): Promise<boolean> {
    if (!this.backlogged()) return Promise.resolve(true);
    const ms = this.limits.maxQueueMs ?? 0;
    if (ms <= 0 || this.roomWaiters.size >= MAX_ROOM_WAITERS) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (room: boolean) => {
        clearTimeout(timer);
        this.roomWaiters.delete(wake);
        resolve(room);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.roomWaiters.add(wake);
    });
  }

  /** Writes waiting in `roomToApply` now (for /state). */
  get queued(): number {
    return this.roomWaiters.size;
  }

  private backlogged(): boolean {
    return this.pendingRecords >= this.recordLimit();
  }

  /** `maxPendingRecords`, or NEAR_PRESSURE_RECORDS when a heap nears its pressure share. */
  private recordLimit(): number {
    const share = this.limits.memoryPressureShare ?? 0;
    if (share <= 0) return this.limits.maxPendingRecords;
    let highest = Math.max(heapShare(), this.residentShare());
    for (const s of this.heaps.values()) if (s > highest) highest = s;
    return highest >= share * NEAR_PRESSURE ? Math.min(this.limits.maxPendingRecords, NEAR_PRESSURE_RECORDS) : this.limits.maxPendingRecords;
  }

  /** Notes how full a thread's heap is (a shard worker reports it with what it applied). */
  heapOf(thread: string, share: number): void {
    this.heaps.set(thread, share);
  }

  /**
   * Why writes are refused for memory, or null: the process's resident memory above its share of
   * `memoryLimitBytes`, or a heap (a shard worker's, as last reported, or this thread's) above
   * its share of the heap's limit. A node holding more series than its memory allows keeps
   * answering reads and sheds writes, rather than ending out of memory.
   */
  memoryPressure(): string | null {
    const limit = this.limits.memoryPressureShare ?? 0;
    if (limit <= 0) return null;
    const resident = this.residentShare();
    if (resident > limit) return `memory pressure: the node's resident memory is ${mib(this.resident.current)} MiB, ${Math.round(resident * 100)} % of its ${mib(this.limits.memoryLimitBytes!)} MiB (memoryLimitMb), ${overShare(limit)} — set series limits, add nodes, or give it more memory`;
    const main = heapShare();
    const [thread, share] = main > limit ? ['the main thread', main] : ([...this.heaps].find(([, s]) => s > limit) ?? [null, 0]);
    if (thread === null) return null;
    return `memory pressure: ${thread}'s heap is ${Math.round(share * 100)} % of its limit, ${overShare(limit)} — raise the heap (shardHeapMb), set series limits, or add nodes`;
  }

  /** The process's resident memory as a share of `memoryLimitBytes` (0 when that is not set). */
  private residentShare(): number {
    const limit = this.limits.memoryLimitBytes ?? 0;
    return limit > 0 ? this.resident.current / limit : 0;
  }

  release(bytes: number): void {
    this.bytes -= bytes;
    this.writes--;
  }

  dispatched(records: number): void {
    this.pendingRecords += records;
  }

  applied(records: number): void {
    this.pendingRecords -= records;
    if (this.roomWaiters.size > 0 && !this.backlogged()) for (const wake of [...this.roomWaiters]) wake();
  }

  report(): { bytes_in_flight: number; records_pending_apply: number; writes_queued: number; refused: number; write_p99_ms: number; write_latency_budget_ms: number; heap_shares: Record<string, number>; resident_mb: number; memory_limit_mb: number; memory_pressure: string | null } {
    return {
      bytes_in_flight: this.bytes,
      records_pending_apply: this.pendingRecords,
      writes_queued: this.roomWaiters.size,
      refused: this.refused,
      write_p99_ms: this.recentP99(),
      write_latency_budget_ms: this.limits.latencyBudgetMs,
      heap_shares: { main: heapShare(), ...Object.fromEntries(this.heaps) },
      resident_mb: mib(this.resident.current),
      memory_limit_mb: mib(this.limits.memoryLimitBytes ?? 0),
      memory_pressure: this.memoryPressure(),
    };
  }

  private refuse(why: string): string {
    this.refused++;
    return why;
  }
}

/** The part of a memory-pressure refusal both kinds share (built only when a write is refused: `admit` asks every write). */
const overShare = (limit: number): string => `over ${Math.round(limit * 100)} % (memoryPressureShare); the node holds more series than its memory allows`;
