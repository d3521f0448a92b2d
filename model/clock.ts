// Time as the node reads it for timeouts that tests would otherwise wait out in real time
// (gossip presuming a silent peer down after 8 s). Production uses the system clock; a node
// started with `testClock` gets one a test moves forward over HTTP (`POST /admin/test-clock`).

export interface Clock {
  /** Epoch ms. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The system clock plus an offset that only grows. */
export class AdjustableClock implements Clock {
  private offset = 0;

  now(): number {
    return Date.now() + this.offset;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a clock only moves forward: ${ms}`);
    this.offset += ms;
  }
}
