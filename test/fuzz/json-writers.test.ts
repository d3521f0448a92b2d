// Fuzz: the legacy JSON writers — PUT|POST /write/text, /histogram/write, /write/nnt and
// POST /write/numeric — and POST /surrogate/activity_rebuild. Arrays of valid items with fields replaced by wrong types and edge
// numbers, the JSON text damaged, other top-level values, nesting around the 64-level limit.
import test from 'ava';
import fc from 'fast-check';
import { accountText, damagedText, deepJson, epochSeconds, headerText, histogramBase64, hostileJson, hostileNumber, hostileString, jsonText, metricNameArb, numberText, uuidArb, withHostileFields } from './arbitraries.js';
import { fuzz, FUZZ_UUID, useFuzzNode, type FuzzRequest } from './harness.js';

const node = useFuzzNode(test);

const head = { metric: metricNameArb, id: uuidArb };
const optional = { account_id: fc.oneof(fc.nat(100), accountText), check_name: fc.oneof(fc.constant('c_17_1::http'), hostileString) };

const textItem = fc.record({ ...head, offset: fc.oneof(epochSeconds.map(String), numberText), value: fc.oneof(hostileString, fc.constant(null)), ...optional }, { requiredKeys: ['metric', 'id', 'offset', 'value'] });
const histogramItem = fc.record({ ...head, offset: epochSeconds, period: fc.oneof(fc.constantFrom(60, 300, 1), hostileNumber), histogram: histogramBase64, ...optional }, { requiredKeys: ['metric', 'id', 'offset', 'period', 'histogram'] });

const summary = {
  count: fc.oneof(fc.nat(1000), hostileNumber),
  value: hostileNumber,
  derivative: hostileNumber,
  counter: hostileNumber,
  stddev: hostileNumber,
  derivative_stddev: hostileNumber,
  counter_stddev: hostileNumber,
};
const part = withHostileFields(fc.record(summary), 1);
const parts = fc.oneof(
  fc.constant([0, null] as unknown),
  fc.constant(null),
  fc.tuple(fc.oneof(fc.constantFrom(60, 10, 0, -60), hostileNumber), fc.array(part, { maxLength: 4 })),
  hostileJson,
);
const nntItem = fc.record({ ...head, offset: epochSeconds, ...summary, parts, ...optional }, { requiredKeys: ['metric', 'id', 'offset', 'count', 'value', 'derivative', 'counter', 'stddev', 'derivative_stddev', 'counter_stddev'] });

/** A body: items (some damaged) as JSON, the text damaged, or another top-level value. */
function body(item: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<string> {
  const items = fc.array(fc.oneof({ arbitrary: item, weight: 3 }, { arbitrary: withHostileFields(item), weight: 3 }, { arbitrary: hostileJson, weight: 1 }), { minLength: 1, maxLength: 5 }).map(jsonText);
  return fc.oneof(
    { arbitrary: items, weight: 8 },
    { arbitrary: damagedText(items), weight: 3 },
    { arbitrary: hostileJson.map(jsonText), weight: 1 },
    { arbitrary: deepJson, weight: 1 },
    { arbitrary: fc.constantFrom('', ' ', '[]', '{}', 'null', '[1e400]', '\ufeff[]', `[{"metric":"m","id":"${FUZZ_UUID}","offset":1,"metric":{}}]`), weight: 1 },
  );
}

function requests(paths: string[], methods: ('PUT' | 'POST')[], item: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(fc.constantFrom(...paths), fc.constantFrom(...methods), body(item), fc.option(headerText(accountText), { freq: 4 })).map(([path, method, text, account]) => ({
    method,
    path,
    body: text,
    headers: { 'content-type': 'application/json', ...(account === null ? {} : { 'x-svc-account-id': account }) },
  }));
}

test.serial('/write/text items: 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), requests(['/write/text'], ['PUT', 'POST'], textItem), { runs: 1000 });
});

test.serial('/histogram/write items: 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), requests(['/histogram/write'], ['PUT', 'POST'], histogramItem), { runs: 1000 });
});

test.serial('/write/nnt and /write/numeric items: 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), requests(['/write/nnt', '/write/numeric'], ['POST'], nntItem), { runs: 1200 });
});

const rebuildItem = fc.record({ check_uuid: uuidArb, metric_name: metricNameArb });

test.serial('/surrogate/activity_rebuild items: 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), requests(['/surrogate/activity_rebuild'], ['POST'], rebuildItem), { runs: 500 });
});
