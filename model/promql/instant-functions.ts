// Functions of instant vectors: math applied to each float, date parts, label rewriting
// (label_replace, label_join), ordering (sort*, evaluated for an instant query's single step)
// and absent(). Histogram functions are in histogram-functions.ts.
import { RE2JS } from 're2js';
import { Histogram } from '../histogram/index.js';
import { labelValue, setLabel, type LabelMatcher, type Labels } from '../prometheus/types.js';
import { PromQLError } from './ast.js';
import { compareLabelSets, METRIC_NAME, SeriesCollector, withoutName, type VSeries } from './values.js';
import { lookupTable } from '../lookup-table.js';

export const MATH_FUNCTIONS: Record<string, (x: number) => number> = lookupTable({
  abs: Math.abs,
  ceil: Math.ceil,
  floor: Math.floor,
  exp: Math.exp,
  ln: Math.log,
  log2: Math.log2,
  log10: Math.log10,
  sqrt: Math.sqrt,
  sgn: (x) => (x < 0 ? -1 : x > 0 ? 1 : x),
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  sinh: Math.sinh,
  cosh: Math.cosh,
  tanh: Math.tanh,
  asinh: Math.asinh,
  acosh: Math.acosh,
  atanh: Math.atanh,
  deg: (x) => (x * 180) / Math.PI,
  rad: (x) => (x * Math.PI) / 180,
});

/** Applies `f` to every float of the series (histograms drop out; so do steps where `f` gives undefined), dropping the metric name. */
export function mapFloats(series: VSeries[], f: (x: number, step: number) => number | undefined): VSeries[] {
  const steps = series[0]?.values.length ?? 0;
  const out = new SeriesCollector(steps);
  for (const s of series) out.add(withoutName(s.labels), s.values.map((v, i) => (typeof v === 'number' ? f(v, i) : undefined)));
  return out.series();
}

/** Prometheus' round(v, to_nearest): floor(v / to_nearest + 0.5) * to_nearest, through the inverse. */
export function roundTo(x: number, toNearest: number): number {
  const inverse = 1 / toNearest;
  return Math.floor(x * inverse + 0.5) / inverse;
}

const utc = (seconds: number): Date => new Date(Math.trunc(seconds) * 1000);

/** Date parts of a time in seconds, in UTC (Prometheus' date functions). */
export const DATE_FUNCTIONS: Record<string, (seconds: number) => number> = lookupTable({
  year: (s) => utc(s).getUTCFullYear(),
  month: (s) => utc(s).getUTCMonth() + 1,
  day_of_month: (s) => utc(s).getUTCDate(),
  day_of_week: (s) => utc(s).getUTCDay(),
  day_of_year: (s) => {
    const d = utc(s);
    return Math.round((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400_000) + 1;
  },
  days_in_month: (s) => {
    const d = utc(s);
    return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  },
  hour: (s) => utc(s).getUTCHours(),
  minute: (s) => utc(s).getUTCMinutes(),
});

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function checkLabelName(name: string, what: string, func: string): void {
  if (name === '' || (!LABEL_NAME.test(name) && /[\uD800-\uDFFF]/.test(name.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '')))) {
    throw new PromQLError(`invalid ${what} label name in ${func}(): ${name}`);
  }
}

/** Sets (or, with an empty value, removes) a label. */
function withLabel(labels: Labels, name: string, value: string): Labels {
  const out = { ...labels };
  if (value === '') delete out[name];
  else setLabel(out, name, value);
  return out;
}

/** Go's regexp Expand: `$1`, `${1}`, `$name`, `${name}`, `$$`; an unknown group is empty. */
function expandTemplate(template: string, groups: (string | null)[], named: Record<string, number>): string {
  return template.replace(/\$(\$|\{([a-zA-Z0-9_]*)\}|([a-zA-Z0-9_]+))/g, (whole, _all: string, braced: string | undefined, bare: string | undefined) => {
    if (whole === '$$') return '$';
    const name = braced ?? bare!;
    if (braced === '') return whole;
    const index = /^\d+$/.test(name) ? Number(name) : named[name];
    return index === undefined ? '' : (groups[index] ?? '');
  });
}

