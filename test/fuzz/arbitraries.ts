// Arbitraries the fuzzers share: hostile numbers, strings and JSON values, valid-ish building
// blocks (uuids, names, timestamps), and byte- and text-level damage applied to good inputs.
import fc from 'fast-check';
import { Histogram, histogramToBase64 } from '../../model/histogram/index.js';
import { FUZZ_ACCOUNT, FUZZ_METRICS, FUZZ_UUID } from './harness.js';

/** Numbers that sit on or past some limit: int32/uint32/2^53/2^64 edges, 1e300, tiny, negative. */
const EDGE_NUMBERS = [
  0, -0, 1, -1, 0.5, -0.5, 59, 60, 61, 1e300, -1e300, 1e-300, 5e-324, Number.MAX_VALUE, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32 - 1, 2 ** 32,
  7_440_752_000, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 2 ** 63, -(2 ** 63), 2 ** 64, 1_700_000_000, 1_700_000_000.123, 1_700_000_000_000, 8.64e15, 100_000, 100_001, 5_000_001,
];

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  { arbitrary: fc.constantFrom(...EDGE_NUMBERS), weight: 4 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.integer({ min: 0, max: 2_000_000_000 }), weight: 1 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 2 },
);

/** Numbers as text: for TSV values, query parameters, headers and "numeric strings". */
export const numberText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: hostileNumber.map(String), weight: 4 },
  {
    arbitrary: fc.constantFrom(
      'NaN', 'nan', 'inf', '-inf', 'Infinity', '-Infinity', '1e309', '-1e309', '1e-400', '0x10', '0b1', '0o7', '1_000', ' 1', '1 ', '+1', '-0', '', '.', '1.', '.5',
      '1e', 'e5', '18446744073709551615', '18446744073709551616', '-9223372036854775808', '-9223372036854775809', '9'.repeat(400), '١٢٣', '1,5', '1.5.5',
      '00001', '-', '--1', '1e+308', '2.2250738585072014e-308', '1700000000.000', '1700000000.1', '1700000000.1234', 'now', '-1d', '5m', '1h', '60s', '60ms', 'null',
    ),
    weight: 3,
  },
  { arbitrary: fc.stringMatching(/^-?\d{1,25}(\.\d{0,5})?([eE][+-]?\d{1,4})?$/), weight: 2 },
);

const SPECIAL_STRINGS = [
  '', ' ', '\u0000', '\ufeff', '\ud800', '\udfff', '%', '%zz', '%00', '..', '/', '//', '\\', '"', "'", '`', '|ST[', '|ST[]', '|MT{', '|ST[a:b', 'b"', 'b"!!"', 'b"aGk="',
  '[[null]]', '*', '**', '*:*', '__name', '__check_uuid:x', '__type:numeric', '__activity:0-1', '\t', '\n', '\r\n', 'null', 'true', '{}', '[]', '<a/>', '${x}',
  'é', 'ｆｕｌｌ', '𝔘𝔫𝔦', '🙂', 'a\u0301', '\u202e', 'x'.repeat(4095), 'y'.repeat(4096), 'z'.repeat(70_000),
];

/** Strings that break assumptions: empty, control characters, lone surrogates, long, syntax of other layers. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...SPECIAL_STRINGS), weight: 3 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 1 },
  { arbitrary: fc.nat({ max: 20_000 }).map((n) => 'q'.repeat(n)), weight: 1 },
);

/** Hostile strings short enough for a URL or a header (Node refuses request heads over 16 KiB with 431). */
export const shortHostileString: fc.Arbitrary<string> = hostileString.map((s) => s.slice(0, 3000));

/** A query parameter or header value that is wrong: a bad number, a hostile string. */
export const hostileParam: fc.Arbitrary<string> = fc.oneof(numberText, shortHostileString);

/** Arrays or objects nested around the 64-level JSON limit and far past it. */
export const deepJson: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(63, 64, 65, 200, 5000), fc.constantFrom('[', '{"a":'))
  .map(([depth, open]) => open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth));

/** Number tokens JSON.parse turns into Infinity, -0 or rounded integers. */
const RAW_NUMBER_TOKENS = ['1e400', '-1e400', '1e-400', '-0', '18446744073709551617', '123456789012345678901234567890', '0.00000000000000000000000001', '1E2', '1.0'];
const RAW = '\u0000RAW:';

