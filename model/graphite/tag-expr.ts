// Graphite ≥ 1.1 tag expressions (irondb-reference §4.6 `tags/find`): `tag=spec`, `tag!=spec`,
// `tag=~regex`, `tag!=~regex`, comma-separated (graphite-irondb joins them so), optionally
// wrapped as `seriesByTag('…','…')`. `name` is the metric name. As in Graphite, `tag=` (empty)
// matches series without the tag, and a regex matches from the start of the value. Regexes run
// on RE2 (re2js): linear time, no backtracking on user input.
import { RE2JS } from 're2js';

export class TagExprError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TagExprError';
  }
}

export type TagOp = '=' | '!=' | '=~' | '!=~';

export interface TagExpr {
  tag: string;
  op: TagOp;
  value: string;
  re: RE2JS | null;
}

const EXPR = /^([^!=~]+)(!=~|=~|!=|=)(.*)$/s;

export function parseTagExprs(query: string): TagExpr[] {
  let text = query.trim();
  const wrapped = /^seriesByTag\((.*)\)$/s.exec(text);
  if (wrapped !== null) text = wrapped[1]!;
  const parts = splitArgs(text).map((p) => p.trim().replace(/^(['"])(.*)\1$/s, '$2')).filter((p) => p.length > 0);
  if (parts.length === 0) throw new TagExprError('the query has no tag expression');
  const exprs = parts.map((part) => {
    const m = EXPR.exec(part);
    if (m === null) throw new TagExprError(`'${part}' is not tag=value, tag!=value, tag=~regex or tag!=~regex`);
    const op = m[2] as TagOp;
    const value = m[3]!;
    return { tag: m[1]!.trim(), op, value, re: op.includes('~') ? compile(value) : null };
  });
  // Graphite needs one expression that selects something rather than only excluding.
  if (!exprs.some((e) => (e.op === '=' && e.value !== '') || e.op === '=~')) throw new TagExprError('at least one expression must be tag=value (non-empty) or tag=~regex');
  return exprs;
}

/** Whether a series with these tags (`name` included) satisfies every expression. */
export function matchesTagExprs(exprs: readonly TagExpr[], tags: ReadonlyMap<string, string>): boolean {
  return exprs.every((e) => {
    const v = tags.get(e.tag);
    switch (e.op) {
      case '=':
        return e.value === '' ? v === undefined : v === e.value;
      case '!=':
        return e.value === '' ? v !== undefined : v !== e.value;
      case '=~':
        return v !== undefined && e.re!.matcher(v).lookingAt();
      case '!=~':
        return v === undefined || !e.re!.matcher(v).lookingAt();
    }
  });
}

function compile(source: string): RE2JS {
  try {
    return RE2JS.compile(source);
  } catch (error) {
    throw new TagExprError(`invalid regular expression '${source}': ${(error as Error).message}`);
  }
}

/** Splits on commas outside quotes. */
function splitArgs(text: string): string[] {
  const out: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ',') {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}
