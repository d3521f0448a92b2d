// How much of the machine's memory the node's process holds. A shard keeps its series in typed
// columns and arenas outside the V8 heap (issue 30), so a heap share alone no longer sees a node
// outgrowing its memory: the process's resident set, against what the machine (or the container's
// cgroup) gives it, does.
import { totalmem } from 'node:os';

const MIB = 2 ** 20;

/**
 * The memory the process may use, in bytes: `configuredMb` when set, else the container's limit
 * (cgroups) when there is one below the machine's memory, else the machine's memory.
 */
export function memoryLimitBytes(configuredMb: number): number {
  if (configuredMb > 0) return configuredMb * MIB;
  const constrained = process.constrainedMemory();
  // Without a constraint Node reports 0 or the largest 64-bit number.
  return constrained > 0 && constrained < totalmem() ? constrained : totalmem();
}

/** Reading the resident set is a /proc read (≈ 12 µs): a write asks at most this often. */
const RESIDENT_EVERY_MS = 100;

/** The process's resident set in bytes, read again when the last reading is older than RESIDENT_EVERY_MS. */
export class ResidentMemory {
  private bytes = 0;
  private at = -Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  get current(): number {
    const now = this.now();
    if (now - this.at >= RESIDENT_EVERY_MS) {
      this.bytes = process.memoryUsage.rss();
      this.at = now;
    }
    return this.bytes;
  }
}

export const mib = (bytes: number): number => Math.round(bytes / MIB);
