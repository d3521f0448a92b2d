// PUT|POST /write/text: the legacy JSON text writer.
import test from 'ava';
import { getJson, startNode, UUID, type TestNode } from './helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startNode({ textSizeLimit: 8 });
});
test.after.always(async () => {
  await n?.stop();
});

const write = (items: unknown, method = 'PUT') =>
  fetch(`${n.url}/write/text`, { method, body: JSON.stringify(items) }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
const readAll = (name: string) => getJson(`${n.url}/read/0/99999/${UUID}/${encodeURIComponent(name)}?get_specific_range=true`);

test('items are stored like s records, offset in seconds as a string', async (t) => {
  const r = await write([
    { metric: 'wt.a', id: UUID, offset: '1000', value: 'up' },
    { metric: 'wt.a', id: UUID.toUpperCase(), offset: '1010', value: 'down' },
    { metric: 'wt.a|ST[b:c]', id: UUID, offset: '1000', value: 'a very long text' },
  ]);
  t.is(r.status, 200);
  t.deepEqual(r.json, { records: 3, updated: 3, misdirected: 0, discarded: 0, errors: 0 });
  t.deepEqual((await readAll('wt.a')).json, [[1000000, 'up'], [1010000, 'down']]);
  t.deepEqual((await readAll('wt.a|ST[b:c]')).json, [[1000000, 'a very l']], 'truncated at the size limit');
});

test('each item is validated with a clear reason', async (t) => {
  const good = { metric: 'wt.v', id: UUID, offset: '2000', value: 'x' };
  const r = await write([good, { ...good, offset: 2000 }, { ...good, offset: 'soon' }, { ...good, value: 5 }, { ...good, id: 'x' }, { ...good, metric: 'bad|ST[a b:c]' }], 'POST');
  t.is(r.status, 200);
  t.is(r.json.errors, 5);
  t.deepEqual(r.json.error_details.map((e: { item: number }) => e.item), [1, 2, 3, 4, 5]);
  t.regex(r.json.error_details[0].reason, /'offset' must be epoch seconds as a string/);
  t.regex(r.json.error_details[2].reason, /'value'/);
  t.regex(r.json.error_details[3].reason, /'id'/);
  const bad = await write([{ ...good, value: [] }]);
  t.is(bad.status, 400);
  t.regex(bad.json.error, /item 0: 'value'/);
  t.is((await write('nope')).status, 400);
});
