// Series limits (cardinality control): at most `maxSeriesPerAccount` series per account and
// `maxSeriesPerCheck` per check uuid on this node. Series live in the shards, each counting
// its own (storage/metric-index); a limit holds for their sum. The node decides here, on the
// main thread, before a write is journaled, so the journal says which samples were refused
// and replay repeats exactly what was acknowledged.
//
// Exact, not split per shard: one decision at a time asks every shard which candidates it
// already holds and how many series their accounts and checks have there. Worker messages are
// taken in the order sent, so a shard's answer counts every write handed to it before the
// question; series admitted but not yet handed over are added from `unsent`. A series is a
// candidate only until admitted once (parse lanes and `marks` remember the verdict per
// generation), so a write of known series costs nothing here.
import type { MetricIdentity, MetricResolution } from '../../model/ingest-record.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { MetricKey } from '../../model/types.js';
import type { CheckSeries } from '../../storage/metric-index/metric-index.js';
import { SerialQueue } from '../shard/serial-queue.js';
import type { SeriesCandidate } from '../ingest/wire.js';
import type { ShardSet } from './shards.js';

/** What became of one decision's candidates. */
export interface Admission {
  /** Candidates refused: key → the reason, naming the limit. */
  readonly refused: ReadonlyMap<string, string>;
  /** Call once the admitted series' samples are handed to their shards, or never will be. */
  release(): void;
}

const NOTHING: Admission = { refused: new Map(), release: () => {} };

type Candidate = Omit<SeriesCandidate, 'sid'>;

/** A series admitted and not yet handed to its shard. */
interface Unsent {
  accountId: number;
  uuid: string;
}

/** A main-thread metric's verdict, by generation. */
interface Mark {
  admitted: number;
  refused: number;
  refusal: MetricResolution<MetricInfo> | null;
}

/** For /state: series per account and the checks with the most series. */
export interface SeriesFigures {
  limits: { max_series_per_account: number; max_series_per_check: number };
  total: number;
  /** Accounts holding series; `by_account` lists the ACCOUNTS_LISTED with the most. */
  accounts: number;
  by_account: { account: number; series: number }[];
  top_checks: { uuid: string; account: number; check_name: string; series: number }[];
  /** Series refused since start (each counted once per generation). */
  refused_series: number;
}

/** Checks listed in /state's `top_checks`, accounts in its `by_account`. */
const TOP_CHECKS = 20;
const ACCOUNTS_LISTED = 100;

export class SeriesLimits {
  readonly enabled: boolean;
  /** Bumped when series are removed: verdicts of earlier generations no longer hold. */
  private gen = 0;
  private readonly queue = new SerialQueue();
  private readonly unsent = new Map<MetricKey, Unsent>();
  private readonly unsentByAccount = new Map<number, number>();
  private readonly unsentByCheck = new Map<string, number>();
  private readonly marks = new WeakMap<MetricIdentity, Mark>();
  private refusedSeries = 0;

  constructor(
    readonly perAccount: number,
    readonly perCheck: number,
    private readonly shards: ShardSet,
  ) {
    this.enabled = perAccount > 0 || perCheck > 0;
  }

  get generation(): number {
    return this.gen;
  }

  /** A series was removed (full delete): a refused series may fit now, an admitted one may be gone. */
  removed(): void {
    this.gen++;
  }

  /** Decides about `candidates` (series not admitted in this generation), one decision at a time. */
  admit(candidates: readonly Candidate[]): Promise<Admission> {
    if (!this.enabled || candidates.length === 0) return Promise.resolve(NOTHING);
    return this.queue.run(() => this.decide(candidates));
  }

