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

const BUSY = `return { name = "busy", description = "loops until stopped", params = {}, handler = function() while true do end end }`;

async function main(): Promise<void> {
  const o = new Command('bench-extensions')
    .option('--calls <n>', 'extension calls', (v) => Number(v), 10_000)
    .option('--concurrency <n>', 'calls in flight', (v) => Number(v), 20)
    .option('--timeout-ms <n>', 'luaTimeoutMs', (v) => Number(v), 50)
    .parse()
    .opts<{ calls: number; concurrency: number; timeoutMs: number }>();
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-ext-'));
  writeFileSync(path.join(root, 'busy.lua'), BUSY);
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
      while (next++ < o.calls && exited === null) {
        const status = await fetch(`${node.url}/extension/lua/busy`).then(
          async (r) => (await r.arrayBuffer(), String(r.status)),
          () => 'connection failed',
        );
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: o.concurrency }, caller));
    ingesting = false;
    await ingest;
    const seconds = (performance.now() - t0) / 1000;
    const state = exited === null ? ((await (await fetch(`${node.url}/state`)).json()) as { extensions?: unknown }) : null;
    console.log(`bench/extensions: ${o.calls} calls of a busy loop (limit ${o.timeoutMs} ms), ${o.concurrency} at a time, ingest running`);
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
