// GET /read/<start>/<end>/<uuid>/<metric> against a real node.
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  // A short block span puts the samples in many windows, so the lead look-back crosses blocks.
  n = await startNode({ blockSpanMs: 1000 * 1000 });
  const samples: [number, string][] = [
    [100, 'a'], [200, 'a'], [300, 'b'], [4000, 'b'], [5000, 'b'], [6000, 'c'], [6000.5, 'd'],
  ];
  await put(n.url, samples.map(([s, v]) => mLine(s.toFixed(3), 'status', 's', v)).join('\n'));
});
test.after.always(async () => {
  await n?.stop();
});

const read = (start: number, end: number, query = '') => getJson(`${n.url}/read/${start}/${end}/${UUID}/status${query}`);

test('front-edge triggered by default, end exclusive', async (t) => {
  t.deepEqual((await read(0, 6000)).json, [[100000, 'a'], [300000, 'b']]);
  t.deepEqual((await read(0, 7000)).json, [[100000, 'a'], [300000, 'b'], [6000000, 'c'], [6000500, 'd']]);
});

test('lead includes the start of the run in force when nothing is exactly at start', async (t) => {
  t.deepEqual((await read(4500, 7000)).json, [[300000, 'b'], [6000000, 'c'], [6000500, 'd']]);
  t.deepEqual((await read(4000, 7000)).json, [[4000000, 'b'], [6000000, 'c'], [6000500, 'd']]);
  t.deepEqual((await read(4500, 7000, '?lead=false')).json, [[5000000, 'b'], [6000000, 'c'], [6000500, 'd']]);
});

test('the lead survives sealing into blocks', async (t) => {
  await n.node.flush();
  t.deepEqual((await read(4500, 7000)).json, [[300000, 'b'], [6000000, 'c'], [6000500, 'd']]);
});

test('get_specific_range returns every sample in range and no lead', async (t) => {
  t.deepEqual((await read(150, 5001, '?get_specific_range=true')).json, [[200000, 'a'], [300000, 'b'], [4000000, 'b'], [5000000, 'b']]);
});

test('bad parameters are 400 and an unknown metric is 404', async (t) => {
  t.is((await read(0, 7000, '?lead=maybe')).status, 400);
  t.is((await getJson(`${n.url}/read/abc/7000/${UUID}/status`)).status, 400);
  t.is((await getJson(`${n.url}/read/0/7000/${UUID}/nope`)).status, 404);
});

test('text values are truncated at the size limit', async (t) => {
  await put(n.url, mLine('100.000', 'long.text', 's', 'x'.repeat(600)));
  const r = await read(0, 1000, '').then(() => getJson(`${n.url}/read/0/1000/${UUID}/long.text`));
  t.is(r.json[0][1].length, 512);
});
