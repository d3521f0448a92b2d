// Fuzz: tag search — GET /find/<account>/tags|tag_cats|tag_vals (and the /find/tags header
// forms) and active_count, with count_only, explain, activity ranges, latest and category parameters, and the
// advisory-limit, verify-owner, proxied and deadline headers.
import test from 'ava';
import fc from 'fast-check';
import { accountText, headerText, hostileParam, numberText, rawPathNoise, segment, withHostileFields } from './arbitraries.js';
import { fuzz, useFuzzNode, type FuzzRequest } from './harness.js';
import { tagQuery } from './tag-query.js';

const node = useFuzzNode(test);

const relativeTime = fc.constantFrom('now', 'now-1h', '-1d', 'now - 1h 5s', '10000 + 1 h', '1700000000', '0', 'now+99999999999d', '-99999999999999999w');

/** Parameters that make sense together; then one or two of them replaced with hostile values or dropped. */
const validParams = fc.record(
  {
    query: tagQuery,
    activity_start_secs: relativeTime,
    activity_end_secs: relativeTime,
    activity: fc.constantFrom('0', '1'),
    latest: fc.constantFrom('0', '1', '2'),
    count_only: fc.constantFrom('0', '1'),
    explain: fc.constantFrom('0', '1'),
    category: fc.constantFrom('host', '__name', 'a', ''),
  },
  { requiredKeys: ['query'] },
);
const params = fc.oneof({ arbitrary: validParams, weight: 3 }, { arbitrary: withHostileFields(validParams, 2, hostileParam), weight: 1 });

const headers = fc.record(
  {
    'x-svc-advisory-limit': headerText(fc.oneof(fc.constantFrom('1', '10', '-1', 'none', '0', 'NONE', '99999999999999999999'), numberText)),
    'x-svc-verify-owner': fc.constantFrom('true', 'false', 'yes', ''),
    'x-svc-proxied': fc.constantFrom('1', '0', 'true'),
    'x-svc-timeout': headerText(fc.oneof(fc.constantFrom('1ms', '30s', '0'), numberText)),
    'x-svc-account-id': headerText(accountText),
  },
  { requiredKeys: [] },
);

const request: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.oneof({ arbitrary: accountText.map(segment), weight: 10 }, { arbitrary: rawPathNoise, weight: 1 }, { arbitrary: fc.constant(null), weight: 2 }),
    fc.constantFrom('tags', 'tag_cats', 'tag_vals', 'active_count'),
    params,
    headers,
  )
  .map(([account, kind, p, h]) => ({
    method: 'GET' as const,
    path: `/find/${account === null ? '' : `${account}/`}${kind}?${new URLSearchParams(p as Record<string, string>).toString()}`,
    headers: h,
  }));

/** Found by the CAQL fuzzer (seed -199392815): and(...) 2,500 deep overflowed the stack here too (500). */
const deepQuery = 'and('.repeat(2500) + 'a:b' + ')'.repeat(2500);

test.serial('tag queries on /find: 2xx or a 4xx JSON error, promptly', async (t) => {
  const examples = ['tags', 'tag_cats', 'tag_vals'].map((kind): FuzzRequest => ({ method: 'GET', path: `/find/17/${kind}?query=${encodeURIComponent(deepQuery)}` }));
  await fuzz(t, node(), request, { runs: 2000, examples });
});
