// Metric and attribute names as Prometheus translates OTLP with UTF-8 names allowed and
// suffixes added (its `NoUTF8EscapingWithSuffixes` strategy, written from the
// otlptranslator rules): the unit as a suffix (`s` → `_seconds`, `By/s` →
// `_bytes_per_second`, `{packets}` dropped), `_total` on monotonic counters, `_ratio` on
// gauges of unit `1`, each added once. Dots and other UTF-8 stay, as ferrite names allow them;
// only what ferrite cannot hold is replaced by `_` (NUL, and a `|` that would open a tag section).
import { RESERVED_CATEGORIES } from '../metric-name.js';

export type NameKind = 'gauge' | 'counter' | 'histogram' | 'summary';

const UNITS: Record<string, string> = {
  d: 'days',
  h: 'hours',
  min: 'minutes',
  s: 'seconds',
  ms: 'milliseconds',
  us: 'microseconds',
  ns: 'nanoseconds',
  By: 'bytes',
  KiBy: 'kibibytes',
  MiBy: 'mebibytes',
  GiBy: 'gibibytes',
  TiBy: 'tibibytes',
  KBy: 'kilobytes',
  MBy: 'megabytes',
  GBy: 'gigabytes',
  TBy: 'terabytes',
  m: 'meters',
  V: 'volts',
  A: 'amperes',
  J: 'joules',
  W: 'watts',
  g: 'grams',
  Cel: 'celsius',
  Hz: 'hertz',
  '1': '',
  '%': 'percent',
};

const PER_UNITS: Record<string, string> = { s: 'second', m: 'minute', h: 'hour', d: 'day', w: 'week', mo: 'month', y: 'year' };

/** The stored metric name of an OTLP metric (before `_bucket`/`_sum`/`_count` for histograms and summaries). */
export function metricName(name: string, unit: string, kind: NameKind): string {
  const [main, per] = unitSuffixes(unit);
  let n = name;
  const tail: string[] = [];
  if (unit === '1' && kind === 'gauge') {
    n = trimSuffix(n, 'ratio');
    tail.unshift('_ratio');
  }
  if (kind === 'counter') {
    n = trimSuffix(n, 'total');
    tail.unshift('_total');
  }
  if (per !== '') {
    n = trimSuffix(n, per);
    tail.unshift(`_${per}`);
  }
  if (main !== '' && !n.endsWith(main)) n = `${n}_${main}`;
  return ferriteLegal(n + tail.join(''));
}

/** [main, per] suffixes of a UCUM unit: `By/s` → ['bytes', 'per_second']; annotations (`{…}`) give ''. */
function unitSuffixes(unit: string): [string, string] {
  const slash = unit.indexOf('/');
  const mainText = (slash === -1 ? unit : unit.slice(0, slash)).trim();
  const perText = slash === -1 ? '' : unit.slice(slash + 1).trim();
  const main = mainText !== '' && !/[{}]/.test(mainText) ? (UNITS[mainText] ?? mainText) : '';
  const perUnit = perText !== '' && !/[{}]/.test(perText) ? (PER_UNITS[perText] ?? perText) : '';
  return [main, perUnit === '' ? '' : `per_${perUnit}`];
}

/** Drops `suffix` and the one delimiter before it, when the name is longer than both. */
function trimSuffix(name: string, suffix: string): string {
  return name.endsWith(suffix) && name.length > suffix.length + 1 ? name.slice(0, name.length - suffix.length - 1) : name;
}

/** What a ferrite metric name cannot hold (irondb-reference §1.1): NUL, and `|ST[` / `|MT{` (tag sections). */
function ferriteLegal(name: string): string {
  return name.replace(/\0/g, '_').replace(/\|(?=ST\[|MT\{)/g, '_');
}

/** A stream tag category for an attribute or label name: kept as it is, ferrite's reserved names prefixed with `key`. */
export function labelName(name: string): string {
  return RESERVED_CATEGORIES.has(name) ? `key${name}` : name;
}
