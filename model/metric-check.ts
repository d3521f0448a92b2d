// A check as the metrics of a large table share it: one object per check, kept by number, instead
// of an account, a uuid and a check name in every metric (a worker holds a million metrics and a
// check has many: issue 30).
import { ownString } from './own-string.js';
import type { AccountId } from './types.js';

export interface MetricCheck {
  readonly accountId: AccountId;
  readonly uuid: string;
  readonly checkName: string;
}

/** Each check kept once, numbered 0, 1, … in the order first asked for. */
export class CheckTable {
  private readonly numbers = new Map<string, number>();
  private readonly checks: MetricCheck[] = [];
  /** The number asked for last: metrics come check by check, and most asks need no key string. */
  private last = -1;

  of(accountId: AccountId, uuid: string, checkName: string): MetricCheck {
    return this.checks[this.numberOf(accountId, uuid, checkName)]!;
  }

  /** The check numbered `n` (from `numberOf`). */
  at(n: number): MetricCheck {
    return this.checks[n]!;
  }

  numberOf(accountId: AccountId, uuid: string, checkName: string): number {
    const last = this.last < 0 ? null : this.checks[this.last]!;
    if (last !== null && last.accountId === accountId && last.uuid === uuid && last.checkName === checkName) return this.last;
    return (this.last = this.lookup(accountId, uuid, checkName));
  }

  private lookup(accountId: AccountId, uuid: string, checkName: string): number {
    const key = `${accountId}\u0000${uuid}\u0000${checkName}`;
    let n = this.numbers.get(key);
    if (n === undefined) {
      n = this.checks.length;
      // Copies of their own: texts cut from a request body would keep the body alive.
      this.checks.push({ accountId, uuid: ownString(uuid), checkName: ownString(checkName) });
      this.numbers.set(key, n);
    }
    return n;
  }
}
