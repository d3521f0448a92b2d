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
  const open = raw.indexOf(ST_OPEN);
  if (open <= 0 || raw.length > MAX_CANONICAL_LENGTH || raw.charCodeAt(raw.length - 1) !== CLOSE_BRACKET) return null;
  if (raw.indexOf(']', open) !== raw.length - 1 || raw.includes(MT_OPEN) || raw.includes('\0')) return null;
  const tags: StreamTag[] = [];
  for (let at = open + ST_OPEN.length; at < raw.length; ) {
    let end = raw.indexOf(',', at);
    if (end === -1) end = raw.length - 1;
    const tag = plainTag(raw, at, end);
    if (tag === null || (tags.length > 0 && compareTags(tags[tags.length - 1]!, tag) >= 0)) return null;
    tags.push(tag);
    at = end + 1;
  }
  return { ok: true, value: { name: raw.slice(0, open), tags, canonical: raw } };
}

const CLOSE_BRACKET = 93;

/** The tag raw[from, to) when it is stored as written (plain, legal, not reserved, short); else null. */
function plainTag(raw: string, from: number, to: number): StreamTag | null {
  if (to <= from || to - from > MAX_TAG_PAIR_LENGTH) return null;
  const text = raw.slice(from, to);
  if (text.includes('"')) return null;
  const colon = text.indexOf(':');
  const category = colon === -1 ? text : text.slice(0, colon);
  if (!LEGAL_CATEGORY.test(category) || RESERVED_CATEGORIES.has(category)) return null;
  if (colon === -1) return { category, value: null };
  const value = text.slice(colon + 1);
  return LEGAL_VALUE.test(value) ? { category, value } : null;
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
