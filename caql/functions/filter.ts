// `filter:*` (reference "Package filter"): `filter:<mode>[:not]:<condition>`.
//   any / all     keep whole streams where any / all present values meet the condition
//                 (missing values are ignored, so `all` also needs one value);
//   values        values failing the condition become NULL;
//   sum           keep streams whose sum over the view meets it;
//   values[:not]:percentile:<op>(p) / quantile:<op>(q)  compare each value with the stream's
//                 own p-th percentile (q-quantile) over the view.
// `:not:` negates the condition on each value: `filter:any:not:missing()` keeps the streams
// with any value present.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { sig } from '../signature.js';
import { COMPARE, present, quantile, sum } from './numbers.js';
import { define, numericSources, withValues, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

type Test = (v: number | null) => boolean;

/** The per-value test of `<op>(x)` or `missing()`, negated by `:not:`; a comparison never holds for NULL. */
function valueTest(inv: Invocation, condition: string, negate: boolean): Test {
  if (condition === 'missing') return (v) => (v === null) !== negate;
  const compare = COMPARE[condition]!;
  const x = inv.num('x');
  return (v) => v !== null && compare(v, x) !== negate;
}

function streamFilter(mode: 'any' | 'all', condition: string, negate: boolean): CaqlFunction {
  return define(condition === 'missing' ? sig() : sig('x:number'), async (inv) => {
    const test = valueTest(inv, condition, negate);
    return (await numericSources(inv)).filter((s) => {
      // Comparisons ignore missing values; `missing` looks at every slot.
      const considered = condition === 'missing' ? s.values : present(s.values);
      return mode === 'any' ? considered.some(test) : considered.length > 0 && considered.every(test);
    });
  });
}

function valueFilter(condition: string, negate: boolean): CaqlFunction {
  return define(sig('x:number'), async (inv) => {
    const test = valueTest(inv, condition, negate);
    return (await numericSources(inv)).map((s) => withValues(s, s.values.map((v) => (test(v) ? v : null))));
  });
}

function sumFilter(condition: string, negate: boolean): CaqlFunction {
  return define(sig('x:number'), async (inv) => {
    const compare = COMPARE[condition]!;
    return (await numericSources(inv)).filter((s) => compare(sum(present(s.values)), inv.num('x')) !== negate);
  });
}

/** `filter:values[:not]:percentile:<op>(x)` (x in 0–100) and `…:quantile:<op>(x)` (x in 0–1). */
function rankFilter(scale: 'percentile' | 'quantile', condition: string, negate: boolean): CaqlFunction {
  const top = scale === 'percentile' ? 100 : 1;
  return define(sig('x:number'), async (inv) => {
    const at = inv.num('x');
    if (!(at >= 0 && at <= top)) throw new CaqlUserError(`${inv.name}: ${at} is not between 0 and ${top}`);
    const compare = COMPARE[condition]!;
    return (await numericSources(inv)).map((s) => {
      const values = present(s.values);
      const threshold = values.length === 0 ? NaN : quantile(values, at / top);
      return withValues(s, s.values.map((v) => (v !== null && compare(v, threshold) !== negate ? v : null)));
    });
  });
}

export const FILTERS: Record<string, CaqlFunction> = lookupTable({});
for (const negation of ['', 'not:']) {
  const negate = negation !== '';
  for (const condition of Object.keys(COMPARE)) {
    FILTERS[`filter:values:${negation}${condition}`] = valueFilter(condition, negate);
    FILTERS[`filter:sum:${negation}${condition}`] = sumFilter(condition, negate);
    for (const scale of ['percentile', 'quantile'] as const) FILTERS[`filter:values:${negation}${scale}:${condition}`] = rankFilter(scale, condition, negate);
  }
  for (const mode of ['any', 'all'] as const) {
    for (const condition of [...Object.keys(COMPARE), 'missing']) FILTERS[`filter:${mode}:${negation}${condition}`] = streamFilter(mode, condition, negate);
  }
}
