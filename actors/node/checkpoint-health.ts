// Whether checkpoints (sealing, rollups, journal truncation) are succeeding. A checkpoint
// that keeps failing must not loop silently every second: it is logged once with its
// context, shown in /state, and while it lasts the node refuses writes (503), because
// buffers it cannot seal and a journal it cannot truncate only grow.
import type { Logger } from 'pino';
import { ferr } from '../../model/errors.js';

export interface CheckpointReport {
  failing: boolean;
  /** Epoch ms of the first failure of the current run of failures (null when healthy). */
  failing_since: number | null;
  /** Consecutive failed checkpoints. */
  failures: number;
  last_error: string | null;
  /** Epoch ms of the last checkpoint that succeeded (null: none yet). */
  last_success: number | null;
  /** Seconds the checkpoint in progress has been running (0: none running). */
  running_for: number;
}

export class CheckpointHealth {
  private failingSince: number | null = null;
  private failures = 0;
  private lastError: string | null = null;
  private lastSuccess: number | null = null;
  private runningSince: number | null = null;

  constructor(private readonly log: Logger) {}

  get failing(): boolean {
    return this.failingSince !== null;
  }

  started(): void {
    this.runningSince = Date.now();
  }

  failed(error: unknown, context: Record<string, unknown>): void {
    this.runningSince = null;
    this.failures++;
    this.lastError = error instanceof Error ? error.message : String(error);
    if (this.failingSince !== null) return; // already reported; /state counts the repeats
    this.failingSince = Date.now();
    this.log.error({ err: error, ...context }, 'checkpoint failed; refusing writes until a checkpoint succeeds (see /state "checkpoint")');
  }

  succeeded(): void {
    this.runningSince = null;
    this.lastSuccess = Date.now();
    if (this.failingSince === null) return;
    this.log.warn({ failures: this.failures, failingForMs: this.lastSuccess - this.failingSince }, 'checkpoint recovered; accepting writes again');
    this.failingSince = null;
    this.failures = 0;
    this.lastError = null;
  }

  /** Throws the 503 a write gets while checkpoints fail. */
  checkWritable(): void {
    if (this.failingSince !== null) throw ferr('FER_ERR_CHECKPOINT_FAILING', this.lastError);
  }

  report(): CheckpointReport {
    const runningFor = this.runningSince === null ? 0 : (Date.now() - this.runningSince) / 1000;
    return { failing: this.failing, failing_since: this.failingSince, failures: this.failures, last_error: this.lastError, last_success: this.lastSuccess, running_for: runningFor };
  }
}
