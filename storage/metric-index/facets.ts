// tag_cats and tag_vals from the index: which stream-tag categories (or values of one
// category) a set of matches carries. Each category's posting lists are checked against a
// bitset of the matches, stopping at a term's first hit; a small set of matches is instead
// read name by name, which is cheaper than walking large categories.
import type { AccountIndex, MetricIndex } from './metric-index.js';
import { splitCanonical } from '../../model/metric-name.js';
import { NO_VALUE, type TermDictionary } from './term-dictionary.js';

/** Categories of the synthetic tags, which tag_cats and tag_vals (without `__name`) leave out. */
const SYNTHETIC = new Set(['__name', '__check_uuid']);
/** Reading one name costs about as much as this many posting entries. */
const NAME_COST = 300;

/** The categories (canonical spelling) of the stream tags of `ids`. */
export function categoriesOf(index: MetricIndex, account: AccountIndex, ids: readonly number[]): Set<string> {
  const out = new Set<string>();
  const dicts = [...account.categories].filter(([c]) => !SYNTHETIC.has(c));
  if (byName(ids, dicts)) {
    for (const id of ids) for (const t of splitCanonical(index.canonicalOf(id)).tags) out.add(t.category);
    return out;
  }
  const bits = bitsOf(ids, index.bound);
  for (const [category, dict] of dicts) {
    for (const term of dict.all()) {
      if (!anyIn(term.ids.view(), bits)) continue;
      out.add(dict.spelling ?? category);
      break;
    }
  }
  return out;
}

/** The values (canonical spelling) of `category` among `ids`, or of every stream tag when undefined; `__name` gives names. */
export function valuesOf(index: MetricIndex, account: AccountIndex, ids: readonly number[], category: string | undefined): Set<string> {
  const out = new Set<string>();
  const dicts = [...account.categories].filter(([c, d]) => (category === undefined ? !SYNTHETIC.has(c) : category === '__name' ? c === '__name' : !SYNTHETIC.has(c) && (d.spelling ?? c) === category));
  if (byName(ids, dicts)) {
    for (const id of ids) {
      const split = splitCanonical(index.canonicalOf(id));
      if (category === '__name') out.add(split.name);
      else for (const t of split.tags) if ((category === undefined || t.category === category) && t.value !== null) out.add(t.value);
    }
    return out;
  }
  const bits = bitsOf(ids, index.bound);
  for (const [, dict] of dicts) {
    for (const term of dict.all()) {
      if (term.text === NO_VALUE || !anyIn(term.ids.view(), bits)) continue;
      out.add(term.spelling ?? term.text);
    }
  }
  return out;
}

/** True when reading the names of `ids` costs less than walking the categories' postings. */
function byName(ids: readonly number[], dicts: [string, TermDictionary][]): boolean {
  let postings = 0;
  for (const [, dict] of dicts) postings += dict.postings;
  return ids.length * NAME_COST < postings;
}

function bitsOf(ids: readonly number[], bound: number): Uint32Array {
  const bits = new Uint32Array((bound >>> 5) + 1);
  for (const id of ids) bits[id >>> 5]! |= 1 << (id & 31);
  return bits;
}

function anyIn(list: Uint32Array, bits: Uint32Array): boolean {
  for (let i = 0; i < list.length; i++) if ((bits[list[i]! >>> 5]! & (1 << (list[i]! & 31))) !== 0) return true;
  return false;
}
