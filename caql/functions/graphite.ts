// `graphite:*` relabelling (reference "Package graphite"): the nodes of a dotted metric name
// (`prod.nodea.cpu.idle`: node 0 is `prod`, node -1 `idle`) become labels and tags.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { sig } from '../signature.js';
import type { Stream } from '../stream.js';
import { tagCategory } from './label-format.js';
import { userRegex } from './regex.js';
import { define, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

function nodeIndexes(inv: Invocation, name: string): number[] {
  const ns = inv.nums(name);
  for (const n of ns) if (!Number.isInteger(n)) throw new CaqlUserError(`${inv.name}: node ${n} is not a whole number`);
  return ns;
}

/** Node n of a dotted name (negative counts from the end); undefined past either end. */
const nodeAt = (parts: readonly string[], n: number) => parts[n < 0 ? parts.length + n : n];

/** `graphite:aliasbynode(n…)`: the label is the chosen nodes of the name, joined with dots. */
const aliasByNode = define(sig('...node:number'), async (inv) => {
  const ns = nodeIndexes(inv, 'node');
  return (await inv.sources()).map((s) => {
    const parts = s.name.split('.');
    return { ...s, label: ns.map((n) => nodeAt(parts, n)).filter((p) => p !== undefined).join('.') };
  });
});

/** `graphite:removenode(n…)`: the label is the name without the chosen nodes. */
const removeNode = define(sig('...node:number'), async (inv) => {
  const ns = nodeIndexes(inv, 'node');
  return (await inv.sources()).map((s) => {
    const parts = s.name.split('.');
    const dropped = new Set(ns.map((n) => (n < 0 ? parts.length + n : n)));
    return { ...s, label: parts.filter((_, i) => !dropped.has(i)).join('.') };
  });
});

/** `graphite:tagbynode(key, n)`: tags each stream `key:<node n of its name>`. */
const tagByNode = define(sig('key:string, node:number'), async (inv) => {
  const [key, n] = [inv.str('key'), inv.num('node')];
  if (!Number.isInteger(n)) throw new CaqlUserError(`${inv.name}: node ${n} is not a whole number`);
  return (await inv.sources()).map((s): Stream => {
    const value = nodeAt(s.name.split('.'), n);
    return value === undefined ? s : { ...s, tags: [...s.tags.filter((t) => tagCategory(t) !== key), `${key}:${value}`] };
  });
});

/** `graphite:aliassub(search, replace)`: every match of the regex in the label replaced; `$1` or `\1` insert groups. */
const aliasSub = define(sig('search:string, replace:string'), async (inv) => {
  const re = userRegex(inv.name, inv.str('search'));
  const replacement = inv.str('replace').replace(/\\([0-9])/g, '$$$1');
  return (await inv.sources()).map((s) => ({ ...s, label: re.matcher(s.label).replaceAll(replacement) }));
});

export const GRAPHITE: Record<string, CaqlFunction> = lookupTable({
  'graphite:aliasbynode': aliasByNode,
  'graphite:aliassub': aliasSub,
  'graphite:removenode': removeNode,
  'graphite:tagbynode': tagByNode,
});