/** label_replace(v, dst, replacement, src, regex): where the anchored regex matches src, dst is set from the template. */
export function labelReplace(series: VSeries[], dst: string, replacement: string, src: string, regex: string): VSeries[] {
  let re: RE2JS;
  try {
    re = RE2JS.compile(`^(?s:${regex})$`);
  } catch {
    throw new PromQLError(`invalid regular expression in label_replace(): ${regex}`);
  }
  checkLabelName(dst, 'destination', 'label_replace');
  const named = re.namedGroups();
  return relabel(series, (labels) => {
    const m = re.matcher(labelValue(labels, src));
    if (!m.matches()) return labels;
    const groups = Array.from({ length: re.groupCount() + 1 }, (_, g) => m.group(g));
    return withLabel(labels, dst, expandTemplate(replacement, groups, named));
  });
}

/** label_join(v, dst, separator, src...): dst set to the src values joined. */
export function labelJoin(series: VSeries[], dst: string, separator: string, sources: string[]): VSeries[] {
  for (const s of sources) checkLabelName(s, 'source', 'label_join');
  checkLabelName(dst, 'destination', 'label_join');
  return relabel(series, (labels) => withLabel(labels, dst, sources.map((s) => labelValue(labels, s)).join(separator)));
}

function relabel(series: VSeries[], f: (labels: Labels) => Labels): VSeries[] {
  const out = new SeriesCollector(series[0]?.values.length ?? 0);
  for (const s of series) out.add(f(s.labels), s.values);
  return out.series();
}

/** An instant query's order: by the first step's value (NaN last); histograms drop out. */
export function sortByValue(series: VSeries[], desc: boolean): VSeries[] {
  const floats = series.filter((s) => typeof s.values[0] === 'number');
  const v = (s: VSeries): number => s.values[0] as number;
  return floats.sort((a, b) => {
    const [x, y] = [v(a), v(b)];
    if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : 1;
    if (Number.isNaN(y)) return -1;
    return desc ? y - x : x - y;
  });
}

/** sort_by_label(_desc): by the labels' values in natural order, then by the whole label set. */
export function sortByLabels(series: VSeries[], labels: string[], desc: boolean): VSeries[] {
  const sign = desc ? -1 : 1;
  return [...series].sort((a, b) => {
    for (const l of labels) {
      const c = naturalCompare(labelValue(a.labels, l), labelValue(b.labels, l));
      if (c !== 0) return sign * c;
    }
    return sign * compareLabelSets(a.labels, b.labels);
  });
}

/** Natural order: digit runs compare as numbers, the rest as text. */
function naturalCompare(a: string, b: string): number {
  const chunk = /(\d+|\D+)/g;
  const x = a.match(chunk) ?? [];
  const y = b.match(chunk) ?? [];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [p, q] = [x[i]!, y[i]!];
    if (p === q) continue;
    const numeric = /^\d/.test(p) && /^\d/.test(q);
    if (numeric && BigInt(p) !== BigInt(q)) return BigInt(p) < BigInt(q) ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return x.length - y.length;
}

/** The labels absent() and absent_over_time() give: each label an `=` matcher fixes exactly once. */
export function absentLabels(matchers: readonly LabelMatcher[] | null): Labels {
  const out: Labels = {};
  const seen = new Set<string>();
  for (const m of matchers ?? []) {
    if (m.name === METRIC_NAME) continue;
    if (m.type === '=' && !seen.has(m.name)) {
      if (m.value !== '') setLabel(out, m.name, m.value);
      seen.add(m.name);
    } else {
      delete out[m.name];
    }
  }
  return out;
}

/** Series with a float at `step` (absent's input counts histograms too). */
export const hasValueAt = (series: VSeries[], step: number): boolean => series.some((s) => s.values[step] !== undefined);

export const isHistogram = (v: unknown): v is Histogram => v instanceof Histogram;
