// The OpenAPI document (/api/json) is generated from the route schemas: it lists every route
// Fastify serves (those without a schema too), documents raw bodies per media type, and the
// same schemas validate requests with ferrite's own error codes.
import test from 'ava';
import { pino } from 'pino';
import { startNode as bootNode } from '../actors/boot.js';
import { buildServer } from '../http/server.js';
import { EPOCH_S_PATTERN, SEC_MS_PATTERN, UUID_PATTERN } from '../http/schemas.js';
import { normalizeUuid } from '../model/check-field.js';
import { resolveConfig } from '../model/config.js';
import { parseEpochSec, parseReadTimestamp } from '../model/timestamp.js';
import { getJson, startNode, tempDir, UUID, type TestNode } from './helpers/node.js';

interface Operation {
  parameters?: { name: string; in: string; required?: boolean; schema: { enum?: string[]; pattern?: string } }[];
  requestBody?: { content: Record<string, unknown> };
  tags?: string[];
}
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>> };

let n: TestNode;
test.before(async () => {
  n = await startNode();
});
test.after.always(async () => n?.stop());

const openapiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}').replace(/\*/g, '{*}');

test('every route is in the document, including one registered without a schema', async (t) => {
  const dataDir = tempDir();
  const log = pino({ level: 'silent' });
  const node = await bootNode(resolveConfig({ host: '127.0.0.1', port: 0, logLevel: 'silent', partitions: 2, dataDir }), log);
  const app = buildServer(node, log);
  const routes: { method: string; url: string }[] = [];
  app.addHook('onRoute', (r) => {
    const hidden = (r.schema as { hide?: boolean } | undefined)?.hide === true;
    for (const method of [r.method].flat()) if (method !== 'HEAD' && !hidden) routes.push({ method, url: r.url });
  });
  // As another engineer's plugin would add one, with no schema at all.
  app.register(async (plugin) => plugin.get('/graphite/metrics/find', async () => []));
  await app.ready();
  const doc = app.swagger() as unknown as Doc;
  await app.close();
  await node.stop();
  t.regex(doc.openapi, /^3\./);
  t.true(routes.length > 40, `${routes.length} routes seen`);
  const missing = routes.filter((r) => doc.paths[openapiPath(r.url)]?.[r.method.toLowerCase()] === undefined);
  t.deepEqual(missing, []);
  t.truthy(doc.paths['/graphite/metrics/find']?.get);
});

test('parameters, enums and raw bodies are described', async (t) => {
  const { status, json } = await getJson(`${n.url}/api/json`);
  t.is(status, 200);
  const doc = json as Doc;
  const rollup = doc.paths['/rollup/{uuid}/{*}']!.get!;
  const param = (name: string) => rollup.parameters!.find((p) => p.name === name)!;
  t.true(param('start_ts').required);
  t.is(param('start_ts').in, 'query');
  t.true(param('type').schema.enum!.includes('counter_stddev'));
  t.truthy(param('uuid').schema.pattern);
  t.deepEqual(rollup.tags, ['read']);
  const raw = doc.paths['/raw']!;
  for (const method of ['put', 'post']) {
    t.deepEqual(Object.keys(raw[method]!.requestBody!.content).sort(), ['application/x-circonus-metric-list-flatbuffer', 'application/x-svc-metric-list-flatbuffer', 'text/plain']);
  }
  t.truthy(doc.paths['/fetch']!.post!.requestBody!.content['application/json']);
  t.true(doc.paths['/find/{account}/tags']!.get!.parameters!.some((p) => p.in === 'header' && p.name === 'x-svc-advisory-limit'));
});

test('requests are validated against the same schemas, with the handlers\' codes', async (t) => {
  const cases: [string, number, string, RegExp][] = [
    [`/raw/not-a-uuid/m?start_ts=1.000&end_ts=2.000`, 400, 'FER_ERR_BAD_UUID', /not-a-uuid/],
    [`/raw/${UUID}/m?end_ts=2.000`, 400, 'FER_ERR_MISSING_PARAM', /start_ts/],
    [`/raw/${UUID}/m?start_ts=1.5&end_ts=2.000`, 400, 'FER_ERR_BAD_TIMESTAMP', /start_ts/],
    [`/rollup/${UUID}/m?start_ts=1.000&end_ts=2.000&rollup_span=60s&type=bogus`, 400, 'FER_ERR_BAD_PARAM', /type: 'bogus' is not one of count, average/],
    [`/rollup/${UUID}/m?start_ts=1.000&end_ts=2.000&rollup_span=60s&get_engine=fast`, 400, 'FER_ERR_BAD_PARAM', /get_engine/],
    [`/read/1x/2/${UUID}/m`, 400, 'FER_ERR_BAD_EPOCH', /start/],
    [`/find/1/tags?query=and(a:b)&count_only=3`, 400, 'FER_ERR_BAD_PARAM', /count_only/],
    [`/find/1/tag_vals`, 400, 'FER_ERR_MISSING_PARAM', /query/],
  ];
  for (const [path, status, code, message] of cases) {
    const r = await getJson(`${n.url}${path}`);
    t.is(r.status, status, path);
    t.is(r.json.code, code, path);
    t.regex(r.json.error, message, path);
  }
});

test('the docs are browsable at /api/ and /api/index.html, from files the node serves', async (t) => {
  const page = await fetch(`${n.url}/api/`);
  t.is(page.status, 200);
  const html = await page.text();
  t.regex(html, /swagger-ui/);
  t.notRegex(html, /https?:\/\/(?!127\.|localhost)/, 'no asset from another host');
  const legacy = await fetch(`${n.url}/api/index.html`, { redirect: 'manual' });
  t.is(legacy.status, 302);
  t.is(legacy.headers.get('location'), '/api/');
});

test('schema patterns accept exactly what the parsers accept', (t) => {
  const samples = ['', '0', '10', '1700000000', '1700000000.000', '1700000000.5', '1700000000.0000', '-1', '1e9', ' 1', '1.000 ', '1234567890123456', 'abc',
    '1b988fd7-d1e1-48ec-848e-55709511d43f', '1B988FD7-D1E1-48EC-848E-55709511D43F', '1b988fd7d1e148ec848e55709511d43f', '1b988fd7-d1e1-48ec-848e-55709511d43'];
  for (const x of samples) {
    t.is(new RegExp(SEC_MS_PATTERN).test(x), x === '' || parseReadTimestamp(x) !== null, `timestamp '${x}'`);
    t.is(new RegExp(EPOCH_S_PATTERN).test(x), parseEpochSec(x) !== null, `epoch '${x}'`);
    t.is(new RegExp(UUID_PATTERN).test(x), normalizeUuid(x) !== null, `uuid '${x}'`);
  }
});
