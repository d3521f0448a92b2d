// CAQL parsing, table-driven: every row is a query and the call tree it must give
// (written back as text: name(args){sources}) or the error it must raise.
import test from 'ava';
import type { Expr, Literal } from '../../caql/ast.js';
import { parseQuery } from '../../caql/parser.js';

function lit(l: Literal): string {
  switch (l.type) {
    case 'number':
      return String(l.value);
    case 'string':
      return JSON.stringify(l.value);
    case 'duration':
      return `${l.seconds}s`;
    case 'null':
      return 'NULL';
    case 'constant':
      return l.name;
  }
}

function show(e: Expr): string {
  if (e.type === 'constant') return e.name;
  if (e.type !== 'call') return lit(e);
  const args = [...e.args.map(lit), ...Object.entries(e.kwargs).map(([k, v]) => `${k}=${lit(v)}`)];
  return `${e.name}(${args.join(',')})${e.sources.length > 0 ? `{${e.sources.map(show).join(',')}}` : ''}`;
}

const CASES: [string, string][] = [
  ['12+3', 'op:sum(){12,3}'],
  ['1 + 2 * 3', 'op:sum(){1,op:prod(){2,3}}'],
  ['(1 + 2) * 3', 'op:prod(){op:sum(){1,2},3}'],
  ['2 ^ 3 ^ 2', 'op:exp(){2,op:exp(){3,2}}'],
  ['-5', '-5'],
  ['-find("x")', 'op:neg(){find("x")}'],
  ['1 - 2 - 3', 'op:sub(){op:sub(){1,2},3}'],
  ['10 / 4', 'op:div2(){10,4}'],
  ['1 < 2 and 3 >= 2 or not 0', 'op:or(){op:and(){op:lt(){1,2},op:geq(){3,2}},op:not(){0}}'],
  ['find("a") + find("b") | stats:sum()', 'stats:sum(){op:sum(){find("a"),find("b")}}'],
  ['find("cpu", "and(host:a)", limit=10)', 'find("cpu","and(host:a)",limit=10)'],
  ["find:counter('req') | rolling:mean(5m) | label('%n')", 'label("%n"){rolling:mean(300s){find:counter("req")}}'],
  ['op:sum{find("a"), 5}', 'op:sum(){find("a"),5}'],
  ['pass(){1,2}', 'pass(){1,2}'],
  ['delay(1d 6h){1}', 'delay(108000s){1}'],
  ['window:sum(1h, period=5m){1}', 'window:sum(3600s,period=300s){1}'],
  ['histogram:percentile(50, 99.9){1}', 'histogram:percentile(50,99.9){1}'],
  ['fill(NULL){1}', 'fill(NULL){1}'],
  ['VIEW_PERIOD * 2', 'op:prod(){VIEW_PERIOD,2}'],
  ["find(p'a%20b')", 'find("a b")'],
  ['1 // a comment\n + 2', 'op:sum(){1,2}'],
  ['find ("x") {1}', 'find("x"){1}'],
  ['each:mul(-2){1}', 'each:mul(-2){1}'],
];

for (const [query, tree] of CASES) {
  test(`parses ${JSON.stringify(query)}`, (t) => {
    t.is(show(parseQuery(query).body), tree);
  });
}

test('directives come first, several on one line, with values', (t) => {
  const q = parseQuery('#min_period=10s #preview find("x")');
  t.deepEqual(q.directives, { min_period: '10s', preview: true });
  t.is(show(q.body), 'find("x")');
});

const ERRORS: [string, RegExp][] = [
  ['1 +', /unexpected end of query/],
  ['find("x"', /expected '\)'/],
  ['find', /expected '\(' or '\{' after find/],
  ['1 < 2 < 3', /comparisons do not chain/],
  ['"x', /unterminated string/],
  ['1 | 2', /a pipe must be followed by a function call/],
  ['f(a=1, 2)', /positional argument after a keyword argument/],
  ['1 ? 2', /unexpected character '\?'/],
  ['1 2', /unexpected number 2/],
];

for (const [query, message] of ERRORS) {
  test(`refuses ${JSON.stringify(query)}`, (t) => {
    t.throws(() => parseQuery(query), { message });
  });
}
