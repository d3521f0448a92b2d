// CAQL tokens: numbers, strings ('…', "…", p'…' percent-encoded), durations (`5m`,
// `1d 6h`), `:`-segmented names, operators and punctuation; `//` comments are skipped.
import { CaqlSyntaxError } from './ast.js';
import { lookupTable } from '../model/lookup-table.js';

export type Token =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'duration'; seconds: number; at: number }
  | { kind: 'string'; value: string; at: number }
  | { kind: 'name'; value: string; at: number }
  | { kind: 'punct'; value: string; at: number }
  | { kind: 'end'; at: number };

const UNIT_SECONDS: Record<string, number> = lookupTable({});
for (const [names, s] of [
  [['s', 'sec', 'second', 'seconds'], 1],
  [['m', 'M', 'min', 'minute', 'minutes'], 60],
  [['h', 'hr', 'hour', 'hours'], 3600],
  [['d', 'day', 'days'], 86400],
  [['w', 'wk', 'week', 'weeks'], 604800],
] as const) {
  for (const n of names) UNIT_SECONDS[n] = s;
}

const PUNCT = ['==', '>=', '<=', '!=', '(', ')', '{', '}', ',', '|', '+', '-', '*', '/', '%', '^', '<', '>', '!', '='];
const NUMBER = /[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const DURATION_TERM = /([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]+)/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)*/y;

export function tokenize(text: string, from = 0): Token[] {
  const tokens: Token[] = [];
  let i = from;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (text.startsWith('//', i)) {
      const nl = text.indexOf('\n', i);
      i = nl === -1 ? text.length : nl + 1;
      continue;
    }
    if (c === "'" || c === '"' || ((c === 'p' || c === 'P') && (text[i + 1] === "'" || text[i + 1] === '"'))) {
      const [token, next] = stringAt(text, i);
      tokens.push(token);
      i = next;
      continue;
    }
    if (/[0-9]/.test(c)) {
      const [token, next] = numberOrDuration(text, i);
      tokens.push(token);
      i = next;
      continue;
    }
    NAME.lastIndex = i;
    const name = NAME.exec(text);
    if (name !== null) {
      tokens.push({ kind: 'name', value: name[0], at: i });
      i += name[0].length;
      continue;
    }
    const p = PUNCT.find((op) => text.startsWith(op, i));
    if (p === undefined) throw new CaqlSyntaxError(`unexpected character '${c}'`, i);
    tokens.push({ kind: 'punct', value: p, at: i });
    i += p.length;
  }
  tokens.push({ kind: 'end', at: text.length });
  return tokens;
}

function stringAt(text: string, start: number): [Token, number] {
  const encoded = text[start] === 'p' || text[start] === 'P';
  const open = encoded ? start + 1 : start;
  const quote = text[open]!;
  const close = text.indexOf(quote, open + 1);
  if (close === -1) throw new CaqlSyntaxError('unterminated string', start);
  const raw = text.slice(open + 1, close);
  let value = raw;
  if (encoded) {
    try {
      value = decodeURIComponent(raw);
    } catch {
      throw new CaqlSyntaxError('malformed percent-encoding in p-string', start);
    }
  }
  return [{ kind: 'string', value, at: start }, close + 1];
}

/** `5`, `1.5`, `5m`, `1d 6h` (terms separated by spaces add up). */
function numberOrDuration(text: string, start: number): [Token, number] {
  let seconds = 0;
  let i = start;
  let terms = 0;
  for (;;) {
    DURATION_TERM.lastIndex = i;
    const m = DURATION_TERM.exec(text);
    const unit = m === null ? undefined : UNIT_SECONDS[m[2]!];
    if (m === null || unit === undefined || (terms === 0 && m.index !== start)) break;
    // A term must not run on into a name (`5min_x` is not a duration).
    if (/[A-Za-z0-9_:]/.test(text[i + m[0].length] ?? '')) break;
    seconds += Number(m[1]) * unit;
    terms++;
    i += m[0].length;
    const ws = /\s*/y;
    ws.lastIndex = i;
    const skip = ws.exec(text)![0].length;
    if (!/[0-9]/.test(text[i + skip] ?? '')) break;
    DURATION_TERM.lastIndex = i + skip;
    const more = DURATION_TERM.exec(text);
    if (more === null || UNIT_SECONDS[more[2]!] === undefined) break;
    i += skip;
  }
  if (terms > 0) return [{ kind: 'duration', seconds, at: start }, i];
  NUMBER.lastIndex = start;
  const n = NUMBER.exec(text)!;
  return [{ kind: 'number', value: Number(n[0]), at: start }, start + n[0].length];
}
