// Canonical metric names (irondb-reference §1.1–1.3):
//   name|ST[cat:val,...]|MT{...}  →  name|ST[sorted, deduplicated stream tags]
// Stream tags are part of a metric's identity; measurement tags are dropped.

/** One stream tag in canonical form; `value` is null for a category-only tag. */
export interface StreamTag {
  category: string;
  value: string | null;
}

export interface CanonicalName {
  /** The metric name without tags (what `__name` matches). */
  name: string;
  tags: StreamTag[];
  /** `name|ST[...]`, or just `name` when there are no stream tags. */
  canonical: string;
}

export type CanonicalResult = { ok: true; value: CanonicalName } | { ok: false; reason: string };

/** §1.1 rule 4: the full canonical name must be less than 4095 characters. */
export const MAX_CANONICAL_LENGTH = 4094;
/** §1.1 rule 5: each tag pair (category + colon + value) is limited to 256 characters. */
export const MAX_TAG_PAIR_LENGTH = 256;
/** §1.1 rule 7: synthetic tag names that may not be used as stream tag categories. */
export const RESERVED_CATEGORIES: ReadonlySet<string> = new Set(['__activity', '__check_uuid', '__name', '__type']);

// §1.2 legal characters; a value also allows ':' and '='.
const LEGAL_CATEGORY = /^[`+A-Za-z0-9!@#$%^&"'/?._-]+$/;
const LEGAL_VALUE = /^[`+A-Za-z0-9!@#$%^&"'/?._\-:=]*$/;
const BASE64_WRAPPED = /^b"([A-Za-z0-9+/]*={0,2})"$/;

const ST_OPEN = '|ST[';
const MT_OPEN = '|MT{';

/**
 * A canonical name's parts, without validating or sorting again: for names that already are
 * canonical (from a name record or a parse worker's declaration), the parse's own result.
 */
export function splitCanonical(canonical: string): CanonicalName {
  const open = canonical.indexOf(ST_OPEN);
  if (open === -1) return { name: canonical, tags: [], canonical };
  const tags = canonical
    .slice(open + ST_OPEN.length, canonical.length - 1)
    .split(',')
    .map((text): StreamTag => {
      const colon = text.indexOf(':');
      return colon === -1 ? { category: text, value: null } : { category: text.slice(0, colon), value: text.slice(colon + 1) };
    });
  return { name: canonical.slice(0, open), tags, canonical };
}

/** Canonicalises a submitted metric name, or says why it is not legal. */
export function canonicalizeMetricName(raw: string): CanonicalResult {
  return alreadyCanonical(raw) ?? canonicalized(raw);
}

/**
 * The parse of a name that is canonical as submitted — one stream tag section at its end,
 * its tags plain, legal, short and already in order (what collectors send, name after name) —
 * or null for any other name, which `canonicalized` then parses in full. Both give the same
 * result for a name this accepts (test/model-parsing.test.ts checks it on random names).
 */
export function alreadyCanonical(raw: string): { ok: true; value: CanonicalName } | null {
  return isPlainCanonical(raw) ? { ok: true, value: splitCanonical(raw) } : null;
}

/**
 * The canonical text of a submitted name, or why it is not legal: the name itself when it is
 * plainly canonical, without making its parts (a parse worker passes on the text alone, and a
 * million new series' tag objects were garbage to collect: issue 30).
 */
export function canonicalText(raw: string): { ok: true; canonical: string } | { ok: false; reason: string } {
  if (isPlainCanonical(raw)) return { ok: true, canonical: raw };
  const full = canonicalized(raw);
  return full.ok ? { ok: true, canonical: full.value.canonical } : full;
}

/** Whether `alreadyCanonical` takes the name: checked in place, nothing allocated for a plain name. */
function isPlainCanonical(raw: string): boolean {
  const open = raw.indexOf(ST_OPEN);
  if (open <= 0 || raw.length > MAX_CANONICAL_LENGTH || raw.charCodeAt(raw.length - 1) !== CLOSE_BRACKET) return false;
  if (raw.indexOf(']', open) !== raw.length - 1 || raw.includes(MT_OPEN) || raw.includes('\0')) return false;
  let before = -1; // the previous tag's start, colon (-1: none) and end
  let beforeColon = -1;
  let beforeEnd = -1;
  for (let at = open + ST_OPEN.length; at < raw.length; ) {
    let end = raw.indexOf(',', at);
    if (end === -1) end = raw.length - 1;
    const colon = plainTagColon(raw, at, end);
    if (colon === NOT_PLAIN) return false;
    if (before !== -1 && compareTagsAt(raw, before, beforeColon, beforeEnd, at, colon, end) >= 0) return false;
    before = at;
    beforeColon = colon;
    beforeEnd = end;
    at = end + 1;
  }
  return true;
}

const CLOSE_BRACKET = 93;
const COLON = 58;
const NOT_PLAIN = -2;

/** Characters (codes below 128) a plain tag's category may hold (§1.2, `"` aside: a quote means an encoded value); a value may also hold ':' and '='. */
const CATEGORY_CHARS = asciiSet("`+!@#$%^&'/?._-");
const VALUE_CHARS = asciiSet("`+!@#$%^&'/?._-:=");

function asciiSet(punctuation: string): Uint8Array {
  const set = new Uint8Array(128);
  for (const [lo, hi] of [['0', '9'], ['A', 'Z'], ['a', 'z']] as const) for (let c = lo.charCodeAt(0); c <= hi.charCodeAt(0); c++) set[c] = 1;
  for (const ch of punctuation) set[ch.charCodeAt(0)] = 1;
  return set;
}

/**
 * The tag raw[from, to) when it is stored as written (plain, legal, not reserved, short): the
 * index of its colon, or -1 when it has none; NOT_PLAIN otherwise.
 */
function plainTagColon(raw: string, from: number, to: number): number {
  if (to <= from || to - from > MAX_TAG_PAIR_LENGTH) return NOT_PLAIN;
  let colon = -1;
  for (let i = from; i < to; i++) {
    const c = raw.charCodeAt(i);
    if (colon === -1 && c === COLON) colon = i;
    else if (c >= 128 || (colon === -1 ? CATEGORY_CHARS[c] : VALUE_CHARS[c]) !== 1) return NOT_PLAIN;
  }
  const categoryEnd = colon === -1 ? to : colon;
  if (categoryEnd === from) return NOT_PLAIN;
  if (raw.startsWith('__', from) && RESERVED_CATEGORIES.has(raw.slice(from, categoryEnd))) return NOT_PLAIN;
  return colon;
}

/** `compareTags` of two plain tags of `raw`, each given by its start, colon (-1: none) and end. */
function compareTagsAt(raw: string, a: number, aColon: number, aEnd: number, b: number, bColon: number, bEnd: number): number {
  const byCategory = compareRanges(raw, a, aColon === -1 ? aEnd : aColon, b, bColon === -1 ? bEnd : bColon);
  if (byCategory !== 0) return byCategory;
  // A tag without a value sorts as one with an empty value (`compareTags`).
  return compareRanges(raw, aColon === -1 ? aEnd : aColon + 1, aEnd, bColon === -1 ? bEnd : bColon + 1, bEnd);
}

/** raw[a, aEnd) against raw[b, bEnd), as JavaScript compares strings. */
function compareRanges(raw: string, a: number, aEnd: number, b: number, bEnd: number): number {
  for (; a < aEnd && b < bEnd; a++, b++) {
    const d = raw.charCodeAt(a) - raw.charCodeAt(b);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  const left = aEnd - a - (bEnd - b);
  return left === 0 ? 0 : left < 0 ? -1 : 1;
}

/** The full parse every name can take: decodes, validates, truncates, sorts and deduplicates its tags. */
export function canonicalized(raw: string): CanonicalResult {
  if (raw.includes('\0')) return fail('metric name contains a NUL byte');
  const first = firstSectionAt(raw, 0);
  const name = first === -1 ? raw : raw.slice(0, first);
  if (name.length === 0) return fail('metric name is empty');

  const rawTags: string[] = [];
  for (let at = first; at !== -1 && at < raw.length; ) {
    const isStream = raw.startsWith(ST_OPEN, at);
    const close = raw.indexOf(isStream ? ']' : '}', at + 4);
    if (close === -1) return fail(`unterminated ${isStream ? '|ST[' : '|MT{'} section at offset ${at}`);
    if (isStream) rawTags.push(...raw.slice(at + 4, close).split(','));
    at = close + 1;
    if (at < raw.length && firstSectionAt(raw, at) !== at) {
      return fail(`unexpected text after tag section at offset ${at}`);
    }
  }

  const byText = new Map<string, StreamTag>();
  for (const text of rawTags) {
    if (text.length === 0) continue;
    const parsed = parseTag(text);
    if (!parsed.ok) return parsed;
    byText.set(tagText(parsed.tag), parsed.tag);
  }
  const tags = [...byText.values()].sort(compareTags);
  const canonical = tags.length === 0 ? name : `${name}${ST_OPEN}${tags.map(tagText).join(',')}]`;
  if (canonical.length > MAX_CANONICAL_LENGTH) {
    return fail(`canonical metric name is ${canonical.length} characters; the limit is ${MAX_CANONICAL_LENGTH}`);
  }
  return { ok: true, value: { name, tags, canonical } };
}

/** `cat:value`, or `cat` alone for a category-only tag. */
export function tagText(tag: StreamTag): string {
  return tag.value === null ? tag.category : `${tag.category}:${tag.value}`;
}

/** §1.1 rule 2: sorted by category, then by value. */
export function compareTags(a: StreamTag, b: StreamTag): number {
  if (a.category !== b.category) return a.category < b.category ? -1 : 1;
  const av = a.value ?? '';
  const bv = b.value ?? '';
  return av === bv ? 0 : av < bv ? -1 : 1;
}

function firstSectionAt(raw: string, from: number): number {
  const st = raw.indexOf(ST_OPEN, from);
  const mt = raw.indexOf(MT_OPEN, from);
  if (st === -1) return mt;
  if (mt === -1) return st;
  return Math.min(st, mt);
}

export type TagResult = { ok: true; tag: StreamTag } | { ok: false; reason: string };

/** One `cat:value` (or `cat`) as a stream tag: decoded, validated, truncated per §1.1–1.2. */
export function parseStreamTag(text: string): TagResult {
  return parseTag(text);
}

function parseTag(text: string): TagResult {
  const colon = text.indexOf(':');
  const rawCategory = colon === -1 ? text : text.slice(0, colon);
  const category = decodePart(rawCategory, LEGAL_CATEGORY);
  if (category === null) return fail(`illegal stream tag category '${rawCategory}'`);
  if (RESERVED_CATEGORIES.has(category)) return fail(`stream tag category '${category}' is reserved`);
  if (colon === -1) return { ok: true, tag: { category, value: null } };
  const rawValue = text.slice(colon + 1);
  let value = decodePart(rawValue, LEGAL_VALUE);
  if (value === null) return fail(`illegal stream tag value '${rawValue}' for category '${category}'`);
  const pairLength = category.length + 1 + value.length;
  if (pairLength > MAX_TAG_PAIR_LENGTH) {
    // §1.1 rule 5: longer pairs are truncated. An encoded value cannot be cut without
    // corrupting it, so only a plain value is shortened.
    if (value.startsWith('b"') || category.length + 1 >= MAX_TAG_PAIR_LENGTH) {
      return fail(`stream tag '${category}' is longer than ${MAX_TAG_PAIR_LENGTH} characters`);
    }
    value = value.slice(0, MAX_TAG_PAIR_LENGTH - category.length - 1);
  }
  return { ok: true, tag: { category, value } };
}

/**
 * §1.1 rule 3: a `b"..."` part is stored decoded when the decoded text is legal,
 * otherwise it stays encoded. A plain part must be legal as it is.
 */
function decodePart(part: string, legal: RegExp): string | null {
  const m = BASE64_WRAPPED.exec(part);
  if (m === null) return legal.test(part) ? part : null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  if (legal.test(decoded)) return decoded;
  return `b"${m[1]}"`;
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/** A tag category or value as searches see it: `b"..."` (kept encoded in the canonical name) decoded. */
export function tagSearchText(text: string): string {
  const m = BASE64_WRAPPED.exec(text);
  return m === null ? text : Buffer.from(m[1]!, 'base64').toString('utf8');
}