/** A value JSON.stringify writes as the bare token (see jsonText). */
export const rawToken = (token: string): string => `${RAW}${token}\u0000`;

/** JSON.stringify, with rawToken markers replaced by their tokens (`1e400`, unquoted). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(/"\\u0000RAW:([^"\\]*)\\u0000"/g, '$1');
}

/** Any JSON value, the edges above among them. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileNumber, weight: 3 },
  { arbitrary: hostileString, weight: 3 },
  { arbitrary: fc.constantFrom(...RAW_NUMBER_TOKENS).map(rawToken), weight: 2 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}, [null], ['1'], [1, 2], { a: 1 }), weight: 2 },
  { arbitrary: numberText, weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 },
);

/** Replaces (with `values`), removes or adds a few fields of a well-formed object. */
export function withHostileFields<T extends object>(base: fc.Arbitrary<T>, maxChanges = 3, values: fc.Arbitrary<unknown> = hostileJson): fc.Arbitrary<Record<string, unknown>> {
  return base.chain((obj) => {
    const keys = Object.keys(obj);
    const key = keys.length === 0 ? fc.string() : fc.oneof({ arbitrary: fc.constantFrom(...keys), weight: 5 }, { arbitrary: fc.string({ maxLength: 8 }), weight: 1 });
    return fc.array(fc.tuple(key, fc.option(values, { nil: undefined, freq: 6 })), { maxLength: maxChanges }).map((changes) => {
      const out: Record<string, unknown> = { ...(obj as Record<string, unknown>) };
      for (const [k, v] of changes) {
        if (v === undefined) delete out[k];
        else out[k] = v;
      }
      return out;
    });
  });
}

type ByteEdit =
  | { op: 'set'; at: number; byte: number }
  | { op: 'truncate'; at: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'delete'; at: number; length: number }
  | { op: 'u32'; at: number; value: number };

const byteEdit: fc.Arbitrary<ByteEdit> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), at: fc.nat(), byte: fc.oneof(fc.constantFrom(0, 0x7f, 0x80, 0xff), fc.nat(255)) }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ op: fc.constant('u32' as const), at: fc.nat(), value: fc.oneof(fc.constantFrom(0, 1, 0x7fffffff, 0xffffffff, 0x80000000, 0xfffffffc), fc.nat()) }),
);

function applyByteEdit(bytes: Uint8Array, e: ByteEdit): Uint8Array {
  if (bytes.length === 0) return e.op === 'insert' ? e.bytes : bytes;
  const at = e.at % (bytes.length + (e.op === 'insert' ? 1 : 0));
  switch (e.op) {
    case 'set': {
      const out = bytes.slice();
      out[at] = e.byte;
      return out;
    }
    case 'truncate':
      return bytes.slice(0, at);
    case 'insert':
      return Buffer.concat([bytes.subarray(0, at), e.bytes, bytes.subarray(at)]);
    case 'delete':
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + e.length)]);
    case 'u32': {
      const out = Buffer.from(bytes);
      if (at + 4 <= out.length) out.writeUInt32LE(e.value >>> 0, at);
      return new Uint8Array(out);
    }
  }
}

/** A few byte edits (set, truncate, insert, delete, overwrite a u32 offset) of good bytes. */
export function damagedBytes(base: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  return fc.tuple(base, fc.array(byteEdit, { minLength: 1, maxLength: 4 })).map(([bytes, edits]) => edits.reduce(applyByteEdit, bytes));
}

const TEXT_NOISE = ['\t', '\n', '\r', '"', '\\', '{', '}', '[', ']', ',', ':', '`', '|', '=', '&', '?', '%', '*', '(', ')', '/', "'", ';', ' ', '\u0000', 'é', '\ud800'];

type TextEdit = { op: 'insert' | 'replace'; at: number; text: string } | { op: 'delete'; at: number; length: number } | { op: 'truncate'; at: number };

