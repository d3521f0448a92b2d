// Request bodies as the node reads them (http/body.ts): whole whether or not a length is
// declared, and refused with a 413 naming the limit when too long, the node writing on.
import { request } from 'node:http';
import test from 'ava';
import { getJson, mLine, put, startNode, UUID, type TestNode } from './helpers/node.js';

const LIMIT = 4096;
let n: TestNode;
test.before(async () => {
  n = await startNode({ bodyLimitBytes: LIMIT });
});
test.after.always(async () => {
  await n?.stop();
});

/** PUT /raw with the body written in `parts`, chunked (no Content-Length) unless `length` is given. */
function putInParts(parts: readonly string[], length?: number): Promise<{ status: number; json: any }> {
  const url = new URL(`${n.url}/raw`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: length === undefined ? {} : { 'content-length': String(length) } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    let i = 0;
    const next = () => {
      if (i === parts.length) return void req.end();
      req.write(parts[i++]!);
      setTimeout(next, 5);
    };
    next();
  });
}

const rawRead = (name: string) => getJson(`${n.url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0&end_ts=9999999999.999`);
const raw = async (name: string) => (await rawRead(name)).json;

test('a body sent in chunks, with or without a declared length, arrives whole', async (t) => {
  const lines = Array.from({ length: 20 }, (_, i) => mLine(`${1000 + i}.000`, 'body.chunked', 'n', String(i)));
  const text = lines.join('\n');
  // Cut mid-line, so only a body put together in order parses.
  const parts = [text.slice(0, 7), text.slice(7, 300), text.slice(300)];
  const chunked = await putInParts(parts);
  t.is(chunked.status, 200, JSON.stringify(chunked.json));
  t.is(chunked.json.updated, 20);
  const declared = await putInParts(parts.map((p) => p.replaceAll('body.chunked', 'body.sized')), Buffer.byteLength(text.replaceAll('body.chunked', 'body.sized')));
  t.is(declared.status, 200, JSON.stringify(declared.json));
  const want = lines.map((_, i) => [(1000 + i) * 1000, i]);
  t.deepEqual(await raw('body.chunked'), want);
  t.deepEqual(await raw('body.sized'), want);
});

test('a body over the limit is a 413 naming it, declared or not, and the node writes on', async (t) => {
  const big = Array.from({ length: 100 }, (_, i) => mLine(`${1000 + i}.000`, 'body.big', 'n', String(i))).join('\n');
  t.true(Buffer.byteLength(big) > LIMIT);
  const declared = await put(n.url, big);
  t.is(declared.status, 413);
  t.is(declared.json.code, 'FER_ERR_BODY_TOO_LARGE');
  t.regex(declared.json.error, new RegExp(String(LIMIT)));
  const chunked = await putInParts([big.slice(0, 3000), big.slice(3000)]);
  t.is(chunked.status, 413);
  t.is(chunked.json.code, 'FER_ERR_BODY_TOO_LARGE');
  t.is((await rawRead('body.big')).status, 404, 'nothing of either body was stored');
  const small = await put(n.url, mLine('1000.000', 'body.after', 'n', '1'));
  t.is(small.status, 200);
  t.deepEqual(await raw('body.after'), [[1000000, 1]]);
});
