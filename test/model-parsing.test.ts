import test from 'ava';
import fc from 'fast-check';
import { parseAccountId, parseCheckField } from '../model/check-field.js';
import { alreadyCanonical, canonicalizeMetricName, canonicalized, compareTags, MAX_TAG_PAIR_LENGTH } from '../model/metric-name.js';
import { parseSampleValue } from '../model/sample-value.js';
import { formatSecMs, parseEpochSec, parseSecMs } from '../model/timestamp.js';
import type { AccountId, EpochMs } from '../model/types.js';

const canon = (raw: string) => {
  const r = canonicalizeMetricName(raw);
  if (!r.ok) throw new Error(r.reason);
  return r.value.canonical;
};
const canonError = (raw: string) => {
  const r = canonicalizeMetricName(raw);
  return r.ok ? null : r.reason;
};

test('timestamps need exactly three digits after the point', (t) => {
  t.is<number | null, number | null>(parseSecMs('1512691226.137'), 1512691226137);
  t.is<number | null, number | null>(parseSecMs('0.000'), 0);
  for (const bad of ['1512691226', '1512691226.13', '1512691226.1370', '-1.000', '1e9.000', ' 1.000', '1.000 ', '.123', '1,000']) {
    t.is<number | null, number | null>(parseSecMs(bad), null, bad);
  }
  fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 45 }), (ms) => parseSecMs(formatSecMs(ms as EpochMs)) === ms));
});

test('epoch seconds are plain non-negative integers', (t) => {
  t.is<number | null, number | null>(parseEpochSec('1380000000'), 1380000000);
  for (const bad of ['', '-1', '1.5', 'abc', '1e5']) t.is<number | null, number | null>(parseEpochSec(bad), null, bad);
});

test('the docs example canonicalises as documented', (t) => {
  t.is(canon('my_metric_name|MT{}|ST[env:prod]|MT{foo}|ST[color:blue]'), 'my_metric_name|ST[color:blue,env:prod]');
});

test('stream tags are merged, deduplicated and sorted by category then value', (t) => {
  t.is(canon('m|ST[b:2,a:9,b:1,a:9]'), 'm|ST[a:9,b:1,b:2]');
  t.is(canon('m|ST[]'), 'm');
  t.is(canon('m|ST[solo]|ST[x:]'), 'm|ST[solo,x:]');
  t.is(canon('plain`name.with:stuff'), 'plain`name.with:stuff');
  t.is(canon('v|ST[k:a:b=c]'), 'v|ST[k:a:b=c]');
});

test('base64 parts are decoded when the result is legal, kept encoded otherwise', (t) => {
  const enc = (s: string) => Buffer.from(s).toString('base64');
  t.is(canon(`m|ST[b"${enc('region')}":b"${enc('us-east-1')}"]`), 'm|ST[region:us-east-1]');
  t.is(canon(`foo|ST[b"${enc('~(category)')}":b"${enc('<value>')}"]`), `foo|ST[b"${enc('~(category)')}":b"${enc('<value>')}"]`);
});

test('illegal names and tags are rejected with a reason', (t) => {
  t.regex(canonError('')!, /empty/);
  t.regex(canonError('|ST[a:b]')!, /empty/);
  t.regex(canonError('m|ST[a:b')!, /unterminated/);
  t.regex(canonError('m|ST[a:b]junk')!, /unexpected text/);
  t.regex(canonError('m|ST[a b:c]')!, /illegal stream tag category/);
  t.regex(canonError('m|ST[a:b c]')!, /illegal stream tag value/);
  t.regex(canonError('m|ST[:x]')!, /illegal stream tag category/);
  t.regex(canonError('m|ST[__name:x]')!, /reserved/);
  t.regex(canonError('m\0x')!, /NUL/);
  t.regex(canonError('x'.repeat(4095))!, /limit/);
  t.is(canonError('x'.repeat(4094)), null);
});

test('tag pairs longer than 256 characters are truncated', (t) => {
  const r = canonicalizeMetricName(`m|ST[cat:${'v'.repeat(400)}]`);
  t.true(r.ok);
  if (r.ok) t.is(`${r.value.tags[0]!.category}:${r.value.tags[0]!.value}`.length, 256);
});

