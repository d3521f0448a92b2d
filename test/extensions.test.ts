// Lua extensions on a real node: the shipped example over stored data, params from the
// query string and JSON bodies, and a sandbox that refuses escapes, stops runaway code and
// caps memory without taking the node down.
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { getJson, mLine, put, startNode, tempDir, type TestNode } from './helpers/node.js';

let n: TestNode;
const NOW = Math.floor(Date.now() / 1000 / 60) * 60 - 3600;
const ACCOUNT = { 'x-svc-account-id': '123' };

const PROBE = `
return {
  name = "probe",
  description = "tries to leave the sandbox",
  params = { { name = "what", type = "string" }, { name = "n", type = "integer" }, { name = "flag", type = "boolean" } },
  handler = function(p)
    local probes = {
      io = function() return io.open("/etc/passwd") end,
      execute = function() return os.execute("echo escaped") end,
      getenv = function() return os.getenv("HOME") end,
      require = function() return require("os") end,
      dofile = function() return dofile("/etc/passwd") end,
      debug = function() return debug.sethook() end,
      dump = function() return string.dump(function() end) end,
      bytecode = function() local f, e = load("\\27LuaT\\0", "x", "b") if f == nil then error(e, 0) end return f end,
      loop = function() while true do end end,
      coloop = function() coroutine.wrap(function() while true do end end)() end,
      -- one allocation past the cap: growing to it step by step takes 100-300 ms of wasm
      -- memory growth, which raced the 300 ms time limit on a loaded machine
      memory = function() return #string.rep("x", 64 * 1024 * 1024) end,
      fail = function() error("deliberate failure", 0) end,
      pcallloop = function() while true do pcall(function() while true do end end) end end,
      pattern = function() return string.find(("a"):rep(3000), ("a-"):rep(12) .. "b") end,
      deep = function() local t = {} for i = 1, 100000 do t = { t } end return t end,
      echo = function() return { n = p.n, flag = p.flag, time = type(os.time()) } end,
    }
    return probes[p.what]()
  end,
}`;

test.before(async () => {
  const dir = tempDir('ferrite-ext-');
  copyFileSync(path.resolve('extensions/examples/top_by_mean.lua'), path.join(dir, 'top_by_mean.lua'));
  writeFileSync(path.join(dir, 'probe.lua'), PROBE);
  writeFileSync(path.join(dir, 'broken.lua'), 'return { name = "broken" }');
  n = await startNode({ extensionsDir: dir, luaTimeoutMs: 3000, luaMemoryBytes: 16 * 1024 * 1024 });
  const lines: string[] = [];
  for (let i = 0; i < 5; i++) for (const [host, off] of [['a', 0], ['b', 10], ['c', 5]] as const) lines.push(mLine(`${NOW + i * 60}.000`, `cpu|ST[host:${host}]`, 'n', String(i + off)));
  await put(n.url, lines.join('\n'));
});
test.after.always(() => n.stop());

const probe = (what: string, extra = '') => getJson(`${n.url}/extension/lua/probe?what=${what}${extra}`);

test('GET /extension/lua lists caql_v1 and the loaded extensions; a broken file is skipped', async (t) => {
  const r = await getJson(`${n.url}/extension/lua`);
  t.deepEqual(Object.keys(r.json).sort(), ['caql_v1', 'probe', 'top_by_mean']);
  t.deepEqual(r.json.probe, { description: 'tries to leave the sandbox', params: { what: { name: 'what', type: 'string' }, n: { name: 'n', type: 'integer' }, flag: { name: 'flag', type: 'boolean' } } });
});

test('the example ranks metrics by mean over stored data', async (t) => {
  const r = await fetch(`${n.url}/extension/lua/top_by_mean?query=and(__name:cpu)&start=${NOW}&end=${NOW + 300}&limit=2`, { headers: ACCOUNT });
  t.is(r.status, 200);
  t.deepEqual(await r.json(), [
    { metric: 'cpu|ST[host:b]', uuid: '1b988fd7-d1e1-48ec-848e-55709511d43f', mean: 12, periods: 5 },
    { metric: 'cpu|ST[host:c]', uuid: '1b988fd7-d1e1-48ec-848e-55709511d43f', mean: 7, periods: 5 },
  ]);
});

test('params convert from the query string or a JSON body; a wrong type is 400', async (t) => {
  t.deepEqual((await probe('echo', '&n=7&flag=true')).json, { n: 7, flag: true, time: 'number' });
  const post = await fetch(`${n.url}/extension/lua/public/probe`, { method: 'POST', body: JSON.stringify({ what: 'echo', n: 3, flag: false }) });
  t.deepEqual(await post.json(), { n: 3, flag: false, time: 'number' });
  for (const extra of ['&n=1.5', '&flag=maybe', '&other=1']) {
    const bad = await probe('echo', extra);
    t.is(bad.status, 400, extra);
    t.is(bad.json.code, 'FER_ERR_BAD_PARAM');
  }
  t.is((await getJson(`${n.url}/extension/lua/nosuch`)).status, 404);
});

test('sandbox escapes are refused', async (t) => {
  for (const what of ['io', 'execute', 'getenv', 'require', 'dofile', 'debug', 'dump', 'bytecode']) {
    const r = await probe(what);
    t.is(r.status, 500, what);
    t.is(r.json.code, 'FER_ERR_EXTENSION_FAILED', what);
  }
  t.regex((await probe('bytecode')).json.error, /binary chunk/);
});

test('runaway code times out, a memory bomb fails, errors are JSON; the node keeps serving', async (t) => {
  for (const what of ['loop', 'coloop']) {
    const r = await probe(what);
    t.is(r.status, 504, what);
    t.regex(r.json.error, /ran past its limit of 3000 ms/);
  }
  const memory = await probe('memory');
  t.is(memory.status, 500);
  t.regex(memory.json.error, /not enough memory/);
  const fail = await probe('fail');
  t.deepEqual(fail.json, { error: 'probe failed: deliberate failure', code: 'FER_ERR_EXTENSION_FAILED' });
  t.is((await getJson(`${n.url}/state`)).status, 200);
  t.deepEqual((await probe('echo', '&n=1&flag=0')).json, { n: 1, flag: false, time: 'number' });
});

test('calls that swallow the timeout or never yield are stopped from outside; none poisons later calls', async (t) => {
  // pcall catches the hook's timeout error; a Lua pattern match is one uninterruptible call.
  // Both run while another request must be answered.
  const [pcallloop, pattern, state] = await Promise.all([probe('pcallloop'), probe('pattern'), getJson(`${n.url}/state`)]);
  t.is(state.status, 200);
  for (const [what, r] of [['pcallloop', pcallloop], ['pattern', pattern]] as const) {
    t.is(r.status, 504, what);
    t.is(r.json.code, 'FER_ERR_EXTENSION_TIMEOUT', what);
  }
  const deep = await probe('deep');
  t.is(deep.status, 500);
  t.is(deep.json.code, 'FER_ERR_EXTENSION_FAILED');
  t.regex(deep.json.error, /nested deeper than 512 levels/);
  for (let i = 0; i < 3; i++) t.deepEqual((await probe('echo', `&n=${i}`)).json, { n: i, time: 'number' });
  const r = await fetch(`${n.url}/extension/lua/top_by_mean?query=and(__name:cpu)&start=${NOW}&end=${NOW + 300}&limit=1`, { headers: ACCOUNT });
  t.is(r.status, 200);
});
