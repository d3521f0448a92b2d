// Parameters of Prometheus' HTTP query API: times are RFC 3339 or (fractional) epoch
// seconds, steps and timeouts a duration or a number of seconds.
import { PromQLError } from './ast.js';
import { durationMs } from './parse.js';

export function parseTimeParam(name: string, raw: string): number {
  const text = raw.trim();
  if (/^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const ms = /^\d{4}-\d\d-\d\dT/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new PromQLError(`invalid parameter ${JSON.stringify(name)}: cannot parse ${JSON.stringify(raw)} to a valid timestamp`);
  return ms;
}

export function parseStepParam(raw: string): number {
  const text = raw.trim();
  let ms: number;
  try {
    ms = /^\d+(\.\d+)?$/.test(text) ? Math.round(Number(text) * 1000) : durationMs(text);
  } catch {
    throw new PromQLError(`invalid parameter "step": cannot parse ${JSON.stringify(raw)} to a valid duration`);
  }
  if (!(ms > 0)) throw new PromQLError('zero or negative query resolution step widths are not accepted. Try a positive integer');
  return ms;
}
