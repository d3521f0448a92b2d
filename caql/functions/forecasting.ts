// `forecasting:*` (reference "Package forecasting"). Every model runs over each stream slot by
// slot, one step per period, using only data up to the slot; the value shown at slot t is the
// model's estimate for t + forecast_duration (for t itself when that is 0), so a forecast can
// be compared with a threshold as the data arrives.
//
// fill=1 (default): the model's value in every slot, its forecast where data is missing;
// fill=2: the data where present, the forecast only where missing; fill=0: the model's value
// where data is present, NULL where it is missing.
//
//   ewma(α)            s ← α·x + (1−α)·s, starting at the first value; forecast s.
//   dewma(α, β)        Holt's double smoothing: level ℓ ← α·x + (1−α)(ℓ+b), trend
//                      b ← β(ℓ−ℓ_prev) + (1−β)b, from ℓ = first value, b = 0; estimate ℓ + h·b.
//   holt_winters(α, β, γ, period=1d)  additive Holt-Winters with a season of `period`: the
//                      season before the view (read as prefill) initialises ℓ = its mean, b = 0,
//                      s_j = x_j − ℓ; then ℓ ← α(x − s_{t−m}) + (1−α)(ℓ+b), b as dewma,
//                      s_t ← γ(x − ℓ) + (1−γ)s_{t−m}; estimate ℓ + h·b + s (the season of t+h).
//   regression(d, model_duration=10m, step=1 period, model=linear|exp)  least squares over the
//                      slots in (t − model_duration, t] (ln of positive values for exp),
//                      refitted every `step`, evaluated at t + d.
//   slope(d, model_duration=10m, step, model)  the line through the first and last values of
//                      that window.
//   auto(d)            regression with model_duration = max(d, 10m).
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { sig } from '../signature.js';
import { widen, type NumericStream } from '../stream.js';
import { define, finite, numericSources, withValues, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

/** What a smoothing model answers for one slot: the estimate and the one-step forecast made before seeing the slot. */
export interface Step {
  estimate: number | null;
  forecast: number | null;
}

function ratio(inv: Invocation, name: string): number {
  const v = inv.num(name);
  if (!(v >= 0 && v <= 1)) throw new CaqlUserError(`${inv.name}: ${name} must be in [0, 1], got ${v}`);
  return v;
}

function fillMode(inv: Invocation): 0 | 1 | 2 {
  const f = inv.num('fill');
  if (f !== 0 && f !== 1 && f !== 2) throw new CaqlUserError(`${inv.name}: fill must be 0, 1 or 2, got ${f}`);
  return f;
}

/** Forecast horizon in slots. */
function horizon(inv: Invocation, name = 'forecast_duration'): number {
  const d = inv.num(name);
  if (!(d >= 0)) throw new CaqlUserError(`${inv.name}: ${name} must not be negative`);
  return Math.round(d / inv.grid.periodS);
}

function filled(values: readonly (number | null)[], steps: readonly Step[], fill: 0 | 1 | 2): (number | null)[] {
  return steps.map((s, i) => {
    const x = values[i] ?? null;
    const v = fill === 1 ? (x === null ? s.forecast : s.estimate) : fill === 2 ? (x ?? s.forecast) : x === null ? null : s.estimate;
    return v === null ? null : finite(v);
  });
}

export function ewmaSteps(values: readonly (number | null)[], alpha: number): Step[] {
  let s: number | null = null;
  return values.map((x) => {
    const forecast = s;
    if (x !== null) s = s === null ? x : alpha * x + (1 - alpha) * s;
    return { estimate: s, forecast };
  });
}

export function dewmaSteps(values: readonly (number | null)[], alpha: number, beta: number, h: number): Step[] {
  let level: number | null = null;
  let trend = 0;
  return values.map((x) => {
    const forecast = level === null ? null : level + trend;
    if (level === null) {
      if (x !== null) level = x;
    } else {
      const next = x === null ? level + trend : alpha * x + (1 - alpha) * (level + trend);
      if (x !== null) trend = beta * (next - level) + (1 - beta) * trend;
      level = next;
    }
    return { estimate: level === null ? null : level + h * trend, forecast };
  });
}

export function holtWintersSteps(values: readonly (number | null)[], m: number, a: number, b: number, g: number, h: number): Step[] {
  const start = values.findIndex((v) => v !== null);
  const steps: Step[] = values.map(() => ({ estimate: null, forecast: null }));
  if (start < 0 || start + m > values.length) return steps;
  const first = values.slice(start, start + m);
  const present = first.filter((v): v is number => v !== null);
  let level = present.reduce((s, v) => s + v, 0) / present.length;
  let trend = 0;
  const season = new Array<number>(values.length).fill(0);
  first.forEach((v, j) => (season[start + j] = v === null ? 0 : v - level));
  for (let t = start + m; t < values.length; t++) {
    const x = values[t] ?? null;
    const forecast = level + trend + season[t - m]!;
    const next = x === null ? level + trend : a * (x - season[t - m]!) + (1 - a) * (level + trend);
    if (x !== null) trend = b * (next - level) + (1 - b) * trend;
    season[t] = x === null ? season[t - m]! : g * (x - next) + (1 - g) * season[t - m]!;
    level = next;
    steps[t] = { estimate: level + h * trend + season[t + h - m * Math.ceil(h / m)]!, forecast };
  }
  return steps;
}

const ewma = define(sig('alpha:number, fill:number=1'), async (inv) => {
  const [alpha, fill] = [ratio(inv, 'alpha'), fillMode(inv)];
  return (await numericSources(inv)).map((s) => withValues(s, filled(s.values, ewmaSteps(s.values, alpha), fill)));
});

const dewma = define(sig('alpha:number, beta:number, fill:number=1, forecast_duration:duration=0'), async (inv) => {
  const [alpha, beta, fill, h] = [ratio(inv, 'alpha'), ratio(inv, 'beta'), fillMode(inv), horizon(inv)];
  return (await numericSources(inv)).map((s) => withValues(s, filled(s.values, dewmaSteps(s.values, alpha, beta, h), fill)));
});

const holtWinters = define(sig('alpha:number, beta:number, gamma:number, forecast_duration:duration=0, fill:number=1, period:duration=86400'), async (inv) => {
  const [alpha, beta, gamma, fill, h] = [ratio(inv, 'alpha'), ratio(inv, 'beta'), ratio(inv, 'gamma'), fillMode(inv), horizon(inv)];
  const m = Math.round(inv.num('period') / inv.grid.periodS);
  if (m < 2) throw new CaqlUserError(`${inv.name}: the season (period=${inv.num('period')} s) must span at least two periods of ${inv.grid.periodS} s`);
  const { grid, offset } = widen(inv.grid, m * inv.grid.periodS);
  return (await numericSources(inv, grid)).map((s) => withValues(s, filled(s.values, holtWintersSteps(s.values, m, alpha, beta, gamma, h), fill).slice(offset)));
});

/** A line a + b·i through points (i, y), by least squares or through the first and last. */
type Fit = (points: readonly [number, number][]) => { a: number; b: number } | null;

const leastSquares: Fit = (points) => {
  if (points.length < 2) return null;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const b = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) / sxx;
  return { a: my - b * mx, b };
};

