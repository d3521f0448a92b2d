// Fuzz: the thirteen DELETE endpoints' paths, query parameters and headers (delete time,
// account, confirmation, advisory limit, full-delete, delete-rollups), and check tags —
// GET|POST|PUT|DELETE /meta/check/tag/[<account>/]<uuid> with {add, remove} bodies.
// Deletes may remove fuzz data; the canary, in another account and check, must stay.
import test from 'ava';
import fc from 'fast-check';
import { accountText, damagedText, deepJson, headerText, hostileJson, hostileParam, jsonText, metricNameArb, rawPathNoise, segment, shortHostileString, uuidArb, withHostileFields } from './arbitraries.js';
import { fuzz, FUZZ_METRICS, FUZZ_UUID, useFuzzNode, type FuzzRequest } from './harness.js';
import { tagQuery } from './tag-query.js';

const node = useFuzzNode(test);

const uuid = fc.oneof({ arbitrary: fc.constant(FUZZ_UUID), weight: 8 }, { arbitrary: uuidArb.map(segment), weight: 1 }, { arbitrary: rawPathNoise, weight: 1 });
const metric = fc.oneof(
  { arbitrary: fc.constantFrom(...Object.values(FUZZ_METRICS).flat()).map(segment), weight: 4 },
  { arbitrary: fc.constantFrom('*', 'fuzz*', '*m', '**', 'a*a*a*a*a*a*a*a*a*a*a*a*b', '*|ST[*'), weight: 2 },
  { arbitrary: metricNameArb.map(segment), weight: 2 },
);
const kind = fc.constantFrom('raw', 'nnt', 'text', 'histogram');
const query = tagQuery.map((q) => `query=${segment(q)}`);

const path = fc.oneof(
  fc.tuple(kind, uuid, metric).map(([k, u, m]) => `/${k}/${u}/${m}`),
  fc.tuple(kind, fc.option(query, { freq: 8 })).map(([k, q]) => `/${k}/tags${q === null ? '' : `?${q}`}`),
  fc.tuple(fc.constantFrom('nnt', 'text', 'histogram'), uuid).map(([k, u]) => `/${k}/${u}`),
  fc.tuple(uuid, metric).map(([u, m]) => `/full/canonical/${u}/${m}`),
  fc.option(query, { freq: 8 }).map((q) => `/full/tags${q === null ? '' : `?${q}`}`),
);

const deleteHeaders = fc.record(
  {
    'x-svc-delete-time': fc.oneof({ arbitrary: fc.constantFrom('1699999000', '0', '1', '99999999999'), weight: 6 }, { arbitrary: fc.constantFrom('9007199254741', '-1', '1e3', '1700000000.5', ''), weight: 1 }, { arbitrary: hostileParam, weight: 1 }),
    'x-svc-account-id': accountText,
    'x-svc-confirm-delete': fc.constantFrom('0', '1', 'yes', ''),
    'x-svc-advisory-limit': fc.oneof(fc.constantFrom('1', '2', '-1', 'none', '0', '99999999999999999999'), hostileParam),
    'x-svc-full-delete': fc.constantFrom('0', '1', '2', 'true'),
    'x-svc-delete-rollups': fc.oneof(fc.constantFrom('60', '60,300', '86400', '61', '60,,300', ' 60 , 300 ', 'all'), hostileParam),
  },
  { requiredKeys: ['x-svc-delete-time', 'x-svc-account-id'] },
);
/** Mostly what the endpoint needs, else anything: the headers with hostile replacements or missing. */
const headers = fc.oneof({ arbitrary: deleteHeaders, weight: 3 }, { arbitrary: withHostileFields(deleteHeaders, 2, hostileParam), weight: 1 }).map((h) =>
  Object.fromEntries(
    Object.entries(h)
      .filter(([k]) => /^[\w!#$%&'*+.^`|~-]+$/.test(k))
      .map(([k, v]): [string, string] => [k, String(v).replace(/[^\x20-\x7e\t]/g, '?').trim()]),
  ),
);

const deletes: fc.Arbitrary<FuzzRequest> = fc.tuple(path, headers).map(([p, h]) => ({ method: 'DELETE', path: p, headers: h }));

/** A tag query nested 2,500 deep overflowed the stack here too (500; see the CAQL fuzzer's find). */
const deepQuery = segment('and('.repeat(2500) + 'a:b' + ')'.repeat(2500));
const deepDeletes = ['/raw/tags', '/histogram/tags', '/full/tags'].map((p): FuzzRequest => ({ method: 'DELETE', path: `${p}?query=${deepQuery}`, headers: { 'x-svc-delete-time': '1', 'x-svc-account-id': '17' } }));

test.serial('deletes: paths, parameters and headers get 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), deletes, { runs: 1500, examples: deepDeletes });
});

const tag = fc.oneof(
  { arbitrary: fc.constantFrom('env:prod', 'team:', 'b"ZW52":b"cHJvZA=="', '__name:x', 'role:db', 'x:y:z'), weight: 4 },
  { arbitrary: fc.constantFrom('nocolon', ':', ':v', 'a b:c', 'a,b:c', 'b"!!":x', '', 'k:' + 'v'.repeat(300)), weight: 1 },
  { arbitrary: shortHostileString, weight: 1 },
);
const change = fc.record({ add: fc.array(tag, { maxLength: 4 }), remove: fc.array(tag, { maxLength: 3 }) }, { requiredKeys: [] });
const changeBody = fc.oneof(
  { arbitrary: change.map(jsonText), weight: 5 },
  { arbitrary: withHostileFields(change, 2).map(jsonText), weight: 2 },
  { arbitrary: damagedText(change.map(jsonText)), weight: 1 },
  { arbitrary: fc.oneof(hostileJson.map(jsonText), deepJson, fc.constant('')), weight: 1 },
);
const checkTags: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.constantFrom('GET' as const, 'POST' as const, 'PUT' as const, 'DELETE' as const),
    fc.option(accountText.map(segment), { freq: 3 }),
    uuid,
    changeBody,
    fc.option(headerText(accountText), { freq: 3 }),
  )
  .map(([method, account, u, body, header]) => ({
    method,
    path: `/meta/check/tag/${account === null ? '' : `${account}/`}${u}`,
    ...(method === 'POST' || method === 'PUT' ? { body } : {}),
    headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'x-svc-account-id': header }) },
  }));

test.serial('check tags: 2xx or a 4xx JSON error', async (t) => {
  await fuzz(t, node(), checkTags, { runs: 1000 });
});
