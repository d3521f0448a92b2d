// POST /fetch against a real node: every transform and reducer on small hand-built series,
// the validation errors, and JSON and FlatBuffer requests and responses agreeing.
import test from 'ava';
import { Builder, ByteBuffer } from 'flatbuffers';
import { Fetch } from '../model/fetch/generated/fetch/fetch.js';
import { ReduceRequest } from '../model/fetch/generated/fetch/reduce-request.js';
import { StreamRequest } from '../model/fetch/generated/fetch/stream-request.js';
import { DF4, HistSeries, Kind, NumericSeries, Series, TextSeries } from '../model/fetch/generated/df4_generated.js';
import { Histogram, histogramToBase64 } from '../model/histogram/index.js';
import { metricKey, placeMetric } from '../model/metric-key.js';
import { CHECK, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startNode({ histogramRollupQuietMs: 0, checkpointIntervalMs: 20 });
  const lines: string[] = [];
  // f.num: 0, 1, ..., 11 at 10 s steps over [0, 120 s)
  for (let i = 0; i < 12; i++) lines.push(mLine(`${i * 10}.000`, 'f.num', 'n', String(i)));
  // three tagged gauges for the reducers, constant per stream
  const gauges: [string, number][] = [['g|ST[region:east,host:a]', 1], ['g|ST[region:east,host:b]', 3], ['g|ST[region:west,host:c]', 10]];
  for (const [name, v] of gauges) for (let i = 0; i < 12; i++) lines.push(mLine(`${i * 10}.000`, name, 'n', String(i === 11 && v === 10 ? 40 : v)));
  // f.txt: a a b | b c
  for (const [ts, v] of [[5, 'a'], [15, 'a'], [25, 'b'], [70, 'b'], [80, 'c']] as const) lines.push(mLine(`${ts}.000`, 'f.txt', 's', v));
  const b64 = (...values: number[]) => histogramToBase64(values.reduce((h, v) => h.insert(v), Histogram.empty()));
  lines.push(['H1', '0.000', CHECK, 'f.hist', b64(1, 2)].join('\t'), ['H1', '60.000', CHECK, 'f.hist', b64(3)].join('\t'));
  lines.push(['H1', '0.000', CHECK, 'f.hist2', b64(1, 100)].join('\t'));
  const r = await put(n.url, lines.join('\n'));
  if (r.status !== 200) throw new Error(`setup ingest failed: ${JSON.stringify(r.json)}`);
});
test.after.always(async () => {
  await n?.stop();
});

interface StreamDoc {
  uuid?: string;
  name: string;
  kind: string;
  transform: string;
  transform_params?: string[];
  label?: string;
}

const stream = (name: string, kind: string, transform: string, transform_params: string[] = []): StreamDoc => ({ uuid: UUID, name, kind, transform, transform_params });
const doc = (streams: StreamDoc[], reduce: unknown[] = [{ label: '', method: 'pass', method_params: [] }], extra: Record<string, unknown> = {}) => ({ start: 0, period: 60, count: 2, streams, reduce, ...extra });

