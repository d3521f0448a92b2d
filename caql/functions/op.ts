// Operators (spec/caql.md §3.2, reference "Package op" and "Package each"): `op:*` combine
// their sources slot by slot (NULL in any input gives NULL; operators parse to these) and
// `each:*` apply a constant to every stream. Sources pair stream by stream, vectors by key
// (`vector:pack`); a one-stream source is broadcast against a source of many.
import { CaqlUserError } from '../errors.js';
import { sig } from '../signature.js';
import { constant, type NumericStream } from '../stream.js';
import { COMPARE } from './numbers.js';
import { define, finite, numericSources, perSlot, requireNumeric, valuewise, withValues, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

type Binary = (a: number, b: number) => number;

const ARITHMETIC: Record<string, Binary> = lookupTable({
  sum: (a, b) => a + b,
  sub: (a, b) => a - b,
  prod: (a, b) => a * b,
  div: (a, b) => a / b,
  div2: (a, b) => a / b,
  mod: (a, b) => a % b,
  exp: (a, b) => a ** b,
  and: (a, b) => Number(a !== 0 && b !== 0),
  or: (a, b) => Number(a !== 0 || b !== 0),
});
const BINARY: Record<string, Binary> = lookupTable({ ...ARITHMETIC });
for (const [name, test] of Object.entries(COMPARE)) BINARY[name] = (a, b) => Number(test(a, b));

/** A constant stream (a number source) is labelled by its value. */
const isConstant = (s: NumericStream) => /^-?[0-9.e+]+$|^NULL$/.test(s.label);

/**
 * The rows a slot-by-slot operator combines: one stream of each source per row. Vectors pair
 * by key (keys missing from any vector are dropped), plain sources stream by stream; a source
 * of one plain stream joins every row.
 */
export function pairRows(fn: string, groups: NumericStream[][]): NumericStream[][] {
  // A source without streams (a find matching nothing) leaves nothing to pair.
  if (groups.some((g) => g.length === 0)) return [];
  const broadcast = (g: NumericStream[]) => g.length === 1 && g[0]!.key === undefined;
  const vectors = groups.filter((g) => g.every((s) => s.key !== undefined));
  if (vectors.length > 0) {
    if (groups.some((g) => !broadcast(g) && !vectors.includes(g))) throw new CaqlUserError(`${fn}: cannot pair a vector with plain streams (apply vector:pack to both)`);
    const byKey = vectors.map((g) => new Map(g.map((s) => [s.key!, s])));
    const keys = vectors[0]!.map((s) => s.key!).filter((k) => byKey.every((m) => m.has(k)));
    return keys.map((k) => groups.map((g) => (broadcast(g) ? g[0]! : byKey[vectors.indexOf(g)]!.get(k)!)));
  }
  const width = Math.max(...groups.map((g) => g.length));
  if (groups.some((g) => g.length !== 1 && g.length !== width)) {
    throw new CaqlUserError(`${fn}: inputs of ${groups.map((g) => g.length).join(' and ')} streams cannot be paired`);
  }
  return Array.from({ length: width }, (_, k) => groups.map((g) => g[g.length === 1 ? 0 : k]!));
}

/** The stream a row's result describes: its first non-constant member, keeping a vector key. */
export function rowHead(row: NumericStream[]): NumericStream {
  const head = row.find((s) => !isConstant(s)) ?? row[0]!;
  const keyed = row.find((s) => s.key !== undefined);
  return keyed === undefined || head.key !== undefined ? head : { ...head, key: keyed.key! };
}

function fold(values: (number | null)[], combine: Binary): number | null {
  if (values.some((v) => v === null)) return null;
  return finite((values as number[]).reduce(combine));
}

/**
 * `op:<name>([x])`: x replaces the second input. One source of many streams (and no x) folds
 * into one stream: `find("a") | op:sum()` adds every stream.
 */
function op(name: string, combine: Binary): CaqlFunction {
  return define(sig('x:number?'), async (inv) => {
    const groups = (await inv.sourceGroups()).map((g) => g.map((s) => requireNumeric(inv.name, s)));
    if (inv.given('x')) groups.push([constant(inv.num('x'), inv.grid)]);
    if (groups.length === 0) throw new CaqlUserError(`${inv.name}: needs inputs`);
    if (groups.length === 1) {
      const only = groups[0]!;
      if (only.length === 0) return [];
      return [withValues(only[0]!, perSlot(inv, (i) => fold(only.map((s) => s.values[i] ?? null), combine)))];
    }
    if (name === 'div2' && groups.length !== 2) throw new CaqlUserError('op:div2 (/) takes exactly two inputs');
    return pairRows(inv.name, groups).map((row) => withValues(rowHead(row), perSlot(inv, (i) => fold(row.map((s) => s.values[i] ?? null), combine))));
  });
}

const unary = (f: (v: number) => number) => valuewise(sig(), f);

/** `each:<op>(x)`: every stream combined with the constant x. */
const each = (combine: Binary) => valuewise(sig('x:number'), (v, inv) => combine(v, inv.num('x')));

/** `each:coalesce(x)`: NULLs of every stream replaced by x. */
const eachCoalesce = define(sig('x:number'), async (inv) => (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => v ?? inv.num('x')))));

export const OP: Record<string, CaqlFunction> = lookupTable({
  'op:neg': unary((v) => -v),
  'op:not': unary((v) => Number(v === 0)),
  'each:coalesce': eachCoalesce,
});
for (const [name, combine] of Object.entries(BINARY)) OP[`op:${name}`] = op(name, combine);
for (const [name, combine] of Object.entries(BINARY)) {
  if (name !== 'div2' && name !== 'and' && name !== 'or') OP[`each:${name === 'prod' ? 'mul' : name === 'sum' ? 'add' : name}`] = each(combine);
}

