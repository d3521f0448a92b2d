// Binary operators: arithmetic and comparisons between scalars and vectors, vector matching
// (`on`/`ignoring`, one-to-one, `group_left`/`group_right` with copied labels), and the set
// operators and/or/unless. Vector/vector operations pair series per step, as Prometheus'
// VectorBinop does, with its errors for ambiguous matches.
import { Histogram } from '../histogram/index.js';
import { labelValue, setLabel, type Labels } from '../prometheus/types.js';
import { PromQLError, type BinaryOp, type VectorMatching } from './ast.js';
import { labelsKey, METRIC_NAME, SeriesCollector, withoutName, type Cell, type Value, type VSeries } from './values.js';

const COMPARISONS = new Set<BinaryOp>(['==', '!=', '>', '<', '>=', '<=']);
const SET_OPS = new Set<BinaryOp>(['and', 'or', 'unless']);

/** Go's math.Mod: the result has the dividend's sign, as JS's % does. */
export function arithmetic(op: BinaryOp, a: number, b: number): number {
  switch (op) {
    case '+': return a + b;
    case '-': return a - b;
    case '*': return a * b;
    case '/': return a / b;
    case '%': return a % b;
    case '^': return a ** b;
    case 'atan2': return Math.atan2(a, b);
    case '==': return a === b ? 1 : 0;
    case '!=': return a !== b ? 1 : 0;
    case '>': return a > b ? 1 : 0;
    case '<': return a < b ? 1 : 0;
    case '>=': return a >= b ? 1 : 0;
    case '<=': return a <= b ? 1 : 0;
    default: throw new PromQLError(`BUG: ${op} is not arithmetic`);
  }
}

export interface BinarySpec {
  op: BinaryOp;
  bool: boolean;
  matching: VectorMatching;
}

export function binary(spec: BinarySpec, lhs: Value, rhs: Value, steps: number): Value {
  const { op } = spec;
  if (lhs.kind === 'scalar' && rhs.kind === 'scalar') return { kind: 'scalar', values: lhs.values.map((a, i) => arithmetic(op, a, rhs.values[i]!)) };
  if (lhs.kind === 'vector' && rhs.kind === 'vector') {
    if (SET_OPS.has(op)) return { kind: 'vector', series: setOperation(op, lhs.series, rhs.series, spec.matching, steps) };
    return { kind: 'vector', series: vectorBinop(spec, lhs.series, rhs.series, steps) };
  }
  if (lhs.kind === 'vector' && rhs.kind === 'scalar') return { kind: 'vector', series: withScalar(spec, lhs.series, rhs.values, false) };
  if (lhs.kind === 'scalar' && rhs.kind === 'vector') return { kind: 'vector', series: withScalar(spec, rhs.series, lhs.values, true) };
  throw new PromQLError('binary expression must contain only scalar and instant vector types');
}

/**
 * `a op b` for one pair of samples: the value, or undefined when a comparison filters the pair
 * out or the operation is undefined for the operands (histograms only add and subtract).
 * A filtering comparison keeps `keep`.
 */
function pairValue(spec: BinarySpec, a: Cell, b: Cell, keep: Cell): Cell {
  if (a === undefined || b === undefined) return undefined;
  if (typeof a !== 'number' || typeof b !== 'number') return histogramOp(spec.op, a, b);
  const v = arithmetic(spec.op, a, b);
  if (!COMPARISONS.has(spec.op) || spec.bool) return v;
  return v === 1 ? keep : undefined;
}

/** ferrite histograms add (merge) and subtract; every other operation with one is undefined. */
function histogramOp(op: BinaryOp, a: Cell, b: Cell): Cell {
  if (!(a instanceof Histogram) || !(b instanceof Histogram)) return undefined;
  if (op === '+') return a.clone().merge(b);
  if (op === '-') return a.clone().subtract(b);
  return undefined;
}

const dropsName = (spec: BinarySpec): boolean => !COMPARISONS.has(spec.op) || spec.bool;

function withScalar(spec: BinarySpec, series: VSeries[], scalar: number[], scalarFirst: boolean): VSeries[] {
  const out = new SeriesCollector(scalar.length);
  for (const s of series) {
    const values = s.values.map((v, i) => (scalarFirst ? pairValue(spec, scalar[i], v, v) : pairValue(spec, v, scalar[i], v)));
    out.add(dropsName(spec) ? withoutName(s.labels) : s.labels, values);
  }
  return out.series();
}

/** The labels two series are matched on: `on` labels, or all but `ignoring` labels and the name. */
function signature(labels: Labels, m: VectorMatching): string {
  const picked = Object.entries(labels).filter(([k]) => (m.on ? m.labels.includes(k) : k !== METRIC_NAME && !m.labels.includes(k)));
  return labelsKey(Object.fromEntries(picked));
}

