// `math:*` (reference "Package math"): a function of each value, NULLs passed through, a
// result that is not a finite number (log of a negative, say) NULL; `math:pi()` and
// `math:e()` are constant streams.
import { CaqlUserError } from '../errors.js';
import { sig } from '../signature.js';
import { constant } from '../stream.js';
import { define, valuewise, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

const NONE = sig();

/** Rounds half up, as Prometheus' round (which CAQL's PromQL translation maps here). */
const roundHalfUp = (v: number, step: number) => Math.floor(v / step + 0.5) * step;

const UNARY: Record<string, (v: number) => number> = lookupTable({
  abs: Math.abs,
  ceil: Math.ceil,
  floor: Math.floor,
  round: (v) => roundHalfUp(v, 1),
  sgn: Math.sign,
  sqrt: Math.sqrt,
  exp: Math.exp,
  ln: Math.log,
  log2: Math.log2,
  log10: Math.log10,
  logit: (v) => Math.log(v / (1 - v)),
  sigmoid: (v) => 1 / (1 + Math.exp(-v)),
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
  deg: (v) => (v * 180) / Math.PI,
  rad: (v) => (v * Math.PI) / 180,
});

const constantStream = (value: number) => define(NONE, async (inv) => [{ ...constant(value, inv.grid), label: String(value) }]);

export const MATH: Record<string, CaqlFunction> = lookupTable({
  'math:pi': constantStream(Math.PI),
  'math:e': constantStream(Math.E),
  'math:pow': valuewise(sig('exponent:number'), (v, inv) => v ** inv.num('exponent')),
  'math:log': valuewise(sig('base:number=10'), (v, inv) => Math.log(v) / Math.log(inv.num('base'))),
  'math:roundx': valuewise(
    sig('step:number=1'),
    (v, inv) => roundHalfUp(v, inv.num('step')),
    (inv) => {
      if (!(inv.num('step') > 0)) throw new CaqlUserError(`${inv.name}: step must be positive`);
    },
  ),
});
for (const [name, f] of Object.entries(UNARY)) MATH[`math:${name}`] = valuewise(NONE, f);
