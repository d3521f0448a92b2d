// bench/extensions: many Lua extension calls that time out (a busy loop, `--timeout-ms`),
// `--concurrency` at a time, while ingest runs — the stress that used to abort the process
// when worker threads were ended mid-compile. Prints calls/s, status counts, worker figures
// from /state, and whether the node process survived.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { startFerrite } from './peers.js';
import { envName } from '../bin/config-sources.js';

/** The extension each call runs (`--kind`): what it does past its deadline. */
const KINDS: Record<string, string> = {
  // A Lua loop: the in-VM count hook ends it at the deadline.
  busy: 'while true do end',
  // One C call (a pathological pattern) the hook cannot interrupt: the call runs away.
  stuck: 'return string.find(("a"):rep(5000), ("a-"):rep(14) .. "b")',
  // Recursion through C (a metamethod) until Lua's "C stack overflow": answered 500.
  overflow: 'local t = setmetatable({}, { __index = function(t, k) return t[k] end }) return t.x',
};
const extension = (kind: string) => `return { name = "${kind}", description = "bench", params = {}, handler = function() ${KINDS[kind]} end }`;

async function main(): Promise<void> {
  const o = new Command('bench-extensions')
    .option('--calls <n>', 'extension calls', (v) => Number(v), 10_000)
    .option('--concurrency <n>', 'calls in flight', (v) => Number(v), 20)
    .option('--timeout-ms <n>', 'luaTimeoutMs', (v) => Number(v), 50)
    .option('--kind <list>', `extensions called in turn, of ${Object.keys(KINDS).join(', ')}`, 'busy')
    .parse()
    .opts<{ calls: number; concurrency: number; timeoutMs: number; kind: string }>();
  const kinds = o.kind.split(',');
  for (const k of kinds) if (KINDS[k] === undefined) throw new Error(`--kind ${k}: not one of ${Object.keys(KINDS).join(', ')}`);
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-ext-'));
  for (const k of kinds) writeFileSync(path.join(root, `${k}.lua`), extension(k));
  process.env[envName('luaTimeoutMs')] = String(o.timeoutMs);
  const node = await startFerrite(path.join(root, 'data'), ['--extensions-dir', root], 60_000);
  let exited: number | null = null;
  node.child.on('exit', (code) => (exited = code ?? -1));
  const statuses = new Map<string, number>();
  const t0 = performance.now();
  try {
    let ingesting = true;
    const now = Math.floor(Date.now() / 1000) - 60;
    const ingest = (async () => {
      for (let i = 0; ingesting && exited === null; i++) {
        const body = Array.from({ length: 100 }, (_, k) => `M\t${now}.000\tb\`b\`c_1_1::b\`1b988fd7-d1e1-48ec-848e-55709511d43f\text.load${k}\tn\t${i}`).join('\n');
        await fetch(`${node.url}/raw`, { method: 'PUT', body }).then((r) => r.arrayBuffer()).catch(() => undefined);
      }
    })();
    let next = 0;
    const caller = async () => {
      while (next < o.calls && exited === null) {
        const kind = kinds[next++ % kinds.length]!;
        const status = await fetch(`${node.url}/extension/lua/${kind}`).then(
          async (r) => (await r.arrayBuffer(), String(r.status)),
          () => 'connection failed',
        );
        statuses.set(`${kind} ${status}`, (statuses.get(`${kind} ${status}`) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: o.concurrency }, caller));
    ingesting = false;
    await ingest;
    const seconds = (performance.now() - t0) / 1000;
    const state = exited === null ? ((await (await fetch(`${node.url}/state`)).json()) as { extensions?: unknown }) : null;
    console.log(`bench/extensions: ${o.calls} calls of ${kinds.join(', ')} (limit ${o.timeoutMs} ms), ${o.concurrency} at a time, ingest running`);
    console.log(`${seconds.toFixed(1)} s, ${(o.calls / seconds).toFixed(0)} calls/s; answers: ${JSON.stringify(Object.fromEntries(statuses))}`);
    console.log(`extension workers: ${JSON.stringify(state?.extensions ?? null)}`);
    console.log(exited === null ? 'the node process survived' : `THE NODE PROCESS EXITED (code ${exited})`);
    if (exited !== null) process.exitCode = 1;
  } finally {
    if (exited === null) await node.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
