// JSON request bodies, bounded before they are parsed. No body of the interface nests
// deeper than a handful of levels; refusing deeper ones up front keeps a hostile
// `[[[[…]]]]` from costing a recursive walk (and its stack) anywhere after JSON.parse.

/** Deepest nesting of arrays and objects any JSON body may have. */
export const MAX_JSON_DEPTH = 64;

export type JsonParse = { ok: true; value: unknown } | { ok: false; reason: string };

export function parseJsonBody(text: string, maxDepth = MAX_JSON_DEPTH): JsonParse {
  const tooDeep = nestingBeyond(text, maxDepth);
  if (tooDeep !== -1) return { ok: false, reason: `JSON nested deeper than ${maxDepth} levels (at character ${tooDeep})` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}

/** The offset where nesting first exceeds `maxDepth`, or -1. Strings are skipped, escapes included. */
function nestingBeyond(text: string, maxDepth: number): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > maxDepth) return i;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return -1;
}