  private async decide(candidates: readonly Candidate[]): Promise<Admission> {
    const asked = distinct(candidates).filter((c) => !this.unsent.has(c.key));
    if (asked.length === 0) return NOTHING;
    const accounts = [...new Set(asked.map((c) => c.accountId as number))];
    const checks = [...new Set(asked.map((c) => c.uuid))];
    // Read with the questions sent: what is handed over from now on is not in the answers.
    const accountTotals = new Map(accounts.map((a) => [a, this.unsentByAccount.get(a) ?? 0]));
    const checkTotals = new Map(checks.map((u) => [u, this.unsentByCheck.get(u) ?? 0]));
    const byShard = this.shards.byShard(asked, (c) => c.partition);
    const answers = await Promise.all(
      Array.from({ length: this.shards.count }, async (_, n) => {
        const mine = byShard.get(n) ?? [];
        const a = await this.shards.askShard(n, 'seriesAdmission', { ids: mine.map((c) => c.idHex), accounts, checks });
        return { mine, a };
      }),
    );
    const fresh: Candidate[] = [];
    for (const { mine, a } of answers) {
      accounts.forEach((acc, i) => accountTotals.set(acc, accountTotals.get(acc)! + a.accounts[i]!));
      checks.forEach((u, i) => checkTotals.set(u, checkTotals.get(u)! + a.checks[i]!));
      mine.forEach((c, i) => !a.known[i] && fresh.push(c));
    }
    // In the order the body named them, so which series get in is repeatable.
    const order = new Map(asked.map((c, i) => [c.key, i]));
    fresh.sort((x, y) => order.get(x.key)! - order.get(y.key)!);
    const refused = new Map<string, string>();
    const admitted: MetricKey[] = [];
    for (const c of fresh) {
      const inAccount = accountTotals.get(c.accountId)!;
      const inCheck = checkTotals.get(c.uuid)!;
      const why = this.refusal(c, inAccount, inCheck);
      if (why !== null) {
        refused.set(c.key, why);
        continue;
      }
      accountTotals.set(c.accountId, inAccount + 1);
      checkTotals.set(c.uuid, inCheck + 1);
      this.hold(c);
      admitted.push(c.key);
    }
    this.refusedSeries += refused.size;
    let released = false;
    return {
      refused,
      release: () => {
        if (released) return;
        released = true;
        for (const key of admitted) this.handedOver(key);
      },
    };
  }

  private refusal(c: Candidate, inAccount: number, inCheck: number): string | null {
    if (this.perAccount > 0 && inAccount >= this.perAccount) return `series limit: account ${c.accountId} has ${inAccount} series (maxSeriesPerAccount ${this.perAccount}); samples of its existing series are accepted`;
    if (this.perCheck > 0 && inCheck >= this.perCheck) return `series limit: check ${c.uuid} has ${inCheck} series (maxSeriesPerCheck ${this.perCheck}); samples of its existing series are accepted`;
    return null;
  }

  private hold(c: Candidate): void {
    this.unsent.set(c.key, { accountId: c.accountId, uuid: c.uuid });
    this.unsentByAccount.set(c.accountId, (this.unsentByAccount.get(c.accountId) ?? 0) + 1);
    this.unsentByCheck.set(c.uuid, (this.unsentByCheck.get(c.uuid) ?? 0) + 1);
  }

  private handedOver(key: MetricKey): void {
    const u = this.unsent.get(key);
    if (u === undefined) return;
    this.unsent.delete(key);
    decrement(this.unsentByAccount, u.accountId);
    decrement(this.unsentByCheck, u.uuid);
  }

  /** A screen for metrics resolved on the main thread, remembering verdicts in `marks`. */
  screen(refuse: ReadonlyMap<string, string> | null = null): MainScreen {
    return new MainScreen(this.gen, this.marks, refuse);
  }

