// Which transforms each stream kind takes, their parameters, and the kind of column each
// produces (interface §4.3).
import { HISTOGRAM_TRANSFORMS, type ParamRule } from './histogram.js';
import { NUMERIC_TRANSFORMS } from './numeric.js';
import { FetchRequestError } from './errors.js';
import { TEXT_TRANSFORMS } from './text.js';

export type StreamKind = 'numeric' | 'histogram' | 'text';

export interface Transform {
  name: string;
  /** The single numeric parameter of the histogram transforms that take one, else NaN. */
  param: number;
}

const NAMES: Record<StreamKind, string[]> = {
  numeric: Object.keys(NUMERIC_TRANSFORMS),
  histogram: Object.keys(HISTOGRAM_TRANSFORMS),
  text: Object.keys(TEXT_TRANSFORMS),
};

/** Only the pass-through transforms keep their stream's kind; every other one yields numbers. */
export function outputKind(kind: StreamKind, t: Transform): StreamKind {
  return kind !== 'numeric' && t.name === 'none' ? kind : 'numeric';
}

export function parseTransform(kind: StreamKind, name: string, params: string[], path: string): Transform {
  if (!NAMES[kind].includes(name)) {
    throw new FetchRequestError(`${path}.transform`, `'${name}' is not a ${kind} transform (one of ${NAMES[kind].join(', ')})`);
  }
  const rule: ParamRule = kind === 'histogram' ? (HISTOGRAM_TRANSFORMS[name]?.param ?? 'none') : 'none';
  const field = `${path}.transform_params`;
  if (rule === 'none') {
    if (params.length > 0) throw new FetchRequestError(field, `${name} takes no parameters`);
    return { name, param: NaN };
  }
  if (params.length !== 1) throw new FetchRequestError(field, `${name} takes exactly one parameter`);
  const p = params[0]!.trim() === '' ? NaN : Number(params[0]);
  if (!Number.isFinite(p)) throw new FetchRequestError(field, `'${params[0]}' is not a number`);
  if (rule === 'percent' && (p < 0 || p > 100)) throw new FetchRequestError(field, `${p} is outside [0, 100]`);
  if (rule === 'ratio' && (p < 0 || p > 1)) throw new FetchRequestError(field, `${p} is outside [0, 1]`);
  return { name, param: p };
}
