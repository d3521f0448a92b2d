// Where check tags live (model/check-tags): one `index` key per (scope, check uuid). Updates
// to one key are serialised here, so two requests never lose each other's change, and each
// scope's present tags are cached until that scope is written.
import { applyCheckTagUpdate, emptyCheckTags, presentCheckTags, type CheckTagScope, type CheckTagState, type CheckTagUpdate } from '../model/check-tags.js';
import { checkTagsKey, checkTagsPrefix, CF, CHECK_TAGS_RANGE, prefixEnd } from './keys.js';
import type { Store, StoreBatch } from './rocks.js';

const scopeText = (scope: CheckTagScope) => (scope === null ? '*' : String(scope));

export class CheckTagStore {
  private readonly queues = new Map<string, Promise<unknown>>();
  /** scope text → check uuid → present tags. */
  private readonly present = new Map<string, Map<string, string[]>>();
  /** Counts writes, so a scan that overlapped one is not cached. */
  private writes = 0;

  constructor(private readonly store: Store) {}

  async get(scope: CheckTagScope, uuid: string): Promise<CheckTagState> {
    const raw = await this.store.get(CF.index, checkTagsKey(scopeText(scope), uuid));
    return raw === null ? emptyCheckTags() : (JSON.parse(raw.toString('utf8')) as CheckTagState);
  }

  /**
   * Applies the update `make` builds from the current state (one at a time per key) and
   * returns the new state; `extend` may add to the same batch (the cluster journal's outbox).
   */
  update(scope: CheckTagScope, uuid: string, make: (current: CheckTagState) => CheckTagUpdate, extend?: (batch: StoreBatch, update: CheckTagUpdate) => void): Promise<CheckTagState> {
    const key = `${scopeText(scope)}\u0000${uuid}`;
    const run = (this.queues.get(key) ?? Promise.resolve()).then(async () => {
      const current = await this.get(scope, uuid);
      const update = make(current);
      const next = applyCheckTagUpdate(current, update);
      const batch = this.store.batch().put(CF.index, checkTagsKey(scopeText(scope), uuid), Buffer.from(JSON.stringify(next)));
      try {
        extend?.(batch, update);
      } catch (error) {
        batch.discard(); // an unwritten batch left holding its handle would make close() wait forever
        throw error;
      }
      await batch.write();
      this.writes++;
      this.present.delete(scopeText(scope));
      return next;
    });
    const settled = run.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return run;
  }

  /** Every check's tag state in every scope (a rebalance sends them all to joining nodes). */
  async *all(): AsyncGenerator<{ scope: CheckTagScope; uuid: string; state: CheckTagState }> {
    for await (const { key, value } of this.store.scan(CF.index, CHECK_TAGS_RANGE)) {
      const rest = key.subarray(1).toString('utf8');
      const cut = rest.indexOf('\u0000');
      const scope = rest.slice(0, cut);
      yield { scope: scope === '*' ? null : Number(scope), uuid: rest.slice(cut + 1), state: JSON.parse(value.toString('utf8')) as CheckTagState };
    }
  }

  /** Present tags of every check with any, in `scope`. */
  async presentIn(scope: CheckTagScope): Promise<ReadonlyMap<string, string[]>> {
    const text = scopeText(scope);
    const cached = this.present.get(text);
    if (cached !== undefined) return cached;
    const writesBefore = this.writes;
    const prefix = checkTagsPrefix(text);
    const out = new Map<string, string[]>();
    for await (const { key, value } of this.store.scan(CF.index, { gte: prefix, lt: prefixEnd(prefix) })) {
      const tags = presentCheckTags(JSON.parse(value.toString('utf8')) as CheckTagState);
      if (tags.length > 0) out.set(key.subarray(prefix.length).toString('utf8'), tags);
    }
    if (this.writes === writesBefore) this.present.set(text, out);
    return out;
  }

  /** The tags every metric of `uuid` in `account` carries: unscoped ones and the account's own. */
  async forAccount(account: number): Promise<ReadonlyMap<string, string[]>> {
    const [everywhere, own] = await Promise.all([this.presentIn(null), this.presentIn(account)]);
    if (everywhere.size === 0) return own;
    if (own.size === 0) return everywhere;
    const merged = new Map(everywhere);
    for (const [uuid, tags] of own) merged.set(uuid, [...new Set([...(merged.get(uuid) ?? []), ...tags])].sort());
    return merged;
  }
}
