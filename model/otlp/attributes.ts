// Attribute values as text, the way Prometheus renders them for labels (pcommon's AsString):
// strings as they are, booleans `true`/`false`, integers in decimal, doubles as JavaScript
// (ES6) prints them, bytes as base64, arrays and key-value lists as JSON.
import { OtlpFormatError, type Attribute } from './types.js';

/**
 * An AnyValue in either decoded form: a protobufjs message (int64 as Long, bytes as
 * Uint8Array) or the OTLP JSON mapping (int64 as a decimal string, bytes as base64).
 * Exactly one field is set; none set is the empty value.
 */
export interface AnyValueLike {
  stringValue?: unknown;
  boolValue?: unknown;
  intValue?: unknown;
  doubleValue?: unknown;
  arrayValue?: { values?: unknown };
  kvlistValue?: { values?: unknown };
  bytesValue?: unknown;
}

interface KeyValueLike {
  key?: unknown;
  value?: unknown;
}

/** A list of KeyValue as attributes; `where` names the list in errors. */
export function attributesOf(list: unknown, where: string): Attribute[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new OtlpFormatError(`${where}: attributes must be a list`);
  return list.map((kv: KeyValueLike, i) => {
    if (typeof kv !== 'object' || kv === null) throw new OtlpFormatError(`${where}: attribute ${i} is not a KeyValue`);
    const key = kv.key ?? '';
    if (typeof key !== 'string') throw new OtlpFormatError(`${where}: attribute ${i} has a key that is not a string`);
    return [key, valueText(kv.value, `${where} attribute '${key}'`)] as const;
  });
}

export function valueText(v: unknown, where: string): string {
  const raw = rawValue(v, where);
  return typeof raw === 'string' ? raw : JSON.stringify(raw);
}

type Raw = string | number | boolean | null | Raw[] | { [k: string]: Raw };

function rawValue(v: unknown, where: string): Raw {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'object') throw new OtlpFormatError(`${where}: the value is not an AnyValue`);
  const a = v as AnyValueLike;
  if (has(a, 'stringValue')) return typed(a.stringValue, 'string', where);
  if (has(a, 'boolValue')) return String(typed(a.boolValue, 'boolean', where));
  if (has(a, 'intValue')) return integerText(a.intValue, where);
  if (has(a, 'doubleValue')) return String(doubleOf(a.doubleValue, where));
  if (has(a, 'bytesValue')) return bytesText(a.bytesValue, where);
  if (has(a, 'arrayValue')) return listOf(a.arrayValue?.values, where).map((x) => nested(x, where));
  if (has(a, 'kvlistValue')) {
    const out: Record<string, Raw> = {};
    for (const [key, value] of listOf(a.kvlistValue?.values, where).map((kv) => [(kv as KeyValueLike).key, (kv as KeyValueLike).value] as const)) {
      if (typeof key !== 'string') throw new OtlpFormatError(`${where}: a kvlist key is not a string`);
      out[key] = nested(value, where);
    }
    return out;
  }
  return '';
}

/** Inside arrays and kvlists values keep their JSON types (Prometheus marshals AsRaw). */
function nested(v: unknown, where: string): Raw {
  if (v === undefined || v === null) return null;
  const a = v as AnyValueLike;
  if (has(a, 'boolValue')) return typed(a.boolValue, 'boolean', where);
  if (has(a, 'intValue')) {
    const text = integerText(a.intValue, where);
    return Number.isSafeInteger(Number(text)) ? Number(text) : text;
  }
  if (has(a, 'doubleValue')) {
    const d = doubleOf(a.doubleValue, where);
    return Number.isFinite(d) ? d : String(d);
  }
  const set = ['stringValue', 'bytesValue', 'arrayValue', 'kvlistValue'].some((k) => has(a, k));
  return set ? rawValue(v, where) : null;
}

function has(o: object, key: string): boolean {
  return Object.hasOwn(o, key) && (o as Record<string, unknown>)[key] !== undefined && (o as Record<string, unknown>)[key] !== null;
}

function typed<T extends 'string' | 'boolean'>(v: unknown, type: T, where: string): T extends 'string' ? string : boolean {
  if (typeof v !== type) throw new OtlpFormatError(`${where}: expected a ${type}`);
  return v as T extends 'string' ? string : boolean;
}

function listOf(v: unknown, where: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpFormatError(`${where}: expected a list of values`);
  return v;
}

const INTEGER = /^-?\d{1,20}$/;

/** An int64 as decimal text: a Long (protobuf), or a number or decimal string (JSON). */
export function integerText(v: unknown, where: string): string {
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  if (typeof v === 'string' && INTEGER.test(v)) return BigInt(v).toString();
  if (isLong(v)) return (BigInt.asIntN(64, (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0))).toString();
  throw new OtlpFormatError(`${where}: ${JSON.stringify(v) ?? String(v)} is not an int64`);
}

/** A double: a number, or in JSON one of the strings "NaN", "Infinity", "-Infinity" (or a numeric string). */
export function doubleOf(v: unknown, where: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (v === 'NaN') return NaN;
    if (v === 'Infinity') return Infinity;
    if (v === '-Infinity') return -Infinity;
    const n = Number(v);
    if (v.trim() !== '' && !Number.isNaN(n)) return n;
  }
  throw new OtlpFormatError(`${where}: ${JSON.stringify(v) ?? String(v)} is not a double`);
}

function bytesText(v: unknown, where: string): string {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (typeof v === 'string') return v;
  throw new OtlpFormatError(`${where}: bytes must be base64 text`);
}

export interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}

export function isLong(v: unknown): v is LongLike {
  return typeof v === 'object' && v !== null && typeof (v as LongLike).low === 'number' && typeof (v as LongLike).high === 'number';
}