test('canonicalisation is idempotent', (t) => {
  const tag = fc.tuple(fc.stringMatching(/^[a-z]{1,4}$/), fc.stringMatching(/^[a-z0-9:=]{0,4}$/));
  fc.assert(
    fc.property(fc.stringMatching(/^[a-z.`]{1,8}$/), fc.array(tag, { maxLength: 6 }), (name, tags) => {
      const raw = `${name}|ST[${tags.map(([c, v]) => `${c}:${v}`).join(',')}]`;
      const once = canon(raw);
      return canon(once) === once;
    }),
  );
  t.pass();
});

test('a name canonical as submitted takes the shortcut, with the full parse\'s result', (t) => {
  t.deepEqual(alreadyCanonical('cpu.idle|ST[host:h-1,region:eu]'), canonicalized('cpu.idle|ST[host:h-1,region:eu]'));
  t.deepEqual(alreadyCanonical('m|ST[a,b:=x:y]'), canonicalized('m|ST[a,b:=x:y]'));
  t.deepEqual(alreadyCanonical('m|ST[a:b,a:c,ab,b]'), canonicalized('m|ST[a:b,a:c,ab,b]'));
  // Anything the full parse would change or refuse goes to it.
  for (const raw of ['m', 'm|ST[b:1,a:1]', 'm|ST[a:1,a:1]', 'm|ST[a:c,a:b]', 'm|ST[ab,a:b]', 'm|ST[a,a:]', 'm|ST[a:1]|MT{x:y}', 'm|ST[]', 'm|ST[a:1,]', '|ST[a:1]', 'm|ST[__name:x]', 'm|ST[a:b"eA=="]', `m|ST[a:${'v'.repeat(300)}]`, 'm|ST[a b:1]', 'm|ST[a:1]x', 'm\0|ST[a:1]']) {
    t.is(alreadyCanonical(raw), null, raw);
  }
  // Random names built from the pieces that matter: both ways agree on every one.
  const piece = fc.constantFrom('a', 'b', 'c', ':', ',', '=', '"', 'b"', 'eA==', '|ST[', '|MT{', ']', '}', ' ', '\0', '__name', 'é', '-', '.', 'v'.repeat(130));
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 4 }), fc.array(fc.array(piece, { maxLength: 5 }), { maxLength: 5 }), fc.boolean(), fc.boolean(), (name, tags, sorted, close) => {
      const texts = tags.map((p) => p.join(''));
      if (sorted) texts.sort();
      const raw = `${name.join('')}|ST[${texts.join(',')}${close ? ']' : ''}`;
      const quick = alreadyCanonical(raw);
      const full = canonicalized(raw);
      if (quick !== null) t.deepEqual(quick, full, raw);
      // And the shortcut is taken by every plain name the full parse leaves as it is.
      else {
        // (Tags that only sort as equal, `a` and `a:`, are left to the full parse on purpose.)
        const plain = full.ok && full.value.tags.every((g, i, all) => g.category.length + (g.value === null ? 0 : 1 + g.value.length) <= MAX_TAG_PAIR_LENGTH && (i === 0 || compareTags(all[i - 1]!, g) < 0));
        t.false(full.ok && plain && full.value.canonical === raw && full.value.tags.length > 0 && !raw.includes('"'), `${raw} is canonical but missed the shortcut`);
      }
      t.deepEqual(canonicalizeMetricName(raw), full, raw);
    }),
    { numRuns: 3000 },
  );
});

test('the check field gives account, lower-cased uuid and check name', (t) => {
  const r = parseCheckField('example.com`http`c_123_987654::http`1B988FD7-D1E1-48EC-848E-55709511D43F', null);
  t.deepEqual(r, { ok: true, check: { accountId: 123 as AccountId, uuid: '1b988fd7-d1e1-48ec-848e-55709511d43f', checkName: 'c_123_987654::http' } });
  t.false(parseCheckField('a`b`c_1_2::x`not-a-uuid', null).ok);
  t.false(parseCheckField('a`b`bogus`1b988fd7-d1e1-48ec-848e-55709511d43f', null).ok);
  t.false(parseCheckField('a`b`1b988fd7-d1e1-48ec-848e-55709511d43f', null).ok);
  t.false(parseCheckField('1b988fd7-d1e1-48ec-848e-55709511d43f', null).ok, 'bare uuid needs the header');
  t.true(parseCheckField('1b988fd7-d1e1-48ec-848e-55709511d43f', 7 as AccountId).ok);
  t.is<number | null, number | null>(parseAccountId('42'), 42);
  t.is<number | null, number | null>(parseAccountId('-1'), null);
  t.is<number | null, number | null>(parseAccountId('99999999999'), null);
});

test('values are parsed per type with range checks', (t) => {
  const ok = (type: string, text: string) => {
    const r = parseSampleValue(type, text);
    if (!r.ok) throw new Error(r.reason);
    return r.value;
  };
  const bad = (type: string, text: string) => {
    const r = parseSampleValue(type, text);
    return r.ok ? null : r.reason;
  };
  t.is(ok('i', '-2147483648'), -2147483648);
  t.regex(bad('i', '2147483648')!, /out of range for int32/);
  t.is(ok('I', '4294967295'), 4294967295);
  t.regex(bad('I', '-1')!, /out of range for uint32/);
  t.is(ok('l', '-9223372036854775808'), -9223372036854775808n);
  t.regex(bad('l', '9223372036854775808')!, /int64/);
  t.is(ok('L', '18446744073709551615'), 18446744073709551615n);
  t.is(ok('L', '9007199254740991'), 9007199254740991);
  t.regex(bad('L', '18446744073709551616')!, /uint64/);
  t.regex(bad('i', '1.5')!, /not an int32/);
  t.is(ok('n', '1.5e3'), 1500);
  t.true(Number.isNaN(ok('n', 'NaN') as number));
  t.is(ok('n', '-inf'), -Infinity);
  t.regex(bad('n', 'abc')!, /not a double/);
  t.is(ok('s', 'hello world'), 'hello world');
  for (const type of ['i', 'I', 'l', 'L', 'n', 's']) t.is(ok(type, '[[null]]'), null);
  t.regex(bad('x', '1')!, /unknown metric type/);
});
