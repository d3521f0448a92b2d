import type { NumericValue } from './types.js';

/** The TYPE column of an M record (interface §2.8). */
export type MetricType = 'i' | 'I' | 'l' | 'L' | 'n' | 's';

export const NULL_VALUE = '[[null]]';

export type ParsedValue =
  | { ok: true; kind: 'numeric'; value: NumericValue }
  | { ok: true; kind: 'text'; value: string | null }
  | { ok: false; reason: string };

const INTEGER = /^[+-]?\d+$/;
// A decimal or exponent form, or one of the IEEE-754 specials collectors emit.
const DOUBLE = /^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|nan)$/i;

const RANGES: Record<'i' | 'I' | 'l' | 'L', { min: bigint; max: bigint; label: string }> = {
  i: { min: -(2n ** 31n), max: 2n ** 31n - 1n, label: 'int32' },
  I: { min: 0n, max: 2n ** 32n - 1n, label: 'uint32' },
  l: { min: -(2n ** 63n), max: 2n ** 63n - 1n, label: 'int64' },
  L: { min: 0n, max: 2n ** 64n - 1n, label: 'uint64' },
};

/** Parses a VALUE field for its TYPE with range checks; `[[null]]` is null for every type. */
export function parseSampleValue(type: string, text: string): ParsedValue {
  if (type === 's') return { ok: true, kind: 'text', value: text === NULL_VALUE ? null : text };
  if (text === NULL_VALUE && isNumericType(type)) return { ok: true, kind: 'numeric', value: null };
  switch (type) {
    case 'n':
      return parseDouble(text);
    case 'i':
    case 'I':
    case 'l':
    case 'L':
      return parseInteger(type, text);
    default:
      return { ok: false, reason: `unknown metric type '${type}' (expected one of i I l L n s)` };
  }
}

function isNumericType(type: string): boolean {
  return type === 'i' || type === 'I' || type === 'l' || type === 'L' || type === 'n';
}

function parseDouble(text: string): ParsedValue {
  if (!DOUBLE.test(text)) return { ok: false, reason: `value '${text}' is not a double` };
  const lower = text.toLowerCase().replace(/^\+/, '');
  const value = lower.endsWith('nan') ? NaN : lower.includes('inf') ? (lower.startsWith('-') ? -Infinity : Infinity) : Number(text);
  return { ok: true, kind: 'numeric', value };
}

function parseInteger(type: 'i' | 'I' | 'l' | 'L', text: string): ParsedValue {
  const range = RANGES[type];
  if (!INTEGER.test(text)) return { ok: false, reason: `value '${text}' is not an ${range.label}` };
  // Fast path: up to 15 digits is exact as a double, so no bigint is needed.
  if (text.length <= 15) {
    const n = Number(text);
    if (n < Number(range.min) || n > Number(range.max)) {
      return { ok: false, reason: `value ${text} is out of range for ${range.label}` };
    }
    return { ok: true, kind: 'numeric', value: n === 0 ? 0 : n };
  }
  const big = BigInt(text);
  if (big < range.min || big > range.max) {
    return { ok: false, reason: `value ${text} is out of range for ${range.label}` };
  }
  const value = big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  return { ok: true, kind: 'numeric', value };
}