const twoPoint: Fit = (points) => {
  if (points.length < 2) return null;
  const [[x0, y0], [x1, y1]] = [points[0]!, points[points.length - 1]!];
  const b = (y1 - y0) / (x1 - x0);
  return { a: y0 - b * x0, b };
};

/** Each slot's forecast from a line fitted to the window ending there, refitted every `step` slots. */
function lineForecast(inv: Invocation, s: NumericStream, offset: number, windowSlots: number, stepSlots: number, h: number, exp: boolean, fit: Fit): (number | null)[] {
  let line: { a: number; b: number } | null = null;
  return Array.from({ length: inv.grid.count }, (_, k) => {
    const t = k + offset;
    if ((k & 15) === 0) inv.checkDeadline();
    if (k % stepSlots === 0) {
      const points: [number, number][] = [];
      for (let i = Math.max(0, t - windowSlots + 1); i <= t; i++) {
        const y = s.values[i] ?? null;
        if (y !== null && (!exp || y > 0)) points.push([i, exp ? Math.log(y) : y]);
      }
      line = fit(points);
    }
    if (line === null) return null;
    const y = line.a + line.b * (t + h);
    return finite(exp ? Math.exp(y) : y);
  });
}

function lineModel(fit: Fit, auto: boolean): CaqlFunction {
  const signature = auto ? sig('forecast_duration:duration') : sig('forecast_duration:duration, model_duration:duration=600, step:duration?, model:string=linear');
  return define(signature, async (inv) => {
    const h = horizon(inv);
    const modelS = auto ? Math.max(inv.num('forecast_duration'), 600) : inv.num('model_duration');
    const model = auto ? 'linear' : inv.str('model');
    if (model !== 'linear' && model !== 'exp') throw new CaqlUserError(`${inv.name}: model must be linear or exp, not '${model}'`);
    if (!(modelS > 0)) throw new CaqlUserError(`${inv.name}: model_duration must be positive`);
    const windowSlots = Math.max(2, Math.round(modelS / inv.grid.periodS));
    const stepSlots = Math.max(1, Math.round((inv.optNum('step') ?? inv.grid.periodS) / inv.grid.periodS));
    const { grid, offset } = widen(inv.grid, (windowSlots - 1) * inv.grid.periodS);
    return (await numericSources(inv, grid)).map((s) => withValues(s, lineForecast(inv, s, offset, windowSlots, stepSlots, h, model === 'exp', fit)));
  });
}

export const FORECASTING: Record<string, CaqlFunction> = lookupTable({
  'forecasting:ewma': ewma,
  'forecasting:dewma': dewma,
  'forecasting:holt_winters': holtWinters,
  'forecasting:regression': lineModel(leastSquares, false),
  'forecasting:slope': lineModel(twoPoint, false),
  'forecasting:auto': lineModel(leastSquares, true),
});