  /** Series per account and the top checks, summed over the shards (exact counts). */
  async figures(): Promise<SeriesFigures> {
    const reports = await this.shards.askAll('seriesReport', TOP_CHECKS * 2);
    const byAccount = new Map<number, number>();
    for (const r of reports) for (const [a, n] of r.accounts) byAccount.set(a, (byAccount.get(a) ?? 0) + n);
    // Each shard's top checks name the candidates; their counts are then summed over every shard.
    const named = new Map<string, CheckSeries>();
    for (const r of reports) for (const c of r.checks) if (!named.has(c.uuid)) named.set(c.uuid, c);
    const uuids = [...named.keys()];
    const counts = await this.shards.askAll('seriesAdmission', { ids: [], accounts: [], checks: uuids });
    const top = uuids
      .map((uuid, i) => ({ uuid, account: named.get(uuid)!.account, check_name: named.get(uuid)!.checkName, series: counts.reduce((n, a) => n + a.checks[i]!, 0) }))
      .sort((a, b) => b.series - a.series || (a.uuid < b.uuid ? -1 : 1))
      .slice(0, TOP_CHECKS);
    const accounts = [...byAccount].map(([account, series]) => ({ account, series })).sort((a, b) => b.series - a.series || a.account - b.account);
    return {
      limits: { max_series_per_account: this.perAccount, max_series_per_check: this.perCheck },
      total: accounts.reduce((n, a) => n + a.series, 0),
      accounts: accounts.length,
      by_account: accounts.slice(0, ACCOUNTS_LISTED),
      top_checks: top,
      refused_series: this.refusedSeries,
    };
  }
}

/**
 * Series limits for one body or request parsed on the main thread: a metric refused in this
 * generation (or in `refuse`) resolves to the refusal, one not yet admitted is a candidate.
 * `settle` remembers an admission's verdicts.
 */
export class MainScreen {
  readonly candidates: SeriesCandidate[] = [];
  readonly limited: string[] = [];
  private readonly listed = new Set<MetricIdentity>();
  private readonly metrics = new Map<string, MetricIdentity>();

  constructor(
    private readonly generation: number,
    private readonly marks: WeakMap<MetricIdentity, Mark>,
    private readonly refuse: ReadonlyMap<string, string> | null,
  ) {}

  readonly screen = (r: MetricResolution<MetricInfo>): MetricResolution<MetricInfo> => {
    if (!r.ok) return r;
    const m = r.metric;
    let mark = this.marks.get(m);
    if (mark === undefined) this.marks.set(m, (mark = { admitted: -1, refused: -1, refusal: null }));
    const why = mark.refused === this.generation ? null : this.refuse?.get(m.key);
    if (why !== undefined && why !== null) {
      mark.refused = this.generation;
      mark.refusal = { ok: false, reason: why };
    }
    if (mark.refused === this.generation) {
      if (!this.listed.has(m)) {
        this.listed.add(m);
        this.limited.push(m.key);
      }
      return mark.refusal!;
    }
    if (mark.admitted !== this.generation && !this.listed.has(m)) {
      this.listed.add(m);
      this.metrics.set(m.key, m);
      this.candidates.push({ sid: -1, key: m.key, accountId: m.accountId, uuid: m.uuid, idHex: m.idHex, partition: m.partition });
    }
    return r;
  };

  /** Remembers which candidates were admitted and which refused. */
  settle(admission: Admission): void {
    for (const [key, m] of this.metrics) {
      const mark = this.marks.get(m)!;
      const why = admission.refused.get(key);
      if (why === undefined) mark.admitted = this.generation;
      else {
        mark.refused = this.generation;
        mark.refusal = { ok: false, reason: why };
      }
    }
  }
}

/** A screen refusing exactly `keys` (journal replay: what was refused when the body was written). */
export function refusing(keys: readonly string[]): (r: MetricResolution<MetricInfo>) => MetricResolution<MetricInfo> {
  const set = new Set(keys);
  const refusal: MetricResolution<MetricInfo> = { ok: false, reason: 'series limit (refused when the write was acknowledged)' };
  return (r) => (r.ok && set.has(r.metric.key) ? refusal : r);
}

function distinct(candidates: readonly Candidate[]): Candidate[] {
  const seen = new Set<string>();
  return candidates.filter((c) => !seen.has(c.key) && seen.add(c.key));
}

function decrement<K>(map: Map<K, number>, key: K): void {
  const n = (map.get(key) ?? 0) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
