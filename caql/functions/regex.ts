// User regular expressions in CAQL arguments (exclude:label, tag:synth, graphite:aliassub):
// RE2 (re2js), so no pattern can backtrack on a label; a bad pattern is a user error.
import { RE2JS } from 're2js';
import { CaqlUserError } from '../errors.js';

export function userRegex(fn: string, source: string): RE2JS {
  try {
    return RE2JS.compile(source);
  } catch (error) {
    throw new CaqlUserError(`${fn}: invalid regular expression /${source}/: ${(error as Error).message}`);
  }
}

/** The groups of the first match of `re` in `text`, group 0 the whole match; null without a match. */
export function firstMatch(re: RE2JS, text: string): (string | null)[] | null {
  const m = re.matcher(text);
  if (!m.find()) return null;
  return Array.from({ length: m.groupCount() + 1 }, (_, i) => m.group(i));
}

/** `$1`, `$2`, … (and `\1`, `\2`, …) in a template replaced by the match's groups. */
export function expandGroups(template: string, groups: readonly (string | null)[]): string {
  return template.replace(/[$\\]([0-9])/g, (_, n: string) => groups[Number(n)] ?? '');
}
