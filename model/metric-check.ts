// A check as the metrics of a large table share it: one object per check instead of an
// account, a uuid and a check name in every metric (a worker holds a million metrics and a
// check has many: issue 30).
import { ownString } from './own-string.js';
import type { AccountId } from './types.js';

export interface MetricCheck {
  readonly accountId: AccountId;
  readonly uuid: string;
  readonly checkName: string;
}

/** Each check kept once. */
export class CheckTable {
  private readonly checks = new Map<string, MetricCheck>();
  /** The check asked for last: metrics come check by check, and most asks need no key string. */
  private last: MetricCheck | null = null;

  of(accountId: AccountId, uuid: string, checkName: string): MetricCheck {
    const last = this.last;
    if (last !== null && last.accountId === accountId && last.uuid === uuid && last.checkName === checkName) return last;
    return (this.last = this.lookup(accountId, uuid, checkName));
  }

  private lookup(accountId: AccountId, uuid: string, checkName: string): MetricCheck {
    const key = `${accountId}\u0000${uuid}\u0000${checkName}`;
    let check = this.checks.get(key);
    // Copies of their own: texts cut from a request body would keep the body alive.
    if (check === undefined) this.checks.set(key, (check = { accountId, uuid: ownString(uuid), checkName: ownString(checkName) }));
    return check;
  }
}

/** A metric whose check fields are its shared check's. */
export abstract class CheckedMetric {
  constructor(private readonly check: MetricCheck) {}

  get accountId(): AccountId {
    return this.check.accountId;
  }

  get uuid(): string {
    return this.check.uuid;
  }

  get checkName(): string {
    return this.check.checkName;
  }
}
