// The fetch document of POST /fetch (interface §2.6, §4.3), validated into a plan. JSON
// and FlatBuffer bodies both arrive here as a `FetchDocument` (seconds); every problem is
// a FetchRequestError naming the field, so a client sees exactly what to fix.
import { normalizeUuid } from '../check-field.js';
import { FetchRequestError } from './errors.js';
import { REDUCE_METHODS, type ReduceSpec } from './reduce.js';
import { outputKind, parseTransform, type StreamKind, type Transform } from './transforms.js';

export { FetchRequestError };

/** The document as a client sent it, before validation. */
export interface FetchDocument {
  start?: unknown;
  period?: unknown;
  count?: unknown;
  streams?: unknown;
  reduce?: unknown;
}

export interface StreamSpec {
  uuid: string;
  name: string;
  kind: StreamKind;
  transform: Transform;
  /** The client's label, if it sent one (else the canonical name labels the column). */
  label: string | null;
}

export interface FetchPlan {
  startMs: number;
  periodMs: number;
  count: number;
  streams: StreamSpec[];
  reduce: ReduceSpec[];
}

/** Periods one stream of a request may ask for (e.g. 69 days at 60 s, 11 years at 1 h). */
export const MAX_PERIODS = 100_000;
/** Cells one request may ask for (streams × count), so a typo cannot exhaust memory or time. */
export const MAX_CELLS = 5_000_000;
/** The last second a request may reach: the end of the year 9999. */
export const MAX_EPOCH_S = 253_402_300_799;
const KINDS: readonly StreamKind[] = ['numeric', 'histogram', 'text'];

export function planFetch(doc: unknown): FetchPlan {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new FetchRequestError('body', 'must be a JSON object');
  const d = doc as FetchDocument;
  const startS = numberField(d.start, 'start');
  if (startS < 0 || startS > MAX_EPOCH_S) throw new FetchRequestError('start', `must be epoch seconds between 0 and ${MAX_EPOCH_S}`);
  const periodS = numberField(d.period, 'period');
  if (!(periodS > 0)) throw new FetchRequestError('period', 'must be greater than 0');
  const count = numberField(d.count, 'count');
  if (!Number.isSafeInteger(count) || count <= 0) throw new FetchRequestError('count', `must be a positive integer, got ${count}`);
  if (count > MAX_PERIODS) throw new FetchRequestError('count', `${count} periods exceeds the limit of ${MAX_PERIODS} per request`);
  if (startS + periodS * count > MAX_EPOCH_S) throw new FetchRequestError('period', `start + period × count reaches past ${MAX_EPOCH_S} (the year 9999)`);
  if (!Array.isArray(d.streams) || d.streams.length === 0) throw new FetchRequestError('streams', 'must be a non-empty array');
  if (d.streams.length * count > MAX_CELLS) throw new FetchRequestError('count', `${d.streams.length} streams × ${count} slots exceeds ${MAX_CELLS} cells`);
  const periodMs = Math.round(periodS * 1000);
  if (periodMs < 1) throw new FetchRequestError('period', 'must be at least 1 ms');
  const streams = d.streams.map((s, i) => streamSpec(s, `streams[${i}]`));
  const reduce = reduceSpecs(d.reduce, streams.map((s) => outputKind(s.kind, s.transform)));
  return { startMs: Math.round(startS * 1000), periodMs, count, streams, reduce };
}

/** A number, or a string holding one (clients send both). */
function numberField(v: unknown, field: string): number {
  if (v === undefined || v === null || v === '') throw new FetchRequestError(field, 'is required');
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new FetchRequestError(field, `must be a number, got ${JSON.stringify(v)}`);
  return n;
}

function stringField(o: Record<string, unknown>, key: string, path: string, required: boolean): string | null {
  const v = o[key];
  if (v === undefined || v === null) {
    if (required) throw new FetchRequestError(`${path}.${key}`, 'is required');
    return null;
  }
  if (typeof v !== 'string') throw new FetchRequestError(`${path}.${key}`, 'must be a string');
  return v;
}

export function stringList(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new FetchRequestError(field, 'must be an array of strings');
  return v.map((p, i) => {
    if (typeof p === 'string') return p;
    if (typeof p === 'number' && Number.isFinite(p)) return String(p);
    throw new FetchRequestError(`${field}[${i}]`, 'must be a string');
  });
}

function streamSpec(raw: unknown, path: string): StreamSpec {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new FetchRequestError(path, 'must be an object');
  const o = raw as Record<string, unknown>;
  const uuidText = stringField(o, 'uuid', path, true)!;
  const uuid = normalizeUuid(uuidText);
  if (uuid === null) throw new FetchRequestError(`${path}.uuid`, `'${uuidText}' is not a uuid`);
  const name = stringField(o, 'name', path, true)!;
  if (name === '') throw new FetchRequestError(`${path}.name`, 'must not be empty');
  const kindText = stringField(o, 'kind', path, true)!;
  const kind = KINDS.find((k) => k === kindText);
  if (kind === undefined) throw new FetchRequestError(`${path}.kind`, `'${kindText}' is not one of ${KINDS.join(', ')}`);
  const transformName = stringField(o, 'transform', path, true)!;
  const params = stringList(o.transform_params, `${path}.transform_params`);
  const transform = parseTransform(kind, transformName, params, path);
  const label = stringField(o, 'label', path, false);
  return { uuid, name, kind, transform, label: label === '' ? null : label };
}

/** Reduce steps, checked against the kinds each step receives; none means `pass`. */
function reduceSpecs(raw: unknown, kinds: StreamKind[]): ReduceSpec[] {
  if (raw === undefined || raw === null) return [{ label: '', method: 'pass', params: [] }];
  if (!Array.isArray(raw)) throw new FetchRequestError('reduce', 'must be an array');
  if (raw.length === 0) return [{ label: '', method: 'pass', params: [] }];
  let current = kinds;
  return raw.map((r, i) => {
    const path = `reduce[${i}]`;
    if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new FetchRequestError(path, 'must be an object');
    const o = r as Record<string, unknown>;
    const methodName = stringField(o, 'method', path, true)!;
    const method = REDUCE_METHODS[methodName];
    if (method === undefined) throw new FetchRequestError(`${path}.method`, `'${methodName}' is not one of ${Object.keys(REDUCE_METHODS).join(', ')}`);
    const bad = current.find((k) => !method.accepts.includes(k));
    if (bad !== undefined) throw new FetchRequestError(`${path}.method`, `${methodName} does not take ${bad} input (it takes ${method.accepts.join(' or ')})`);
    const spec: ReduceSpec = { label: stringField(o, 'label', path, false) ?? '', method: methodName as ReduceSpec['method'], params: stringList(o.method_params, `${path}.method_params`) };
    method.check(spec.params, `${path}.method_params`);
    current = method.output(current);
    return spec;
  });
}
