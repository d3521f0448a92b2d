// `explain=true`: what the query did, for DF4's `head.explain` (IRONdb: "Add CAQL/explain
// information to DF4 meta output"). `info.putype` lists the output type of every processing
// unit (call), innermost first: `number`, `histogram`, `mixed` or `none` (it answered no
// streams), as IRONdb's `putype` does. `plan` is the call tree with each call's arguments and
// statistics; a chain `A | B | C` is one `pipeline` list (innermost first), so the answer stays
// shallow whatever the pipeline's length.
import type { Expr, Literal, Query } from './ast.js';
import type { CallStats } from './evaluate.js';
import { describeLiteral } from './signature.js';

type Call = Expr & { type: 'call' };

interface Stage {
  function: string;
  args: string[];
  kwargs: Record<string, string>;
  /** Sources besides the one piped in. */
  sources: PlanNode[];
  evaluations: number;
  streams: number;
  putype: string;
  ms: number;
}

type PlanNode = { literal: string } | { pipeline: Stage[] };

function putype(stats: CallStats | undefined): string {
  if (stats === undefined || stats.kinds.size === 0) return 'none';
  if (stats.kinds.size > 1) return 'mixed';
  return stats.kinds.has('histogram') ? 'histogram' : 'number';
}

const literalText = (l: Literal) => (l.type === 'string' ? l.value : describeLiteral(l).replace(/^the (number|duration) /, ''));

/** A chain of calls, each the first source of the next, innermost first. */
function chain(outer: Call): Call[] {
  const calls: Call[] = [];
  let at: Expr | undefined = outer;
  while (at?.type === 'call') {
    calls.push(at);
    at = at.sources[0];
  }
  return calls.reverse();
}

function plan(e: Expr, stats: ReadonlyMap<Expr, CallStats>, units: string[]): PlanNode {
  if (e.type !== 'call') return { literal: literalText(e) };
  const calls = chain(e);
  return {
    pipeline: calls.map((c, i) => {
      const s = stats.get(c);
      // The innermost call keeps all its sources; the others' first source is the stage before.
      const own = i === 0 ? c.sources : c.sources.slice(1);
      const stage: Stage = {
        function: c.name,
        args: c.args.map(literalText),
        kwargs: Object.fromEntries(Object.entries(c.kwargs).map(([k, v]) => [k, literalText(v)])),
        sources: own.map((src) => plan(src, stats, units)),
        evaluations: s?.evaluations ?? 0,
        streams: s?.streams ?? 0,
        putype: putype(s),
        ms: Math.round((s?.ms ?? 0) * 1000) / 1000,
      };
      units.push(stage.putype);
      return stage;
    }),
  };
}

export function explainJson(text: string, query: Query, stats: ReadonlyMap<Expr, CallStats>): Record<string, unknown> {
  const units: string[] = [];
  const tree = plan(query.body, stats, units);
  return { query: text, directives: query.directives, info: { putype: units }, plan: tree };
}