const textEdit: fc.Arbitrary<TextEdit> = fc.oneof(
  fc.record({ op: fc.constantFrom('insert' as const, 'replace' as const), at: fc.nat(), text: fc.oneof(fc.constantFrom(...TEXT_NOISE), fc.string({ maxLength: 4 })) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
);

function applyTextEdit(text: string, e: TextEdit): string {
  const at = text.length === 0 ? 0 : e.at % (text.length + 1);
  switch (e.op) {
    case 'insert':
      return text.slice(0, at) + e.text + text.slice(at);
    case 'replace':
      return text.slice(0, at) + e.text + text.slice(at + e.text.length);
    case 'delete':
      return text.slice(0, at) + text.slice(at + e.length);
    case 'truncate':
      return text.slice(0, at);
  }
}

/** A few character edits (syntax characters inserted, spans deleted, truncation) of good text. */
export function damagedText(base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(base, fc.array(textEdit, { minLength: 1, maxLength: 4 })).map(([text, edits]) => edits.reduce(applyTextEdit, text));
}

// Valid-ish building blocks.

export const uuidArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constant(FUZZ_UUID), weight: 6 },
  { arbitrary: fc.constant(FUZZ_UUID.toUpperCase()), weight: 1 },
  { arbitrary: fc.uuid(), weight: 2 },
  { arbitrary: fc.constantFrom('', '00000000-0000-0000-0000-000000000000', FUZZ_UUID.replace(/-/g, ''), `${FUZZ_UUID}0`, `{${FUZZ_UUID}}`, 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'), weight: 1 },
  { arbitrary: hostileString, weight: 1 },
);

const TAG = fc.tuple(fc.constantFrom('host', 'dc', 'a', 'b"aGk="', '', 'x y', 'é'), fc.constantFrom('web1', 'east', '1', '', 'b"!!"', '/p a t h', 'v:w', '*')).map(([c, v]) => `${c}:${v}`);

export const metricNameArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...Object.values(FUZZ_METRICS).flat(), 'x|ST[b:2]|ST[a:1]', 'n|ST[b"aGk=":c]', 'm|MT{u:s}'), weight: 4 },
  { arbitrary: fc.stringMatching(/^[a-z][a-z0-9._-]{0,20}$/), weight: 3 },
  { arbitrary: fc.tuple(fc.stringMatching(/^[a-z][a-z0-9.]{0,8}$/), fc.array(TAG, { maxLength: 4 })).map(([n, tags]) => `${n}|ST[${tags.join(',')}]`), weight: 3 },
  { arbitrary: hostileString, weight: 2 },
);

/** Epoch seconds: mostly recent and plausible, sometimes an edge. */
export const epochSeconds: fc.Arbitrary<number> = fc.oneof(
  { arbitrary: fc.integer({ min: 1_699_990_000, max: 1_700_010_000 }), weight: 4 },
  { arbitrary: fc.integer({ min: 0, max: 2_000_000_000 }), weight: 2 },
  { arbitrary: hostileNumber, weight: 1 },
);

/** Account ids as text, never the canary's. */
export const accountText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constant(String(FUZZ_ACCOUNT)), weight: 6 },
  { arbitrary: fc.constantFrom('0', '1', '2147483647', '2147483648', '-1', '', ' 17', '17 ', '1e3', '0x11', '99999999999999999999'), weight: 2 },
  { arbitrary: numberText, weight: 1 },
).filter((a) => a.trim() !== '424242');

/** A serialized circllhist in base64: real ones, damaged ones, and text that is not base64 at all. */
export const histogramBase64: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.array(fc.oneof(fc.double({ noNaN: true }), hostileNumber), { maxLength: 20 }).map((vs) => histogramToBase64(vs.reduce((h, v) => h.insert(v), Histogram.empty()))), weight: 4 },
  {
    arbitrary: damagedBytes(fc.array(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 8 }).map((vs) => Buffer.from(histogramToBase64(vs.reduce((h, v) => h.insert(v), Histogram.empty())), 'base64'))).map((b) =>
      Buffer.from(b).toString('base64'),
    ),
    weight: 3,
  },
  { arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('base64')), weight: 1 },
  { arbitrary: hostileString, weight: 1 },
);

/** A URL path segment for any string (lone surrogates, which encodeURIComponent refuses, become U+FFFD). */
export function segment(value: string): string {
  return encodeURIComponent(value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
}

export const rawPathNoise: fc.Arbitrary<string> = fc.constantFrom('%', '%zz', '%E9', '%C3%28', '%ED%A0%80', '%00', '%2F', '..', '.', '%2e%2e', '', '+', '%20');

/** A header value fetch() will send: printable ASCII (headers cannot carry CR, LF or NUL). */
export function headerText(base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return base.map((s) => s.replace(/[^\x20-\x7e\t]/g, '?').trim());
}
