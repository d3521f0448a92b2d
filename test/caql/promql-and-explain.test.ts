// `#lang="promql"` in the PQ and PQR formats, sent exactly as gosnowth's PromQLInstantQuery
// and PromQLRangeQuery send them (circonus-labs/gosnowth promql.go: POST to
// /extension/lua/public/caql_v1, `{"explain":false,"period":…,"account_id":"<n>",
// "start_time":…,"end_time":…,"format":"PQ"|"PQR","q":"#lang=\"promql\" <query>"}` without a
// trailing newline, errors read from the CAQL user-error body), and `explain=true`.
import test from 'ava';
import { ACCOUNT, at, T0, useCaqlNode } from './fixture.js';

const caql = useCaqlNode(test);

async function gosnowth(body: Record<string, unknown>): Promise<{ status: number; json: any }> {
  const r = await fetch(`${caql.node().url}/extension/lua/public/caql_v1`, { method: 'POST', body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

/** PromQLInstantQuery{Query, Time: t, AccountID}: period 1, start t − 1, end t. */
const instant = (query: string, t: number) => gosnowth({ explain: false, period: 1, account_id: ACCOUNT, start_time: t - 1, end_time: t, format: 'PQ', q: `#lang="promql" ${query}` });
/** PromQLRangeQuery{Query, Start, End, Step, AccountID}. */
const range = (query: string, start: number, end: number, step: number) => gosnowth({ explain: false, period: step, account_id: ACCOUNT, start_time: start, end_time: end, format: 'PQR', q: `#lang="promql" ${query}` });

test('PQ: an instant vector at the end time, in the Prometheus API shape', async (t) => {
  // At minute 3 the latest sample of cpu a is 4.
  const r = await instant('cpu{host="a"}', at(3));
  t.is(r.status, 200);
  t.deepEqual(r.json, { status: 'success', data: { resultType: 'vector', result: [{ metric: { __name__: 'cpu', dc: 'east', host: 'a' }, value: [at(3), '4'] }] } });
  // b has no sample at minute 2: the 5-minute lookback finds minute 1's 20; 3 + 20 + 5.
  const sum = await instant('sum(cpu)', at(2));
  t.deepEqual(sum.json.data, { resultType: 'vector', result: [{ metric: {}, value: [at(2), '28'] }] });
  const scalar = await instant('1 + 2', at(2));
  t.deepEqual(scalar.json.data, { resultType: 'scalar', result: [at(2), '3'] });
});

test('PQR: a matrix from start to end (inclusive) every period seconds', async (t) => {
  const r = await range('cpu{host="a"}', T0, at(5), 60);
  t.is(r.status, 200);
  t.deepEqual(r.json.data, { resultType: 'matrix', result: [{ metric: { __name__: 'cpu', dc: 'east', host: 'a' }, values: [1, 2, 3, 4, 5, 6].map((v, i) => [at(i), String(v)]) }] });
  // Sums a + b + c, b's gap bridged by the lookback: 16, 27, 28, 49, 60, 71.
  const sum = await range('sum(cpu)', T0, at(5), 60);
  t.deepEqual(sum.json.data.result, [{ metric: {}, values: [16, 27, 28, 49, 60, 71].map((v, i) => [at(i), String(v)]) }]);
  const every2 = await range('cpu{host="c"}', T0, at(5), 120);
  t.deepEqual(every2.json.data.result[0].values, [[T0, '5'], [at(2), '5'], [at(4), '5']]);
});

test('PQ/PQR errors come in the CAQL user-error body gosnowth reads', async (t) => {
  const bad = await instant('sum(cpu', at(1));
  t.is(bad.status, 400);
  t.regex(bad.json.user_error.message, /^PromQL: /);
  const caqlQuery = await gosnowth({ period: 60, account_id: ACCOUNT, start_time: T0, end_time: at(1), format: 'PQ', q: 'find("cpu")' });
  t.is(caqlQuery.status, 400);
  t.is(caqlQuery.json.user_error.message, 'format PQ answers #lang="promql" queries; use DF1 or DF4 for CAQL');
  const backwards = await range('cpu', at(5), T0, 60);
  t.regex(backwards.json.user_error.message, /PQR: end must not be before start/);
  const tooMany = await range('cpu', 0, 2_000_000, 1);
  t.regex(tooMany.json.user_error.message, /PQR: 2000001 steps; at most 11000/);
});

test('#lookback_window sets the PromQL staleness window', async (t) => {
  // With a 30-second lookback b's missing minute 2 is not bridged: a + c = 8.
  const r = await instant('sum(cpu)', at(2));
  t.is(r.json.data.result[0].value[1], '28');
  const short = await gosnowth({ period: 1, account_id: ACCOUNT, start_time: at(2) - 1, end_time: at(2), format: 'PQ', q: '#lang="promql" #lookback_window=30s sum(cpu)' });
  t.is(short.json.data.result[0].value[1], '8');
});

test('explain=true reports every call in DF4 head.explain, pipelines as flat lists', async (t) => {
  const r = await caql.df4('find("cpu") | stats:sum() | label("total")', { explain: true });
  t.deepEqual(r.data, [[16, 27, 8, 49, 60, 71]]);
  const e = r.head.explain;
  t.is(e.query, 'find("cpu") | stats:sum() | label("total")');
  t.deepEqual(e.info, { putype: ['number', 'number', 'number'] });
  const stages = e.plan.pipeline.map((s: any) => [s.function, s.args, s.evaluations, s.streams, s.putype]);
  t.deepEqual(stages, [
    ['find', ['cpu'], 1, 3, 'number'],
    ['stats:sum', [], 1, 1, 'number'],
    ['label', ['total'], 1, 1, 'number'],
  ]);
  t.true(e.plan.pipeline.every((s: any) => typeof s.ms === 'number' && s.ms >= 0));
  // An operator's other source is nested; a call answering nothing is `none`.
  const op = (await caql.df4('find("cpu", "and(host:a)") + find("nothing") | fill(0)', { explain: true })).head.explain;
  t.deepEqual(op.info.putype, ['number', 'none', 'none', 'none']);
  t.deepEqual(op.plan.pipeline.map((s: any) => s.function), ['find', 'op:sum', 'fill']);
  t.deepEqual(op.plan.pipeline[1].sources, [{ pipeline: [{ function: 'find', args: ['nothing'], kwargs: {}, sources: [], evaluations: 1, streams: 0, putype: 'none', ms: op.plan.pipeline[1].sources[0].pipeline[0].ms }] }]);
  t.deepEqual(op.plan.pipeline[2].kwargs, {});
  const kw = (await caql.df4('find:histogram("latency") | window:merge(2m, align="end")', { explain: 'true' })).head.explain;
  t.deepEqual(kw.plan.pipeline[1], { ...kw.plan.pipeline[1], function: 'window:merge', args: ['120s'], kwargs: { align: 'end' }, putype: 'histogram' });
  // Without explain (or in DF1) there is none.
  t.is((await caql.df4('1')).head.explain, undefined);
  t.regex(await caql.error('1', { explain: 'yes' }), /parameter explain must be true or false, got 'yes'/);
});
