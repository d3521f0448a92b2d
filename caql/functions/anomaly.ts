// `anomaly_detection([sensitivity=50], model="constant", model_period=1d, prefill_period="auto")`
// (reference "Global Functions"; Circonus' anomaly overlay: "builds a time series model and
// compares the incoming data to the model forecast … when the residual is large over an
// extended time period, an anomaly is reported"; the score is 0–100, 100 an anomaly).
//
// What ferrite computes, on 5-minute rollups of each input stream:
//   1. a one-step forecast ŷ from the data before each 5-minute slot: `constant` exponential
//      smoothing (α = 0.1), `trending` double smoothing (α = β = 0.1), `periodic` (season
//      `model_period`), `periodic daily` (1d), `periodic weekly` (1w) Holt-Winters without
//      trend (α = γ = 0.1; see forecasting:holt_winters);
//   2. the residual r = x − ŷ, scaled by σ, the exponentially smoothed |r| (α = 0.1) before
//      this slot: z = |r| / σ (0 when both are 0, ∞ when only σ is);
//   3. the mean z̄ of the last three z (15 minutes), against a threshold k = 3·(100 − s)/s
//      from the sensitivity s (s = 50: k = 3; s = 100: any deviation; s = 0: never);
//   4. score = min(100, 100·z̄/k).
// The model trains on `prefill_period` before the view (auto: 1d, or 3 seasons for the
// periodic models). A view slot longer than 5 minutes shows the highest score inside it; a
// shorter one the score of the 5 minutes it falls in. NULL where there is no data or no z yet.
import { CaqlUserError } from '../errors.js';
import type { Invocation } from '../evaluate.js';
import { sig } from '../signature.js';
import { gridCovering, widen, type Grid } from '../stream.js';
import { dewmaSteps, ewmaSteps, holtWintersSteps, type Step } from './forecasting.js';
import { define, numericSources, withValues, type CaqlFunction } from './types.js';
import { maxOf } from '../../model/extremes.js';
import { lookupTable } from '../../model/lookup-table.js';

const ROLLUP_S = 300;
const SMOOTHING = 0.1;
/** z values averaged for a score: 15 minutes of 5-minute rollups. */
const SCORE_WINDOW = 3;
const DAY_S = 86_400;

/** The outlier threshold, in units of the typical deviation, of a sensitivity 0–100 (shared with outlier:*). */
export function thresholdOf(inv: Invocation, name = 'sensitivity'): number {
  const s = inv.num(name);
  if (!(s >= 0 && s <= 100)) throw new CaqlUserError(`${inv.name}: ${name} must be between 0 and 100, got ${s}`);
  return s === 0 ? Infinity : (3 * (100 - s)) / s;
}

/** The model's forecasts for a stream of 5-minute values, and the prefill it trains on by default. */
const MODELS: Record<string, { seasonS: ((inv: Invocation) => number) | null; forecast: (values: (number | null)[], m: number) => Step[] }> = lookupTable({
  constant: { seasonS: null, forecast: (v) => ewmaSteps(v, SMOOTHING) },
  trending: { seasonS: null, forecast: (v) => dewmaSteps(v, SMOOTHING, SMOOTHING, 0) },
  periodic: { seasonS: (inv) => inv.num('model_period'), forecast: (v, m) => holtWintersSteps(v, m, SMOOTHING, 0, SMOOTHING, 0) },
  'periodic daily': { seasonS: () => DAY_S, forecast: (v, m) => holtWintersSteps(v, m, SMOOTHING, 0, SMOOTHING, 0) },
  'periodic weekly': { seasonS: () => 7 * DAY_S, forecast: (v, m) => holtWintersSteps(v, m, SMOOTHING, 0, SMOOTHING, 0) },
});

function prefillS(inv: Invocation, seasonS: number | null): number {
  const raw = inv.lit('prefill_period');
  if (raw === undefined || (raw.type === 'string' && raw.value === 'auto')) return seasonS === null ? DAY_S : 3 * seasonS;
  const seconds = raw.type === 'duration' ? raw.seconds : raw.type === 'number' ? raw.value * 60 : NaN;
  if (!(seconds >= 0 && Number.isFinite(seconds))) throw new CaqlUserError(`${inv.name}: prefill_period must be "auto" or a duration such as 1d`);
  return seconds;
}

/** Scores 0–100 of a stream of 5-minute values, from the model's one-step forecasts. */
function anomalyScores(values: readonly (number | null)[], forecasts: readonly Step[], k: number): (number | null)[] {
  let sigma: number | null = null;
  const zs: (number | null)[] = [];
  return values.map((x, t) => {
    const f = forecasts[t]!.forecast;
    let z: number | null = null;
    if (x !== null && f !== null) {
      const r = Math.abs(x - f);
      if (sigma !== null) z = r === 0 ? 0 : sigma === 0 ? Infinity : r / sigma;
      sigma = sigma === null ? r : SMOOTHING * r + (1 - SMOOTHING) * sigma;
    }
    zs.push(z);
    if (z === null) return null;
    const recent = zs.slice(-SCORE_WINDOW).filter((v): v is number => v !== null);
    const mean = recent.reduce((a, b) => a + b, 0) / recent.length;
    if (k === Infinity) return 0;
    return k === 0 ? (mean > 0 ? 100 : 0) : Math.min(100, (100 * mean) / k);
  });
}

/** View slot i's score from the 5-minute scores (on `rollup`): the highest inside a longer slot, the enclosing one in a shorter. */
function toView(view: Grid, rollup: Grid, scores: readonly (number | null)[]): (number | null)[] {
  return Array.from({ length: view.count }, (_, i) => {
    const t = view.startS + i * view.periodS;
    const from = Math.floor((t - rollup.startS) / rollup.periodS);
    const to = Math.max(from + 1, Math.ceil((t + view.periodS - rollup.startS) / rollup.periodS));
    const inside = scores.slice(from, to).filter((v): v is number => v !== null);
    return inside.length === 0 ? null : maxOf(inside);
  });
}

const anomalyDetection = define(sig('sensitivity:number=50, model:string=constant, model_period:duration=86400, prefill_period:literal?'), async (inv) => {
  const k = thresholdOf(inv);
  const model = MODELS[inv.str('model')];
  if (model === undefined) throw new CaqlUserError(`${inv.name}: model must be one of ${Object.keys(MODELS).join(', ')}, not '${inv.str('model')}'`);
  const seasonS = model.seasonS?.(inv) ?? null;
  const m = seasonS === null ? 0 : Math.round(seasonS / ROLLUP_S);
  if (seasonS !== null && m < 2) throw new CaqlUserError(`${inv.name}: model_period must be at least 10m (two 5-minute rollups)`);
  const view = inv.grid;
  const base = gridCovering(inv.name, view.startS, view.startS + view.count * view.periodS, ROLLUP_S);
  const { grid: rollup, offset } = widen(base, prefillS(inv, seasonS));
  return (await numericSources(inv, rollup)).map((s) => {
    const scores = anomalyScores(s.values, model.forecast(s.values, m), k).slice(offset);
    return withValues(s, toView(view, base, scores));
  });
});

export const ANOMALY: Record<string, CaqlFunction> = lookupTable({ anomaly_detection: anomalyDetection });
