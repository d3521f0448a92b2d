// bench/seal (`npm run bench:seal`): what sealing costs per open buffer, window after window. N
// series get one sample in each of a few past hours, sent one hour at a time; a node on defaults
// but `sealQuietMs` 0.5 s seals each hour's buffers once the writes stop, and the bench reports
// the server's CPU (/proc) from the last write until no buffer is open. The first window is
// every series' first block; later ones are what a node does every hour for every series it holds.
// No peer: VictoriaMetrics has no seal step (its in-memory parts are flushed every few seconds).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodiesLazy, prepared, send, type Dataset } from './dataset.js';
import { cpuSeconds, requireShippedNode, startFerrite } from './peers.js';

const HOUR_S = 3600;

interface Options {
  series: number;
  windows: number;
}

async function openBuffers(url: string): Promise<number> {
  const state = (await (await fetch(`${url}/state`)).json()) as { shards: { open_buffers: number }[] };
  return state.shards.reduce((sum, s) => sum + s.open_buffers, 0);
}

async function main(): Promise<void> {
  const o = new Command('bench-seal')
    .option('--series <n>', 'series', (v) => Number(v), 100_000)
    .option('--windows <n>', 'hours, one sample of every series in each', (v) => Number(v), 4)
    .parse()
    .opts<Options>();
  requireShippedNode();
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-seal-'));
  const config = path.join(root, 'config.json');
  writeFileSync(config, JSON.stringify({ sealQuietMs: 500 }));
  const node = await startFerrite(path.join(root, 'data'), ['--config', config]);
  // Hours well in the past: each ended long ago, so its buffers seal as soon as they are quiet.
  const first = Math.floor(Date.now() / 1000 / HOUR_S) * HOUR_S - 48 * HOUR_S;
  console.log(`bench/seal: ${o.series} series × ${o.windows} hours, one sample each`);
  console.log('\n| window | sealed in (s) | server CPU (s) | CPU per buffer (µs) |\n|---|---|---|---|');
  try {
    for (let w = 0; w < o.windows; w++) {
      const d: Dataset = { metrics: o.series, points: 1, stepS: 10, start: first + w * HOUR_S, batch: Math.min(5000, o.series) };
      await send(`${node.url}/raw`, prepared(ferriteBodiesLazy(d)), 4, 'POST', {}, true);
      const [t0, cpu0] = [performance.now(), cpuSeconds(node.child.pid!)];
      while ((await openBuffers(node.url)) > 0) await new Promise((r) => setTimeout(r, 100));
      const [s, cpu] = [(performance.now() - t0) / 1000, cpuSeconds(node.child.pid!) - cpu0];
      console.log(`| ${w === 0 ? '0 (first blocks)' : w} | ${s.toFixed(2)} | ${cpu.toFixed(2)} | ${((cpu / o.series) * 1e6).toFixed(1)} |`);
    }
  } finally {
    await node.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