/** The result's labels from the "many" side's `labels` and the "one" side's `other` (Prometheus' resultMetric). */
function resultLabels(spec: BinarySpec, labels: Labels, other: Labels): Labels {
  const m = spec.matching;
  let out: Labels = dropsName(spec) ? withoutName(labels) : { ...labels };
  if (m.card === 'one-to-one') {
    if (m.on) out = Object.fromEntries(Object.entries(out).filter(([k]) => m.labels.includes(k)));
    else out = Object.fromEntries(Object.entries(out).filter(([k]) => !m.labels.includes(k)));
  }
  for (const l of m.include) {
    const v = labelValue(other, l);
    if (v !== '') setLabel(out, l, v);
    else delete out[l];
  }
  return out;
}

interface Side {
  series: VSeries[];
  sigs: string[];
}

const side = (series: VSeries[], m: VectorMatching): Side => ({ series, sigs: series.map((s) => signature(s.labels, m)) });

function vectorBinop(spec: BinarySpec, lhsSeries: VSeries[], rhsSeries: VSeries[], steps: number): VSeries[] {
  const m = spec.matching;
  // The "many" side is iterated; the "one" side is looked up by signature.
  const swapped = m.card === 'one-to-many';
  const many = side(swapped ? rhsSeries : lhsSeries, m);
  const one = side(swapped ? lhsSeries : rhsSeries, m);
  const labelCache = new Map<string, Labels>();
  const out = new SeriesCollector(steps);
  for (let i = 0; i < steps; i++) {
    const bySig = oneSideAt(one, i, swapped ? 'left' : 'right');
    const matched = new Map<string, Set<string> | null>();
    many.series.forEach((ms, mi) => {
      const mv = ms.values[i];
      if (mv === undefined) return;
      const sig = many.sigs[mi]!;
      const oi = bySig.get(sig);
      if (oi === undefined) return;
      const os = one.series[oi]!;
      const ov = os.values[i];
      const [l, r] = swapped ? [ov, mv] : [mv, ov];
      const v = pairValue(spec, l, r, l);
      if (v === undefined) return;
      const cacheKey = `${mi}:${oi}`;
      let labels = labelCache.get(cacheKey);
      if (labels === undefined) {
        labels = resultLabels(spec, ms.labels, os.labels);
        labelCache.set(cacheKey, labels);
      }
      checkUnique(matched, m, sig, labels);
      out.set(labels, i, v);
    });
  }
  return out.series();
}

/** The "one" side at step i by signature; two samples with one signature is many-to-many. */
function oneSideAt(one: Side, i: number, name: 'left' | 'right'): Map<string, number> {
  const bySig = new Map<string, number>();
  one.series.forEach((s, si) => {
    if (s.values[i] === undefined) return;
    const sig = one.sigs[si]!;
    const dup = bySig.get(sig);
    if (dup !== undefined) {
      throw new PromQLError(`found duplicate series for the match group ${sig} on the ${name} hand-side of the operation: [${labelsKey(s.labels)}, ${labelsKey(one.series[dup]!.labels)}];many-to-many matching not allowed: matching labels must be unique on one side`);
    }
    bySig.set(sig, si);
  });
  return bySig;
}

function checkUnique(matched: Map<string, Set<string> | null>, m: VectorMatching, sig: string, labels: Labels): void {
  if (m.card === 'one-to-one') {
    if (matched.has(sig)) throw new PromQLError('multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)');
    matched.set(sig, null);
    return;
  }
  const seen = matched.get(sig) ?? new Set<string>();
  const key = labelsKey(labels);
  if (seen.has(key)) throw new PromQLError('multiple matches for labels: grouping labels must ensure unique matches');
  seen.add(key);
  matched.set(sig, seen);
}

/** and / unless keep left series where the right has (has not) a match at the step; or adds unmatched right series. */
function setOperation(op: BinaryOp, lhs: VSeries[], rhs: VSeries[], m: VectorMatching, steps: number): VSeries[] {
  const presence = (series: VSeries[]): Map<string, boolean[]> => {
    const at = new Map<string, boolean[]>();
    for (const s of series) {
      const key = signature(s.labels, m);
      const flags = at.get(key) ?? new Array<boolean>(steps).fill(false);
      s.values.forEach((v, i) => (flags[i] ||= v !== undefined));
      at.set(key, flags);
    }
    return at;
  };
  const out = new SeriesCollector(steps);
  const keep = (series: VSeries[], other: Map<string, boolean[]>, when: boolean): void => {
    for (const s of series) {
      const flags = other.get(signature(s.labels, m));
      out.add(s.labels, s.values.map((v, i) => ((flags?.[i] ?? false) === when ? v : undefined)));
    }
  };
  if (op === 'and') keep(lhs, presence(rhs), true);
  else if (op === 'unless') keep(lhs, presence(rhs), false);
  else {
    keep(lhs, new Map(), false);
    keep(rhs, presence(lhs), false);
  }
  return out.series();
}
