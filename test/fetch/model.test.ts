// The pure parts of fetch (model/fetch): plan validation, text counting, reducers.
import test from 'ava';
import type { Column, NumericColumn } from '../../model/fetch/column.js';
import { numericCell } from '../../model/fetch/numeric.js';
import { applyReducers, type ReduceSpec } from '../../model/fetch/reduce.js';
import { planFetch } from '../../model/fetch/request.js';
import { textCounts, type TextSlots } from '../../model/fetch/text.js';
import { accumulate } from '../../model/rollup/accumulator.js';

const UUID = '1b988fd7-d1e1-48ec-848e-55709511d43f';

test('plans accept numbers as strings, fractional periods, and default to pass', (t) => {
  const p = planFetch({ start: '1700000000.5', period: 0.25, count: 4, streams: [{ uuid: UUID.toUpperCase(), name: 'a', kind: 'numeric', transform: 'sum' }] });
  t.deepEqual({ start: p.startMs, period: p.periodMs, count: p.count }, { start: 1_700_000_000_500, period: 250, count: 4 });
  t.is(p.streams[0]!.uuid, UUID);
  t.is(p.streams[0]!.label, null);
  t.deepEqual(p.reduce, [{ label: '', method: 'pass', params: [] }]);
  t.deepEqual(planFetch({ start: 0, period: 60, count: 1, streams: [{ uuid: UUID, name: 'a', kind: 'text', transform: 'none', label: 'L' }], reduce: [] }).streams[0]!.label, 'L');
  t.throws(() => planFetch({ start: -1, period: 60, count: 1, streams: [] }), { message: /start: must be epoch seconds between 0 and/ });
  t.throws(() => planFetch({ start: 0, period: 0.0001, count: 1, streams: [{}] }), { message: /period: must be at least 1 ms/ });
});

test('numeric cells: each transform of one hand-computed slot', (t) => {
  // samples 2, 4, 8 at 0, 1 s, 2 s → rates 2, 4 per second
  const acc = accumulate({ ts: [0, 1000, 2000], values: [2, 4, 8] }, 60_000, null).periods.get(0)!;
  t.is(numericCell('average', acc), 14 / 3);
  t.is(numericCell('sum', acc), 14);
  t.is(numericCell('count', acc), 3);
  t.is(numericCell('derivative', acc), 3);
  t.is(numericCell('derivative_stddev', acc), 1);
  t.is(numericCell('counter', acc), 3);
  t.true(Math.abs(numericCell('stddev', acc)! - Math.sqrt(56 / 9)) < 1e-12);
  t.is(numericCell('average', null), null);
});

test('text counts: transitions look back across slots, never before the window', (t) => {
  const slots: TextSlots = [[[0, 'x'], [1, 'x'], [2, 'y']], [], [[10, 'y'], [11, 'x'], [12, 'z']]];
  t.deepEqual(textCounts('count', slots, 1), [3, 0, 3]);
  t.deepEqual(textCounts('count_cumulative', slots, 1), [3, 3, 6]);
  t.deepEqual(textCounts('count_distinct', slots, 1), [2, 0, 3]);
  t.deepEqual(textCounts('count_distinct_cumulative', slots, 1), [2, 2, 3]);
  t.deepEqual(textCounts('count_transition', slots, 1), [1, 0, 2]);
  t.deepEqual(textCounts('count_transition_cumulative', slots, 1), [1, 1, 3]);
  t.deepEqual(textCounts('rate', slots, 2), [1.5, 0, 1.5]);
  t.deepEqual(textCounts('rate_distinct_cumulative', slots, 2), [1, 0, 0.5]);
  t.deepEqual(textCounts('rate_transition', slots, 0.5), [2, 0, 4]);
});

const col = (label: string, tags: string[], values: (number | null)[]): NumericColumn => ({ kind: 'numeric', label, tags, values });
const step = (method: ReduceSpec['method'], params: string[] = [], label = ''): ReduceSpec => ({ label, method, params });

test('reducers: gaps, missing categories and ranking', (t) => {
  const cols: Column[] = [col('a', ['dc:1', 'x:1'], [1, null, 5]), col('b', ['dc:2'], [3, null, null]), col('c', ['x:1'], [null, null, 1])];
  t.deepEqual((applyReducers(cols, [step('sum')], 3)[0] as NumericColumn).values, [4, null, 6]);
  t.deepEqual((applyReducers([], [step('sum')], 2)[0] as NumericColumn).values, [0, 0], 'no inputs sum to zeros');
  t.deepEqual((applyReducers(cols, [step('mean')], 3)[0] as NumericColumn).values, [2, null, 3]);
  const groups = applyReducers(cols, [step('groupby_sum', ['dc'])], 3);
  t.deepEqual(groups.map((g) => [g.label, g.tags]), [['dc:1', ['dc:1', 'x:1']], ['dc:2', ['dc:2']], ['', ['x:1']]]);
  const top = applyReducers(cols, [step('topk', ['3', 'max'])], 3);
  t.deepEqual(top.map((c) => c.label), ['a', 'b', 'c']);
  const quant = applyReducers([col('a', [], [1, 2, 3, 4]), col('b', [], [0, 0, 0, 10])], [step('topk', ['1', 'quantile', '0.5'])], 4);
  t.deepEqual(quant.map((c) => c.label), ['a'], 'median 2.5 beats median 0');
  const gap = applyReducers([col('empty', [], [null]), col('one', [], [1])], [step('topk', ['2'])], 1);
  t.deepEqual(gap.map((c) => c.label), ['one', 'empty'], 'a stream without data ranks last');
});
