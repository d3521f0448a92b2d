// Fuzz: the legacy reads' path segments and query parameters — GET /raw/<uuid>/<metric>,
// /rollup/<uuid>/<metric>, /read/<start>/<end>/<uuid>/<metric> (text), the deprecated numeric
// /read/<start>/<end>/<period>/<uuid>/<type>/<metric>, /histogram/<start>/<end>/<period>/<uuid>/<metric> (format, min_granularity).
import test from 'ava';
import fc from 'fast-check';
import { ROLLUP_TYPE_NAMES } from '../../model/rollup/types.js';
import { hostileParam, metricNameArb, rawPathNoise, segment, uuidArb, withHostileFields } from './arbitraries.js';
import { fuzz, FUZZ_METRICS, FUZZ_UUID, useFuzzNode, type FuzzRequest } from './harness.js';

const node = useFuzzNode(test);

const T0 = 1_700_000_000;
const seconds = fc.integer({ min: T0 - 7200, max: T0 + 7200 });
/** Seconds in a path segment or parameter: mostly near the data, then edges and malformed ones. */
const secText = fc.oneof({ arbitrary: seconds.map(String), weight: 8 }, { arbitrary: fc.constantFrom('0', '1700000000.123', '1700000000.1', '-1', '99999999999999', '1e300', ''), weight: 1 }, { arbitrary: hostileParam, weight: 1 });
/** Two times, in order when both are numbers (an inverted range is one more error, not the point). */
const range = fc.tuple(secText, secText).map(([a, b]) => (Number(a) > Number(b) ? [b, a] : [a, b]) as [string, string]);
const uuid = fc.oneof({ arbitrary: fc.constant(FUZZ_UUID), weight: 8 }, { arbitrary: uuidArb.map(segment), weight: 1 }, { arbitrary: rawPathNoise, weight: 1 });
const metric = fc.oneof({ arbitrary: fc.constantFrom(...Object.values(FUZZ_METRICS).flat()).map(segment), weight: 6 }, { arbitrary: metricNameArb.map(segment), weight: 2 }, { arbitrary: rawPathNoise, weight: 1 });
const query = (p: Record<string, unknown>) => new URLSearchParams(Object.entries(p).map(([k, v]): [string, string] => [k, String(v)])).toString();
/** Well-formed parameters, or one or two of them replaced or dropped. */
const params = <T extends object>(base: fc.Arbitrary<T>) => fc.oneof({ arbitrary: base, weight: 3 }, { arbitrary: withHostileFields(base, 2, hostileParam), weight: 1 });

const span = fc.oneof(fc.constantFrom('60s', '300s', '1s', '500ms', '90s', '86400s', '1ms', '0s', '60'), hostileParam);
const raw = fc.tuple(uuid, metric, params(range.map(([start_ts, end_ts]) => ({ start_ts, end_ts })))).map(([u, m, p]) => `/raw/${u}/${m}?${query(p)}`);
const rollup = fc
  .tuple(uuid, metric, params(fc.record({ range, rollup_span: span, get_engine: fc.constantFrom('dispatch', 'nnt', 'recalc'), type: fc.constantFrom(...ROLLUP_TYPE_NAMES) }, { requiredKeys: ['range', 'rollup_span'] }).map(({ range: [start_ts, end_ts], ...rest }) => ({ start_ts, end_ts, ...rest }))))
  .map(([u, m, p]) => `/rollup/${u}/${m}?${query(p)}`);
const bool = fc.oneof(fc.constantFrom('true', 'false', '1', '0'), hostileParam);
const textRead = fc.tuple(range, uuid, metric, params(fc.record({ get_specific_range: bool, lead: bool }, { requiredKeys: [] }))).map(([[s, e], u, m, p]) => `/read/${segment(s)}/${segment(e)}/${u}/${m}?${query(p)}`);
const period = fc.oneof({ arbitrary: fc.constantFrom('60', '300', '1', '86400', '90', '0'), weight: 6 }, { arbitrary: secText, weight: 1 });
const numericRead = fc
  .tuple(range, period, uuid, fc.oneof(fc.constantFrom(...ROLLUP_TYPE_NAMES), hostileParam.map(segment)), metric)
  .map(([[s, e], p, u, type, m]) => `/read/${segment(s)}/${segment(e)}/${segment(p)}/${u}/${type}/${m}`);
const histogramOptions = params(fc.record({ format: fc.constantFrom('double', 'hex', ''), min_granularity: fc.constantFrom('auto', '60', '300', '90', '0', '999999999') }, { requiredKeys: [] }));
const histogram = fc
  .tuple(range, period, uuid, metric, histogramOptions)
  .map(([[s, e], p, u, m, o]) => `/histogram/${segment(s)}/${segment(e)}/${segment(p)}/${u}/${m}?${query(o)}`);

const request: fc.Arbitrary<FuzzRequest> = fc
  .oneof(raw, rollup, textRead, numericRead, histogram)
  .chain((path) => fc.option(fc.constantFrom({ 'x-svc-proxied': '1' }, { 'X-Snowth-Proxied': 'yes' }), { freq: 4 }).map((headers) => ({ method: 'GET' as const, path, headers: headers ?? {} })));

/**
 * Found by this fuzzer's first draft: /rollup and the numeric /read allowed 10 M periods; 0 to
 * now at 300 s (5.7 M) took 70 s and 98 MB of JSON. Now 400 beyond 100 000, as /fetch.
 */
const longReads: FuzzRequest[] = [
  { method: 'GET', path: `/rollup/${FUZZ_UUID}/fuzz.m?start_ts=0&end_ts=1700000000&rollup_span=300s` },
  { method: 'GET', path: `/read/0/1700000000/300/${FUZZ_UUID}/average/fuzz.m` },
  // A histogram period of 54 years: coarse periods merged from the base level were looked up one by one across the range (a hang).
  { method: 'GET', path: `/histogram/1699992800/1699992800/1699992800/${FUZZ_UUID}/fuzz.m?` },
  { method: 'GET', path: `/histogram/0/1700000000/86400/${FUZZ_UUID}/up` },
  // Slots of 54 years to the year 3 million: the 60 s level's chunks of the range did not fit an array (a 500).
  { method: 'GET', path: `/read/1699992800/99999999999999/1699995240/${FUZZ_UUID}/count/fuzz.m` },
];

test.serial('legacy reads: path segments and parameters get 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), request, { runs: 2000, examples: longReads });
});
