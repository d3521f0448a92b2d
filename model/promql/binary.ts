// Binary operators: arithmetic and comparisons between scalars and vectors, one-to-one
// vector matching (`on`/`ignoring`), and the set operators and/or/unless.
import type { Labels } from '../prometheus/types.js';
import { PromQLError, type BinaryOp, type VectorMatching } from './ast.js';
import { labelsKey, METRIC_NAME, withoutName, type Cell, type Value, type VSeries } from './values.js';

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
  const { op, bool } = spec;
  if (lhs.kind === 'scalar' && rhs.kind === 'scalar') {
    if (COMPARISONS.has(op) && !bool) throw new PromQLError('comparisons between scalars must use BOOL modifier');
    return { kind: 'scalar', values: lhs.values.map((a, i) => arithmetic(op, a, rhs.values[i]!)) };
  }
  if (SET_OPS.has(op)) {
    if (lhs.kind !== 'vector' || rhs.kind !== 'vector') throw new PromQLError(`set operator "${op}" not allowed in binary scalar expression`);
    return { kind: 'vector', series: setOperation(op, lhs.series, rhs.series, spec.matching, steps) };
  }
  if (lhs.kind === 'vector' && rhs.kind === 'scalar') return { kind: 'vector', series: lhs.series.map((s) => withScalar(spec, s, rhs.values, false)) };
  if (lhs.kind === 'scalar' && rhs.kind === 'vector') return { kind: 'vector', series: rhs.series.map((s) => withScalar(spec, s, lhs.values, true)) };
  if (lhs.kind === 'vector' && rhs.kind === 'vector') return { kind: 'vector', series: oneToOne(spec, lhs.series, rhs.series, steps) };
  throw new PromQLError(`binary expression must contain only scalar and instant vector types`);
}

/** The value of `a op b` for one pair, or undefined when a comparison filters it out. */
function pairValue(spec: BinarySpec, a: Cell, b: Cell, keep: number | undefined): Cell {
  if (typeof a !== 'number' || typeof b !== 'number') return undefined;
  const v = arithmetic(spec.op, a, b);
  if (!COMPARISONS.has(spec.op) || spec.bool) return v;
  return v === 1 ? keep : undefined;
}

const dropsName = (spec: BinarySpec): boolean => !COMPARISONS.has(spec.op) || spec.bool;

function withScalar(spec: BinarySpec, s: VSeries, scalar: number[], scalarFirst: boolean): VSeries {
  const values = s.values.map((v, i) => (scalarFirst ? pairValue(spec, scalar[i], v, v as number) : pairValue(spec, v, scalar[i], v as number)));
  return { labels: dropsName(spec) ? withoutName(s.labels) : s.labels, values };
}

/** The labels two series are matched on. */
function signature(labels: Labels, m: VectorMatching): string {
  const picked = Object.entries(labels).filter(([k]) => (m.on ? m.labels.includes(k) : k !== METRIC_NAME && !m.labels.includes(k)));
  return labelsKey(Object.fromEntries(picked));
}

function resultLabels(spec: BinarySpec, labels: Labels): Labels {
  const m = spec.matching;
  let out = dropsName(spec) ? withoutName(labels) : labels;
  if (m.on) out = Object.fromEntries(Object.entries(out).filter(([k]) => m.labels.includes(k)));
  else if (m.labels.length > 0) out = Object.fromEntries(Object.entries(out).filter(([k]) => !m.labels.includes(k)));
  return out;
}

/** Indexes series by signature per step; two with one signature at one step is Prometheus' matching error. */
function bySignature(series: VSeries[], m: VectorMatching, steps: number, side: string): Map<string, VSeries[]> {
  const map = new Map<string, VSeries[]>();
  for (const s of series) {
    const key = signature(s.labels, m);
    const list = map.get(key) ?? [];
    list.push(s);
    map.set(key, list);
  }
  for (const list of map.values()) {
    if (list.length < 2) continue;
    for (let i = 0; i < steps; i++) {
      if (list.filter((s) => s.values[i] !== undefined).length > 1) {
        throw new PromQLError(`found duplicate series for the match group on the ${side} hand-side of the operation; many-to-many matching not allowed: matching labels must be unique on one side`);
      }
    }
  }
  return map;
}

function oneToOne(spec: BinarySpec, lhs: VSeries[], rhs: VSeries[], steps: number): VSeries[] {
  const right = bySignature(rhs, spec.matching, steps, 'right');
  bySignature(lhs, spec.matching, steps, 'left');
  const out = new Map<string, VSeries>();
  for (const l of lhs) {
    const partners = right.get(signature(l.labels, spec.matching));
    if (partners === undefined) continue;
    const labels = resultLabels(spec, l.labels);
    const key = labelsKey(labels);
    const target = out.get(key) ?? { labels, values: new Array<Cell>(steps).fill(undefined) };
    for (let i = 0; i < steps; i++) {
      const r = partners.find((p) => p.values[i] !== undefined)?.values[i];
      const v = pairValue(spec, l.values[i], r, l.values[i] as number);
      if (v === undefined) continue;
      if (target.values[i] !== undefined) throw new PromQLError('multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)');
      target.values[i] = v;
    }
    out.set(key, target);
  }
  return [...out.values()].filter((s) => s.values.some((v) => v !== undefined));
}

function setOperation(op: BinaryOp, lhs: VSeries[], rhs: VSeries[], m: VectorMatching, steps: number): VSeries[] {
  const present = (series: VSeries[]) => {
    const at = new Map<string, boolean[]>();
    for (const s of series) {
      const key = signature(s.labels, m);
      const flags = at.get(key) ?? new Array<boolean>(steps).fill(false);
      s.values.forEach((v, i) => (flags[i] ||= v !== undefined));
      at.set(key, flags);
    }
    return at;
  };
  const right = present(rhs);
  const filter = (s: VSeries, keepWhere: (has: boolean) => boolean): VSeries => {
    const flags = right.get(signature(s.labels, m));
    return { labels: s.labels, values: s.values.map((v, i) => (keepWhere(flags?.[i] ?? false) ? v : undefined)) };
  };
  if (op === 'and') return lhs.map((s) => filter(s, (has) => has));
  if (op === 'unless') return lhs.map((s) => filter(s, (has) => !has));
  const left = present(lhs);
  const fromRight = rhs.map((s) => {
    const flags = left.get(signature(s.labels, m));
    return { labels: s.labels, values: s.values.map((v, i) => (flags?.[i] ? undefined : v)) };
  });
  return [...lhs, ...fromRight];
}
