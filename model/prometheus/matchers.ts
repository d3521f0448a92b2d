// Prometheus label matchers: `=`, `!=`, `=~`, `!~`. Regexes are RE2 and fully anchored
// (re2js, linear time on user input); `.` matches newlines as in Prometheus 3. A label a
// series does not have matches as the empty string.
import { RE2JS } from 're2js';
import { labelValue, type LabelMatcher, type Labels } from './types.js';

export interface CompiledMatcher extends LabelMatcher {
  test(value: string): boolean;
}

export class MatcherError extends Error {
  override name = 'MatcherError';
}

export function compileMatcher(m: LabelMatcher): CompiledMatcher {
  switch (m.type) {
    case '=':
      return { ...m, test: (v) => v === m.value };
    case '!=':
      return { ...m, test: (v) => v !== m.value };
    case '=~':
    case '!~': {
      let re: RE2JS;
      try {
        re = RE2JS.compile(`(?s:${m.value})`);
      } catch (error) {
        throw new MatcherError(`invalid regular expression in ${m.name}${m.type}${JSON.stringify(m.value)}: ${(error as Error).message}`);
      }
      return m.type === '=~' ? { ...m, test: (v) => re.matches(v) } : { ...m, test: (v) => !re.matches(v) };
    }
  }
}

export function matchesAll(matchers: readonly CompiledMatcher[], labels: Labels): boolean {
  return matchers.every((m) => m.test(labelValue(labels, m.name)));
}

/** The exact values a selector requires (non-empty `=` matchers), which an index can look up. */
export function requiredValues(matchers: readonly LabelMatcher[]): [string, string][] {
  return matchers.filter((m) => m.type === '=' && m.value !== '').map((m) => [m.name, m.value]);
}
