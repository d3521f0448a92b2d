// Linear-time pattern matching: globs agree with a reference matcher on generated input,
// and pathological patterns answer at once, also through a real node's /find.
import test from 'ava';
import fc from 'fast-check';
import { globTest, graphiteTest, PatternError, regexTest } from '../../model/tag-query/index.js';
import { mLine, put, startNode } from '../helpers/node.js';

/** Reference glob semantics by dynamic programming: `*` is any run of characters. */
function globReference(pattern: string, text: string): boolean {
  let row = new Array<boolean>(text.length + 1).fill(false);
  row[0] = true;
  for (const c of pattern) {
    const next = new Array<boolean>(text.length + 1).fill(false);
    for (let j = 0; j <= text.length; j++) {
      if (c === '*') next[j] = row[j]! || (j > 0 && next[j - 1]!);
      else next[j] = j > 0 && row[j - 1]! && text[j - 1] === c;
    }
    row = next;
  }
  return row[text.length]!;
}

test('globs agree with the reference matcher', (t) => {
  const alphabet = fc.constantFrom('a', 'b', '*', '.');
  fc.assert(
    fc.property(fc.string({ unit: alphabet, maxLength: 10 }), fc.string({ unit: fc.constantFrom('a', 'b', '.'), maxLength: 14 }), (pattern, text) => {
      if (globTest(pattern)(text) !== globReference(pattern, text)) throw new Error(`${pattern} vs ${text}`);
    }),
    { numRuns: 5000 },
  );
  t.pass();
});

test('pathological patterns are answered without backtracking', (t) => {
  const long = 'a'.repeat(5000);
  t.false(globTest('a*'.repeat(40) + 'b')(long));
  t.false(regexTest('^(a|a)+b$')(long));
  t.false(regexTest('(a*)*b')(long));
  t.false(graphiteTest('{a,a}*{a,a}*b')(long));
  t.true(regexTest('^(a|a)+$')(long));
});

test('the RE2 dialect: flags and classes work, backreferences and lookaround are refused', (t) => {
  t.true(regexTest('(?i)^WEB')('web-1'));
  t.true(regexTest('^[[:alpha:]]+$')('web'));
  t.true(regexTest('\\d{2}')('x42'));
  t.throws(() => regexTest('(a)\\1'), { instanceOf: PatternError });
  t.throws(() => regexTest('a(?=b)'), { instanceOf: PatternError });
  t.true(graphiteTest('a.[bc]*.d')('a.cx.d'));
  t.false(graphiteTest('a.*.d')('a.b.c.d'));
});

test('a pathological tag query does not hold the node', async (t) => {
  t.timeout(60_000);
  const n = await startNode();
  try {
    const name = 'a'.repeat(40);
    await put(n.url, [mLine('1000.000', `${name}|ST[host:${name}]`, 'n', '1'), mLine('1000.000', 'plain', 'n', '1')].join('\n'));
    const find = (query: string) => fetch(`${n.url}/find/123/tags?query=${encodeURIComponent(query)}`, { signal: AbortSignal.timeout(20_000) });
    // A backtracking engine would take years on each of these; the abort signal would fire.
    const [glob, regex, plain] = await Promise.all([find(`and(__name:${'a*'.repeat(12)}b)`), find('and(host:/^(a|a)+b$/)'), find('and(__name:plain)')]);
    t.deepEqual(await glob.json(), []);
    t.deepEqual(await regex.json(), []);
    t.is(((await plain.json()) as unknown[]).length, 1);
    const bad = await find('and(host:/(a)\\1/)');
    t.is(bad.status, 400);
    t.regex(((await bad.json()) as { error: string }).error, /invalid regular expression/);
  } finally {
    await n.stop();
  }
});
