// Fuzz: TSV submissions on PUT|POST /raw — M lines of every type and H1 lines, each field
// valid, at an edge, or hostile; whole bodies damaged character by character.
import test from 'ava';
import fc from 'fast-check';
import { accountText, damagedText, epochSeconds, headerText, histogramBase64, hostileString, metricNameArb, numberText, uuidArb } from './arbitraries.js';
import { FUZZ_ACCOUNT, fuzz, useFuzzNode, type FuzzRequest } from './harness.js';

const node = useFuzzNode(test);

const timestamp = fc.oneof(
  { arbitrary: fc.tuple(epochSeconds, fc.integer({ min: 0, max: 999 })).map(([s, ms]) => `${s}.${String(ms).padStart(3, '0')}`), weight: 6 },
  { arbitrary: numberText, weight: 2 },
);

const checkField = fc.oneof(
  { arbitrary: fc.tuple(fc.constantFrom('host', '', 'a b'), fc.constantFrom('http', ''), accountText, uuidArb).map(([t, m, a, u]) => `${t}\`${m}\`c_${a}_1::${m}\`${u}`), weight: 6 },
  { arbitrary: uuidArb, weight: 2 },
  { arbitrary: hostileString, weight: 1 },
);

const TYPES = ['i', 'I', 'l', 'L', 'n', 's'];
const value = fc.oneof({ arbitrary: numberText, weight: 5 }, { arbitrary: fc.constant('[[null]]'), weight: 1 }, { arbitrary: hostileString, weight: 2 });

const mLine = fc
  .tuple(timestamp, checkField, metricNameArb, fc.oneof({ arbitrary: fc.constantFrom(...TYPES), weight: 8 }, { arbitrary: fc.constantFrom('', 'x', 'nn', 'N', 'S'), weight: 1 }), value)
  .map((f) => ['M', ...f].join('\t'));
const h1Line = fc.tuple(fc.constantFrom('H1', 'H2'), timestamp, checkField, metricNameArb, histogramBase64).map((f) => f.join('\t'));
const oddLine = fc.oneof(
  hostileString,
  fc.array(hostileString, { maxLength: 8 }).map((fields) => fields.join('\t')),
  fc.constantFrom('M', 'H1', 'M\t', 'H2\t1.000', '\t\t\t\t\t', 'M\t1.000\tx\ty\tn\t1\textra'),
);
const line = fc.oneof({ arbitrary: mLine, weight: 5 }, { arbitrary: h1Line, weight: 2 }, { arbitrary: oddLine, weight: 1 });
const body = fc.tuple(fc.array(line, { minLength: 1, maxLength: 6 }), fc.constantFrom('\n', '\r\n', '\n\n')).map(([lines, sep]) => lines.join(sep));

const request: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.constantFrom('PUT' as const, 'POST' as const),
    fc.oneof({ arbitrary: body, weight: 4 }, { arbitrary: damagedText(body), weight: 2 }),
    fc.option(headerText(accountText), { freq: 3 }),
    fc.constantFrom(undefined, 'text/plain', 'application/json', 'text/tab-separated-values; charset=latin1', 'x/y', ''),
  )
  .map(([method, text, account, type]) => ({
    method,
    path: '/raw',
    body: text,
    headers: { ...(account === null ? {} : { 'x-svc-account-id': account }), ...(type === undefined ? {} : { 'content-type': type }) },
  }));

test.serial('TSV M, H1 and H2 lines: 2xx or 4xx with a JSON error, promptly', async (t) => {
  await fuzz(t, node(), request, {
    runs: 1500,
    examples: [
      // Found by this fuzzer (seed unrecorded, 1 in 6 runs): an empty Content-Type answered 415 under FER_ERR_BAD_BODY, a 400 code.
      { method: 'PUT', path: '/raw', body: 'M', headers: { 'content-type': '' } },
      { method: 'PUT', path: '/raw', body: `M\t1700000000.000\tx\`y\`c_${FUZZ_ACCOUNT}_1::y\`${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}\tm\tL\t18446744073709551616` },
    ],
  });
});
