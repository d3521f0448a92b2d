// A parsed tag query written back as text (find's `explain`, irondb-reference §2.2): what the
// node understood, with the parser's choices made explicit — `hint(...)` dropped, a value
// without `*` shown as exact, quotes and escapes resolved, awkward text as base64 (`b"..."`).
// Parsing the result gives the same query again.
import type { Matcher, TagQuery, TimeExpr } from './ast.js';

/**
 * Text safe as a bare literal: printable ASCII without the characters the grammar gives a
 * meaning to. The rest goes as base64, so the whole text is printable ASCII (it travels in an
 * HTTP header).
 */
const PLAIN = /^[!#-'*+\-.0-9;-Z^-z|~]+$/;

export function formatTagQuery(q: TagQuery): string {
  // A query opens with and/or/not: a bare leaf (what `hint(leaf)` parses to) goes in and(...).
  return q.op === 'tag' || q.op === 'activity' ? `and(${formatNode(q)})` : formatNode(q);
}

function formatNode(q: TagQuery): string {
  switch (q.op) {
    case 'and':
    case 'or':
      return `${q.op}(${q.args.map(formatNode).join(',')})`;
    case 'not':
      return `not(${formatNode(q.arg)})`;
    case 'tag':
      return q.value === null ? formatMatcher(q.category) : `${formatMatcher(q.category)}:${formatMatcher(q.value)}`;
    case 'activity':
      return `__activity:${formatActivity(q.start, q.end)}`;
  }
}

function formatMatcher(m: Matcher): string {
  switch (m.kind) {
    case 'exact':
      // Without `*` the default matcher is exact already.
      if (m.value.includes('*')) return `[exact]${base64(m.value)}`;
      return plain(m.value) ? m.value : base64(m.value);
    case 'glob':
      return plain(m.pattern) ? m.pattern : base64(m.pattern);
    case 'regex':
      return /^[ -.0-~]*$/.test(m.source) ? `/${m.source}/` : `b/${Buffer.from(m.source, 'utf8').toString('base64')}/`;
    case 'graphite':
      return `[graphite]${plain(m.pattern) ? m.pattern : base64(m.pattern)}`;
  }
}

/** Bare text must not be empty nor open with what the parser reads as base64 (`b"`, `b/`, `b[`). */
const plain = (text: string): boolean => PLAIN.test(text) && !/^b["/[]/.test(text);

const base64 = (text: string): string => `b"${Buffer.from(text, 'utf8').toString('base64')}"`;

/** `start-end` when both sides are plain epoch seconds (either may be open), else `start:end`. */
function formatActivity(start: TimeExpr | null, end: TimeExpr | null): string {
  const epoch = (t: TimeExpr | null) => t === null || (t.origin !== null && t.offset === 0);
  if (epoch(start) && epoch(end)) return `${start?.origin ?? ''}-${end?.origin ?? ''}`;
  return `${formatTime(start)}:${formatTime(end)}`;
}

function formatTime(t: TimeExpr | null): string {
  // The relative form has both sides; an open side cannot occur there, so `now` stands in.
  if (t === null) return 'now';
  const origin = t.origin === null ? 'now' : String(t.origin);
  if (t.offset === 0) return origin;
  return `${origin}${t.offset < 0 ? '-' : '+'}${Math.abs(t.offset)}s`;
}
