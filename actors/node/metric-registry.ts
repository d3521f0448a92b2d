// Resolves submitted (check field, metric name) pairs to metrics, once each: parsing,
// canonicalising and hashing happen on a metric's first sample, later samples hit a map.
import { checkNameProblem, parseCheckField } from '../../model/check-field.js';
import type { MetricResolution } from '../../model/ingest-record.js';
import { canonicalizeMetricName } from '../../model/metric-name.js';
import { ownString } from '../../model/own-string.js';
import { metricKey, placeMetric } from '../../model/metric-key.js';
import type { AccountId, MetricKey } from '../../model/types.js';
import { newMetricInfo, type MetricInfo } from '../../model/metric-info.js';

/** Bound on cached (field, name) spellings; past it the cache starts over. */
const MAX_SPELLINGS = 1_000_000;
/**
 * Bound on the descriptions of metrics reads name (a dashboard asks for the same streams again
 * and again: their names are parsed and hashed once); past it the cache starts over.
 */
const MAX_DESCRIBED = 100_000;

export class MetricRegistry {
  private readonly byKey = new Map<MetricKey, MetricInfo>();
  private spellings = new Map<string, MetricResolution<MetricInfo>>();
  /** Resolver spellings: (account NUL check field) → name → resolution. */
  private byCheck = new Map<string, Map<string, MetricResolution<MetricInfo>>>();
  private checkSpellings = 0;
  /** Reads' metrics by `uuid NUL name` (see `lookup`). */
  private described = new Map<string, MetricResolution<MetricInfo>>();

  constructor(private readonly partitions: number) {}

  /**
   * A resolver for one request; `headerAccount` lets bare uuids through. Spellings are
   * cached per (account, check field), then per name, and the resolver remembers the last
   * check field, so a line of a known metric costs one lookup of its name.
   */
  resolver(headerAccount: AccountId | null): (checkField: string, name: string) => MetricResolution<MetricInfo> {
    let lastCheck: string | null = null;
    let names = new Map<string, MetricResolution<MetricInfo>>();
    return (checkField, name) => {
      if (checkField !== lastCheck) {
        lastCheck = checkField;
        const key = `${headerAccount ?? ''}\u0000${checkField}`;
        let found = this.byCheck.get(key);
        if (found === undefined) this.byCheck.set(key, (found = new Map()));
        names = found;
      }
      let hit = names.get(name);
      if (hit === undefined) {
        const own = ownString(name);
        hit = this.resolveUncached(ownString(checkField), own, headerAccount);
        if (++this.checkSpellings > MAX_SPELLINGS) this.forgetSpellings();
        names.set(own, hit);
      }
      return hit;
    };
  }

  private forgetSpellings(): void {
    this.byCheck = new Map();
    this.spellings = new Map();
    this.checkSpellings = 0;
  }

  /** An interned spelling's resolution, computed once. */
  private cached(spelling: string, resolve: () => MetricResolution<MetricInfo>): MetricResolution<MetricInfo> {
    let hit = this.spellings.get(spelling);
    if (hit === undefined) {
      hit = resolve();
      if (this.spellings.size >= MAX_SPELLINGS) this.spellings = new Map();
      this.spellings.set(spelling, hit);
    }
    return hit;
  }

  /** The metric with this uuid and (already canonical) name, creating its info if new. */
  intern(accountId: AccountId, uuid: string, checkName: string, canonical: string): MetricResolution<MetricInfo> {
    return this.cached(`${accountId}\u0001${uuid}\u0000${checkName}\u0000${canonical}`, () => this.internUncached(accountId, uuid, checkName, canonical));
  }

  private internUncached(accountId: AccountId, uuid: string, checkName: string, canonical: string): MetricResolution<MetricInfo> {
    const tooLong = checkNameProblem(checkName);
    if (tooLong !== null) return { ok: false, reason: tooLong };
    const parsed = canonicalizeMetricName(canonical);
    if (!parsed.ok) return parsed;
    const key = metricKey(uuid, parsed.value.canonical);
    let info = this.byKey.get(key);
    if (info === undefined) {
      const { id, idHex, partition } = placeMetric(key, this.partitions);
      info = newMetricInfo({ key, accountId, uuid, checkName, name: parsed.value }, id, idHex, partition);
      this.byKey.set(key, info);
    }
    return { ok: true, metric: info };
  }

  /**
   * A metric an ingest worker already canonicalised and placed (actors/ingest/pool.ts):
   * interned by its key without repeating that work.
   */
  adopt(m: Omit<MetricInfo, 'id' | 'indexId' | 'unsealed' | 'openHead' | 'lastSlice' | 'newestSealedS'>): MetricInfo {
    let info = this.byKey.get(m.key);
    if (info === undefined) {
      info = newMetricInfo(m, Buffer.from(m.idHex, 'hex'), m.idHex, m.partition);
      this.byKey.set(m.key, info);
    }
    return info;
  }

  /**
   * The metric a read names. Reads carry no account, so a metric not yet interned is
   * described without being remembered (its account is whatever ingest says).
   */
  lookup(uuid: string, name: string): MetricResolution<MetricInfo> {
    const spelling = `${uuid}\u0000${name}`;
    let described = this.described.get(spelling);
    if (described === undefined) {
      described = this.describe(uuid, name);
      if (this.described.size >= MAX_DESCRIBED) this.described = new Map();
      this.described.set(spelling, described);
    }
    if (!described.ok) return described;
    const known = this.byKey.get(described.metric.key);
    return known !== undefined ? { ok: true, metric: known } : described;
  }

  /** A metric named by a read, described (parsed, keyed and placed) without being remembered as interned. */
  private describe(uuid: string, name: string): MetricResolution<MetricInfo> {
    const parsed = canonicalizeMetricName(name);
    if (!parsed.ok) return parsed;
    const key = metricKey(uuid, parsed.value.canonical);
    const { id, idHex, partition } = placeMetric(key, this.partitions);
    const accountId = 0 as AccountId;
    return { ok: true, metric: newMetricInfo({ key, accountId, uuid, checkName: '', name: parsed.value }, id, idHex, partition) };
  }

  private resolveUncached(checkField: string, name: string, headerAccount: AccountId | null): MetricResolution<MetricInfo> {
    const check = parseCheckField(checkField, headerAccount);
    if (!check.ok) return check;
    const { accountId, uuid, checkName } = check.check;
    return this.internUncached(accountId, uuid, checkName, name);
  }
}
