// find's explain: a parsed tag query written back as text parses to the same query, in
// printable ASCII (it travels in an HTTP header).
import test from 'ava';
import fc from 'fast-check';
import { formatTagQuery, parseTagQuery, type TagQuery } from '../../model/tag-query/index.js';
import { tagQuery } from '../fuzz/tag-query.js';

const format = (text: string) => formatTagQuery(parseTagQuery(text));
/** The tree without its compiled tests (functions), for comparison. */
const tree = (q: TagQuery) => JSON.parse(JSON.stringify(q)) as unknown;

test('the parser\'s choices made explicit', (t) => {
  t.is(format('and(__name:cpu*, region:"us-east")'), 'and(__name:cpu*,region:us-east)');
  t.is(format('hint(and(a:b), index:none)'), 'and(a:b)', 'hints only steer the planner');
  t.is(format('hint(*:*)'), 'and(*:*)', 'a query opens with and/or/not');
  t.is(format('or(a:[exact]x*,b:[re]^y,not(c))'), 'or(a:[exact]b"eCo=",b:/^y/,not(c))');
  t.is(format('and(a:"x,y")'), `and(a:b"${Buffer.from('x,y').toString('base64')}")`);
  t.is(format('and(host:[graphite]web.{a,b}.*)'), `and(host:[graphite]b"${Buffer.from('web.{a,b}.*').toString('base64')}")`);
  t.is(format('and(__activity:1000-2000,__activity:-5)'), 'and(__activity:1000-2000,__activity:-5)');
  t.is(format('and(__activity:now-1h:now)'), 'and(__activity:now-3600s:now)');
  t.is(format('and(a:/x\\/y/)'), `and(a:b/${Buffer.from('x/y').toString('base64')}/)`);
  t.is(format('and(a:é)'), `and(a:b"${Buffer.from('é').toString('base64')}")`);
});

test('every query that parses comes back as itself', (t) => {
  let parsed = 0;
  fc.assert(
    fc.property(tagQuery, (text) => {
      let q: TagQuery;
      try {
        q = parseTagQuery(text);
      } catch {
        return true;
      }
      parsed++;
      // Text with a lone surrogate is not well-formed Unicode: its UTF-8 (base64) form cannot keep it.
      if (/[\ud800-\udfff]/u.test(text)) return true;
      const out = formatTagQuery(q);
      if (!/^[ -~]*$/.test(out)) return false;
      const again = parseTagQuery(out);
      // A bare leaf (from hint(leaf)) comes back inside and(...).
      const expected: TagQuery = q.op === 'tag' || q.op === 'activity' ? { op: 'and', args: [q] } : q;
      return JSON.stringify(tree(again)) === JSON.stringify(tree(expected)) && formatTagQuery(again) === out;
    }),
    { numRuns: 2000 },
  );
  t.true(parsed > 500, `${parsed} of 2000 parsed`);
});
