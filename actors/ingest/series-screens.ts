// What a parse worker remembers of series limits per series (actors/node/series-limits.ts):
// the generation the node admitted each series in, the generation it refused it in and why,
// and the last body that listed it. Kept by sid in typed columns, made the first time limits
// are in force, so a worker of a million series pays nothing for them unless they are on
// (they were four fields of every WorkerMetric: issue 30).
import { grown } from '../../model/typed-arrays.js';

const NEVER = -1;

export class SeriesScreens {
  private admittedIn = new Int32Array(0);
  private refusedIn = new Int32Array(0);
  private stamps = new Float64Array(0);
  private readonly reasons = new Map<number, string>();

  admitted(sid: number): number {
    return sid < this.admittedIn.length ? this.admittedIn[sid]! : NEVER;
  }

  refused(sid: number): number {
    return sid < this.refusedIn.length ? this.refusedIn[sid]! : NEVER;
  }

  /** Why the node refused `sid` (in the generation `refused` gives). */
  reason(sid: number): string {
    return this.reasons.get(sid) ?? '';
  }

  admit(sid: number, generation: number): void {
    this.room(sid);
    this.admittedIn[sid] = generation;
  }

  refuse(sid: number, generation: number, why: string): void {
    this.room(sid);
    this.refusedIn[sid] = generation;
    this.reasons.set(sid, why);
  }

  /** Stamps `sid` with body `stamp`; false when it already was (each series is listed once a body). */
  stamp(sid: number, stamp: number): boolean {
    this.room(sid);
    if (this.stamps[sid] === stamp) return false;
    this.stamps[sid] = stamp;
    return true;
  }

  private room(sid: number): void {
    if (sid < this.admittedIn.length) return;
    const n = Math.max(1024, this.admittedIn.length * 2, sid + 1);
    this.admittedIn = grown(this.admittedIn, n, NEVER);
    this.refusedIn = grown(this.refusedIn, n, NEVER);
    this.stamps = grown(this.stamps, n, NEVER);
  }
}
