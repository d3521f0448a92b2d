// Check tags (irondb-reference §1.5, §10; `/meta/check/tag/<check_uuid>`): tags attached to a
// check rather than to a stream, searchable on every metric of the check. IRONdb keeps them as
// a set CRDT; here each tag remembers when it was last added and last removed, and a clear
// (DELETE) when it happened. Merging two states takes the later time of each, so updates
// journaled to every node converge whatever order they arrive in, and applying one twice
// changes nothing. A tag is present when its last add is later than its last removal and
// than the last clear; an add and a remove in the same update leave it removed.
import { ownValue, setOwn } from './lookup-table.js';
import { parseStreamTag, RESERVED_CATEGORIES, tagText, type StreamTag } from './metric-name.js';

/** An account id, or null for tags set without one (they apply in every account). */
export type CheckTagScope = number | null;

export interface CheckTagState {
  /** tag text (`cat:value` as canonicalised) → [last added, last removed] stamps, 0 = never. */
  tags: Record<string, [number, number]>;
  /** Stamp of the last clear (0 = never). */
  cleared: number;
}

/** One change, stamped by the node that received it. */
export interface CheckTagUpdate {
  stamp: number;
  add: string[];
  remove: string[];
  clear: boolean;
}

export const emptyCheckTags = (): CheckTagState => ({ tags: {}, cleared: 0 });

export function applyCheckTagUpdate(state: CheckTagState, u: CheckTagUpdate): CheckTagState {
  const tags = { ...state.tags };
  const touch = (tag: string, slot: 0 | 1) => {
    // Own properties only: a tag `toString` or `__proto__` is a tag like any other.
    const [added, removed] = ownValue(tags, tag) ?? [0, 0];
    setOwn(tags, tag, slot === 0 ? [Math.max(added, u.stamp), removed] : [added, Math.max(removed, u.stamp)]);
  };
  for (const tag of u.add) touch(tag, 0);
  for (const tag of u.remove) touch(tag, 1);
  return { tags, cleared: u.clear ? Math.max(state.cleared, u.stamp) : state.cleared };
}

/**
 * Updates that rebuild `state` when applied to an empty one (or merge it into any other, the
 * merge being per-slot maxima): one per distinct stamp. How a whole state travels as journal
 * messages, e.g. to a node joining in a rebalance.
 */
export function updatesOf(state: CheckTagState): CheckTagUpdate[] {
  const byStamp = new Map<number, CheckTagUpdate>();
  const at = (stamp: number) => {
    let u = byStamp.get(stamp);
    if (u === undefined) byStamp.set(stamp, (u = { stamp, add: [], remove: [], clear: false }));
    return u;
  };
  for (const [tag, [added, removed]] of Object.entries(state.tags)) {
    if (added > 0) at(added).add.push(tag);
    if (removed > 0) at(removed).remove.push(tag);
  }
  if (state.cleared > 0) at(state.cleared).clear = true;
  return [...byStamp.values()].sort((a, b) => a.stamp - b.stamp);
}

/** The present tags, sorted by category then value. */
export function presentCheckTags(state: CheckTagState): string[] {
  return Object.entries(state.tags)
    .filter(([, [added, removed]]) => added > removed && added > state.cleared)
    .map(([tag]) => tag)
    .sort();
}

/** A stamp later than everything `state` has seen, and not before `now`: a node's updates stay in order. */
export function nextStamp(state: CheckTagState, now: number): number {
  let latest = state.cleared;
  for (const [added, removed] of Object.values(state.tags)) latest = Math.max(latest, added, removed);
  return Math.max(now, latest + 1);
}

export type CheckTagParse = { ok: true; tags: string[] } | { ok: false; reason: string };

/**
 * Submitted tags in canonical text (as stream tags are: `b"…"` decoded when legal). Empty
 * strings are skipped (gosnowth sends none, but drops them too); the reserved synthetic
 * categories are ignored, as IRONdb does since 0.23.2.
 */
export function parseCheckTags(raw: readonly string[]): CheckTagParse {
  const out: string[] = [];
  for (const text of raw) {
    if (text === '') continue;
    const parsed = parseStreamTag(text);
    if (!parsed.ok) {
      const category = text.split(':', 1)[0]!;
      if (RESERVED_CATEGORIES.has(category)) continue;
      return { ok: false, reason: `check tag ${JSON.stringify(text)}: ${parsed.reason.replace('stream tag', 'tag')}` };
    }
    out.push(tagText(parsed.tag));
  }
  return { ok: true, tags: out };
}

/** A canonical tag text back as a tag (split on the first colon). */
export function checkTagOf(text: string): StreamTag {
  const colon = text.indexOf(':');
  return colon === -1 ? { category: text, value: null } : { category: text.slice(0, colon), value: text.slice(colon + 1) };
}