async function fetchJson(body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${n.url}/fetch`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.status, json: await res.json() };
}
async function data(streams: StreamDoc[], reduce?: unknown[]): Promise<unknown[]> {
  const r = await fetchJson(doc(streams, reduce));
  if (r.status !== 200) throw new Error(JSON.stringify(r.json));
  return r.json.data;
}
const close = (t: { true: (v: boolean, m?: string) => void }, got: unknown, want: (number | null)[]) => {
  const g = got as (number | null)[];
  t.true(g.length === want.length && g.every((v, i) => (v === null || want[i] === null ? v === want[i] : Math.abs(v - want[i]!) < 1e-9)), `${JSON.stringify(g)} ≈ ${JSON.stringify(want)}`);
};

test('DF4 JSON: head, meta with tags, one cell per slot', async (t) => {
  const r = await fetchJson(doc([stream('g|ST[region:east,host:a]', 'numeric', 'average'), { ...stream('f.num', 'numeric', 'count'), label: 'n' }], undefined, { count: 3 }));
  t.is(r.status, 200);
  t.deepEqual(r.json.version, 'DF4');
  t.deepEqual(r.json.head, { count: 3, start: 0, period: 60 });
  t.deepEqual(r.json.meta, [
    { kind: 'numeric', label: 'g|ST[host:a,region:east]', tags: [`__check_uuid:${UUID}`, '__name:g', 'host:a', 'region:east'] },
    { kind: 'numeric', label: 'n', tags: [`__check_uuid:${UUID}`, '__name:f.num'] },
  ]);
  t.deepEqual(r.json.data, [[1, 1, null], [6, 6, null]]);
});

test('numeric transforms', async (t) => {
  const names = ['average', 'sum', 'count', 'counter', 'derivative', 'stddev', 'counter_stddev', 'derivative_stddev'];
  const got = await data(names.map((tr) => stream('f.num', 'numeric', tr)));
  const want: Record<string, (number | null)[]> = {
    average: [2.5, 8.5],
    sum: [15, 51],
    count: [6, 6],
    counter: [0.1, 0.1], // the first delta of slot 1 uses the last sample of slot 0
    derivative: [0.1, 0.1],
    stddev: [Math.sqrt(35 / 12), Math.sqrt(35 / 12)],
    counter_stddev: [0, 0],
    derivative_stddev: [0, 0],
  };
  names.forEach((name, i) => close(t, got[i], want[name]!));
  // A period no rollup divides is recalculated from raw: the value transforms from the slots'
  // samples alone, the rates with the sample before each slot (here the one at 0 s).
  const odd = ['average', 'sum', 'count', 'stddev', 'derivative', 'counter'];
  const r = await fetchJson(doc(odd.map((tr) => stream('f.num', 'numeric', tr)), undefined, { start: 10, period: 25, count: 4 }));
  const oddWant: Record<string, (number | null)[]> = {
    average: [2, 4.5, 7, 9.5],
    sum: [6, 9, 21, 19],
    count: [3, 2, 3, 2],
    stddev: [Math.sqrt(2 / 3), 0.5, Math.sqrt(2 / 3), 0.5],
    derivative: [0.1, 0.1, 0.1, 0.1],
    counter: [0.1, 0.1, 0.1, 0.1],
  };
  odd.forEach((name, i) => close(t, r.json.data[i], oddWant[name]!));
  // Reduced on the shard (a sum of the streams' cells), the same cells are added.
  const summed = await fetchJson(doc([stream('f.num', 'numeric', 'average'), stream('f.num', 'numeric', 'count')], [{ label: 's', method: 'sum', method_params: [] }], { start: 10, period: 25, count: 4 }));
  close(t, summed.json.data[0], [5, 6.5, 10, 11.5]);
});

test('histogram transforms', async (t) => {
  const h = (tr: string, p: string[] = []) => stream('f.hist', 'histogram', tr, p);
  const got = await data([h('none'), h('count'), h('rate'), h('count_below', ['2.5']), h('count_above', ['1.5']), h('sum'), h('mean'), h('quantile', ['0']), h('percentile', ['100']), h('inverse_quantile', ['2.05']), h('inverse_percentile', ['2.05'])]);
  t.deepEqual(got[0], [{ '+10e-001': 1, '+20e-001': 1 }, { '+30e-001': 1 }]);
  close(t, got[1], [2, 1]);
  close(t, got[2], [2 / 60, 1 / 60]);
  close(t, got[3], [2, 0]);
  close(t, got[4], [1, 1]);
  const approx = (...vs: number[]) => vs.reduce((acc, v) => acc.insert(v), Histogram.empty());
  close(t, got[5], [approx(1, 2).approxSum(), approx(3).approxSum()]);
  close(t, got[6], [approx(1, 2).approxMean(), approx(3).approxMean()]);
  close(t, got[7], [approx(1, 2).quantiles([0])[0]!, approx(3).quantiles([0])[0]!]);
  close(t, got[8], [approx(1, 2).quantiles([1])[0]!, approx(3).quantiles([1])[0]!]);
  close(t, got[9], [0.75, 0]);
  close(t, got[10], [75, 0]);
  // Slots without data are null for every transform.
  const empty = await fetchJson(doc([h('none'), h('count')], undefined, { start: 600 }));
  t.deepEqual(empty.json.data, [[null, null], [null, null]]);
});

test('text transforms', async (t) => {
  const x = (tr: string) => stream('f.txt', 'text', tr);
  const names = ['count', 'count_cumulative', 'count_distinct', 'count_distinct_cumulative', 'count_transition', 'count_transition_cumulative', 'rate', 'rate_distinct', 'rate_distinct_cumulative', 'rate_transition'];
  const r = await fetchJson(doc([x('none'), ...names.map(x)]));
  t.is(r.status, 200);
  t.deepEqual(r.json.meta.map((m: { kind: string }) => m.kind), ['text', ...names.map(() => 'numeric')]);
  t.deepEqual(r.json.data[0], [[[5000, 'a'], [15000, 'a'], [25000, 'b']], [[10000, 'b'], [20000, 'c']]]);
  const want = [[3, 2], [3, 5], [2, 2], [2, 3], [1, 1], [1, 2], [3 / 60, 2 / 60], [2 / 60, 2 / 60], [2 / 60, 1 / 60], [1 / 60, 1 / 60]];
  want.forEach((w, i) => close(t, r.json.data[i + 1], w));
});

const gauges = () => [stream('g|ST[region:east,host:a]', 'numeric', 'average'), stream('g|ST[region:east,host:b]', 'numeric', 'average'), stream('g|ST[region:west,host:c]', 'numeric', 'average')];

test('reducers: mean, sum, merge, groupby_*, topk', async (t) => {
  const reduce = async (method: string, method_params: string[] = [], label = '') => {
    const r = await fetchJson(doc(gauges(), [{ label, method, method_params }]));
    t.is(r.status, 200, JSON.stringify(r.json));
    return r.json;
  };
  const mean = await reduce('mean', [], 'avg');
  t.deepEqual(mean.meta, [{ kind: 'numeric', label: 'avg', tags: [`__check_uuid:${UUID}`, '__name:g'] }]);
  close(t, mean.data[0], [14 / 3, 19 / 3]);
  close(t, (await reduce('sum')).data[0], [14, 19]);
  const merged = await reduce('merge');
  t.is(merged.meta[0].kind, 'histogram');
  t.deepEqual(merged.data[0][0], { '+10e-001': 1, '+30e-001': 1, '+10e+000': 1 });
  const bySum = await reduce('groupby_sum', ['region']);
  t.deepEqual(
    bySum.meta.map((m: { label: string; tags: string[] }) => [m.label, m.tags]),
    [
      ['region:east', [`__check_uuid:${UUID}`, '__name:g', 'region:east']],
      ['region:west', [`__check_uuid:${UUID}`, '__name:g', 'host:c', 'region:west']],
    ],
  );
  t.deepEqual(bySum.data, [[4, 4], [10, 15]]);
  t.deepEqual((await reduce('groupby_mean', ['region'], 'by')).data, [[2, 2], [10, 15]]);
  t.deepEqual((await reduce('groupby_mean', ['region'], 'by')).meta.map((m: { label: string }) => m.label), ['by region:east', 'by region:west']);
  const byMerge = await reduce('groupby_merge', ['region']);
  t.deepEqual(byMerge.data[0][0], { '+10e-001': 1, '+30e-001': 1 });
  const top = await reduce('topk', ['2']);
  t.deepEqual(top.meta.map((m: { label: string }) => m.label), ['g|ST[host:c,region:west]', 'g|ST[host:b,region:east]']);
  t.deepEqual((await reduce('topk', ['1', 'max'])).data, [[10, 15]]);
  t.deepEqual((await reduce('topk', ['1', 'quantile', '0'])).data, [[10, 15]]);
  t.deepEqual((await reduce('topk', ['1', 'min'])).data, [[10, 15]]);
  // Reducers chain: transforms, then groupby, then topk of the groups.
  const chained = await fetchJson(doc(gauges(), [{ label: '', method: 'groupby_sum', method_params: ['region'] }, { label: '', method: 'topk', method_params: ['1'] }]));
  t.deepEqual(chained.json.meta.map((m: { label: string }) => m.label), ['region:west']);
});

test('topk ranks histograms; merge takes histograms', async (t) => {
  const hs = [stream('f.hist', 'histogram', 'none'), stream('f.hist2', 'histogram', 'none')];
  const top = await fetchJson(doc(hs, [{ label: '', method: 'topk', method_params: ['1', 'quantile', '1'] }]));
  t.deepEqual(top.json.meta.map((m: { label: string }) => m.label), ['f.hist2']);
  const merged = await fetchJson(doc(hs, [{ label: 'all', method: 'merge', method_params: [] }]));
  t.deepEqual(merged.json.data, [[{ '+10e-001': 2, '+20e-001': 1, '+10e+001': 1 }, { '+30e-001': 1 }]]);
});

test('streams mixing kinds, unknown metrics as gaps', async (t) => {
  const r = await fetchJson(doc([stream('f.num', 'numeric', 'average'), stream('f.hist', 'histogram', 'none'), stream('f.txt', 'text', 'none'), stream('never.written', 'numeric', 'average'), stream('never.written', 'text', 'none')]));
  t.is(r.status, 200);
  t.deepEqual(r.json.meta.map((m: { kind: string }) => m.kind), ['numeric', 'histogram', 'text', 'numeric', 'text']);
  t.deepEqual(r.json.data.slice(3), [[null, null], [[], []]]);
  // A partition reads its streams of one transform together: an unknown metric among them (same
  // partition, placed between known ones) is a gap in its own place, and every other stream keeps its cells.
  const partitionOf = (name: string) => placeMetric(metricKey(UUID, name), 4).partition;
  const unknown = Array.from({ length: 64 }, (_, i) => `never.${i}`).find((name) => partitionOf(name) === partitionOf('f.num'))!;
  const mixed = await fetchJson(doc([stream('f.num', 'numeric', 'average'), stream(unknown, 'numeric', 'average'), stream('f.num', 'numeric', 'count'), stream('f.num', 'numeric', 'average')]));
  t.deepEqual(mixed.json.data, [[2.5, 8.5], [null, null], [6, 6], [2.5, 8.5]]);
});

test('validation errors name the field', async (t) => {
  const ok = doc([stream('f.num', 'numeric', 'average')]);
  const cases: [unknown, RegExp][] = [
    [{ ...ok, period: undefined }, /period: is required/],
    [{ ...ok, period: 0 }, /period: must be greater than 0/],
    [{ ...ok, count: 0 }, /count: must be a positive integer/],
    [{ ...ok, count: 1.5 }, /count: must be a positive integer/],
    [{ ...ok, start: 'soon' }, /start: must be a number/],
    [{ ...ok, streams: [] }, /streams: must be a non-empty array/],
    [{ ...ok, count: 10_000_000, streams: [stream('a', 'numeric', 'average'), stream('b', 'numeric', 'average'), stream('c', 'numeric', 'average')] }, /exceeds/],
    [doc([{ ...stream('f.num', 'numeric', 'average'), uuid: 'nope' }]), /streams\[0\]\.uuid: 'nope' is not a uuid/],
    [doc([stream('f.num', 'gauge', 'average')]), /streams\[0\]\.kind: 'gauge' is not one of/],
    [doc([stream('f.num', 'numeric', 'none')]), /streams\[0\]\.transform: 'none' is not a numeric transform/],
    [doc([stream('f.num', 'numeric', 'median')]), /streams\[0\]\.transform/],
    [doc([stream('f.txt', 'text', 'average')]), /streams\[0\]\.transform: 'average' is not a text transform/],
    [doc([stream('f.hist', 'histogram', 'quantile', ['1.5'])]), /transform_params: 1.5 is outside \[0, 1\]/],
    [doc([stream('f.hist', 'histogram', 'percentile', ['-1'])]), /transform_params: -1 is outside \[0, 100\]/],
    [doc([stream('f.hist', 'histogram', 'count_above', ['x'])]), /transform_params: 'x' is not a number/],
    [doc([stream('f.hist', 'histogram', 'count_above')]), /takes exactly one parameter/],
    [doc([stream('f.num', 'numeric', 'average', ['1'])]), /takes no parameters/],
    [doc([stream('f.num', 'numeric', 'average')], [{ method: 'median' }]), /reduce\[0\]\.method: 'median' is not one of/],
    [doc([stream('f.txt', 'text', 'none')], [{ method: 'sum' }]), /reduce\[0\]\.method: sum does not take text input/],
    [doc([stream('f.hist', 'histogram', 'none')], [{ method: 'mean' }]), /mean does not take histogram input/],
    [doc([stream('f.num', 'numeric', 'average')], [{ method: 'merge' }, { method: 'sum' }]), /reduce\[1\]\.method: sum does not take histogram input/],
    [doc([stream('f.num', 'numeric', 'average')], [{ method: 'groupby_sum', method_params: [] }]), /reduce\[0\]\.method_params: name at least one tag category/],
    [doc([stream('f.num', 'numeric', 'average')], [{ method: 'topk', method_params: ['0'] }]), /reduce\[0\]\.method_params\[0\]: K must be a positive integer/],
    [doc([stream('f.num', 'numeric', 'average')], [{ method: 'topk', method_params: ['2', 'quantile', '2'] }]), /quantile needs a parameter in \[0, 1\]/],
    [doc([stream('f.num', 'numeric', 'average')], [{ method: 'topk', method_params: ['2', 'median'] }]), /'median' is not one of mean, max, min, quantile/],
    [doc([stream('bad|ST[', 'numeric', 'average')]), /streams\[0\]\.name/],
    [[1, 2], /body: must be a JSON object/],
  ];
  for (const [body, pattern] of cases) {
    const r = await fetchJson(body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 200));
    t.regex(r.json.error, pattern);
  }
  const notJson = await fetch(`${n.url}/fetch`, { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } });
  t.is(notJson.status, 400);
  const xml = await fetch(`${n.url}/fetch`, { method: 'POST', body: '<a/>', headers: { 'content-type': 'application/xml' } });
  t.is(xml.status, 415);
  // What `curl -d` sends (IRONdb's examples), and no Content-Type at all: the body is JSON either way.
  const body = JSON.stringify(doc([stream('f.num', 'numeric', 'average')]));
  const form = await fetch(`${n.url}/fetch`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.is(form.status, 200);
  const bare = await fetch(`${n.url}/fetch`, { method: 'POST', body: new TextEncoder().encode(body) });
  t.is(bare.status, 200);
  t.deepEqual(await bare.json(), await form.json());
  const badForm = await fetch(`${n.url}/fetch`, { method: 'POST', body: 'a=1&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.is(badForm.status, 400, 'a real form body is not a fetch document');
});

/** The same document as a Fetch FlatBuffer (ms units, kind enum, uuid as 36 ASCII bytes or 16 raw). */
function fetchBuffer(d: ReturnType<typeof doc>, rawUuid = false): Uint8Array {
  const b = new Builder(256);
  const strs = (xs: string[]) => xs.map((x) => b.createString(x));
  const kinds: Record<string, Kind> = { numeric: Kind.NUMERIC, histogram: Kind.HIST, text: Kind.TEXT };
  const streams = d.streams.map((s) => {
    const uuid = rawUuid ? Buffer.from(s.uuid!.replace(/-/g, ''), 'hex') : Buffer.from(s.uuid!, 'latin1');
    return StreamRequest.createStreamRequest(b, StreamRequest.createCheckUuidVector(b, uuid), b.createString(s.name), kinds[s.kind]!, b.createString(s.transform), StreamRequest.createTransformParamsVector(b, strs(s.transform_params ?? [])), b.createString(s.label ?? ''));
  });
  const reduce = (d.reduce as { label: string; method: string; method_params: string[] }[]).map((r) =>
    ReduceRequest.createReduceRequest(b, b.createString(r.label), b.createString(r.method), ReduceRequest.createMethodParamsVector(b, strs(r.method_params))),
  );
  b.finish(Fetch.createFetch(b, BigInt(d.start * 1000), d.period * 1000, d.count, Fetch.createStreamsVector(b, streams), Fetch.createReduceVector(b, reduce)));
  return b.asUint8Array();
}

/** A DF4 FlatBuffer read back into the JSON shape. */
function df4FromBuffer(bytes: Uint8Array): any {
  const df = DF4.getRootAsDF4(new ByteBuffer(bytes));
  const head = df.head()!;
  const columns = Array.from({ length: df.columnsLength() }, (_, i) => {
    const c = df.columns(i)!;
    const meta = df.meta(i)!;
    const tags = Array.from({ length: meta.metaLength() }, (_, j) => `${meta.meta(j)!.key()}:${meta.meta(j)!.value()}`);
    let cells: unknown[];
    if (c.dataType() === Series.NumericSeries) {
      const s = c.data(new NumericSeries()) as NumericSeries;
      cells = Array.from({ length: s.valuesLength() }, (_, k) => (Number.isNaN(s.values(k)) ? null : s.values(k)));
    } else if (c.dataType() === Series.HistSeries) {
      const s = c.data(new HistSeries()) as HistSeries;
      cells = Array.from({ length: s.valuesLength() }, (_, k) => {
        const h = s.values(k)!;
        if (h.bucketsLength() === 0) return null;
        const out = Histogram.empty();
        for (let q = 0; q < h.bucketsLength(); q++) out.insertBin({ val: h.buckets(q)!.val(), exp: h.buckets(q)!.exp() }, h.buckets(q)!.count());
        return out.toLabelCounts();
      });
    } else {
      const s = c.data(new TextSeries()) as TextSeries;
      cells = Array.from({ length: s.valuesLength() }, (_, k) => {
        const m = s.values(k)!;
        return Array.from({ length: m.entriesLength() }, (_, e) => [Number(m.entries(e)!.internalOffsetMs()), m.entries(e)!.value()]);
      });
    }
    const kinds: Record<number, string> = { [Kind.NUMERIC]: 'numeric', [Kind.HIST]: 'histogram', [Kind.TEXT]: 'text' };
    return { kind: kinds[c.kind()], label: meta.label(), tags, cells };
  });
  return {
    version: df.version(),
    head: { count: head.count(), start: Number(head.startMs()) / 1000, period: head.periodMs() / 1000 },
    meta: columns.map(({ kind, label, tags }) => ({ kind, label, tags })),
    data: columns.map((c) => c.cells),
  };
}

test('FlatBuffer requests and DF4 FlatBuffer responses agree with JSON', async (t) => {
  const d = doc([stream('f.num', 'numeric', 'average'), stream('f.hist', 'histogram', 'none'), stream('f.txt', 'text', 'none'), { ...stream('f.hist', 'histogram', 'quantile', ['0.5']), label: 'q' }], [{ label: 'p', method: 'pass', method_params: [] }]);
  const viaJson = (await fetchJson(d)).json;
  for (const rawUuid of [false, true]) {
    const asJson = await fetch(`${n.url}/fetch`, { method: 'POST', body: fetchBuffer(d, rawUuid), headers: { 'content-type': 'x-irondb-fetch-flatbuffer' } });
    t.is(asJson.status, 200);
    t.deepEqual(await asJson.json(), viaJson, 'FlatBuffer request, JSON response');
  }
  const fb = await fetch(`${n.url}/fetch`, { method: 'POST', body: fetchBuffer(d), headers: { 'content-type': 'application/x-svc-fetch-flatbuffer', accept: 'x-irondb-df4-flatbuffer' } });
  t.is(fb.status, 200);
  t.is(fb.headers.get('content-type'), 'application/x-irondb-df4-flatbuffer');
  const back = df4FromBuffer(new Uint8Array(await fb.arrayBuffer()));
  t.is(back.version, 4);
  t.deepEqual(back.head, viaJson.head);
  t.deepEqual(back.data, viaJson.data);
  t.deepEqual(back.meta, viaJson.meta);
  // JSON request, FlatBuffer response too.
  const mixed = await fetch(`${n.url}/fetch`, { method: 'POST', body: JSON.stringify(d), headers: { 'content-type': 'application/json', accept: 'application/x-svc-df4-flatbuffer' } });
  t.deepEqual(df4FromBuffer(new Uint8Array(await mixed.arrayBuffer())).data, viaJson.data);
});

test('malformed FlatBuffer requests are 400 with the reason', async (t) => {
  const good = fetchBuffer(doc([stream('f.num', 'numeric', 'average')]));
  const post = (body: Uint8Array) => fetch(`${n.url}/fetch`, { method: 'POST', body, headers: { 'content-type': 'x-irondb-fetch-flatbuffer' } });
  for (const body of [good.subarray(0, good.length - 12), new Uint8Array([255, 255, 255, 127, 0, 0, 0, 0]), new Uint8Array(3)]) {
    const r = await post(body);
    t.is(r.status, 400);
    t.regex(((await r.json()) as { error: string }).error, /malformed fetch FlatBuffer|body/);
  }
  // A Fetch without period: the same field error as JSON.
  const b = new Builder(64);
  Fetch.startFetch(b);
  Fetch.addCount(b, 3);
  b.finish(Fetch.endFetch(b));
  const r = await post(b.asUint8Array());
  t.is(r.status, 400);
  t.regex(((await r.json()) as { error: string }).error, /period: is required/);
});
