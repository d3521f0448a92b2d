// bench/backup: a backup of a node holding --metrics × --points samples (1M by default), taken
// with POST /admin/backup while writers keep ingesting. Prints how long it took and how the
// writes running meanwhile fared against those before it (p99, slowest, and the longest stretch
// with writes in flight and none acknowledged); then restores it into a new data directory,
// starts a node there and reads back, value for value, every sample acknowledged before the
// backup began. Fails its run when one is missing or different.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { ferriteBodiesLazy, ferriteName, send, UUID, valueOf, type Dataset } from './dataset.js';
import { startFerrite, type Running } from './peers.js';

const CHECK = `bench.example\`bench\`c_1_1::bench\`${UUID}`;
/** Metrics each steady write touches (one sample each, at the write's own second). */
const STEADY_METRICS = 100;

interface Options {
  metrics: number;
  points: number;
  writers: number;
  settleS: number;
}

/** One steady write: its writer, sequence (its samples' second and value) and when it was sent and acknowledged. */
interface Write {
  writer: number;
  seq: number;
  sent: number;
  acked: number;
}

const steadyName = (w: number, k: number) => `bench.steady.w${w}.m${k}`;

function steadyBody(start: number, w: number, seq: number): string {
  return Array.from({ length: STEADY_METRICS }, (_, k) => `M\t${start + seq}.000\t${CHECK}\t${steadyName(w, k)}\tn\t${seq}`).join('\n');
}

/** Writers sending small bodies one after another each until `stop()`; every write is noted. */
function steadyIngest(url: string, writers: number, start: number) {
  const writes: Write[] = [];
  const inFlight = new Map<number, number>();
  let running = true;
  const done = Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let seq = 0; running; seq++) {
        const sent = performance.now();
        inFlight.set(w, sent);
        const res = await fetch(`${url}/raw`, { method: 'PUT', body: steadyBody(start, w, seq) });
        await res.arrayBuffer();
        inFlight.delete(w);
        if (res.status !== 200) throw new Error(`a steady write answered ${res.status}`);
        writes.push({ writer: w, seq, sent, acked: performance.now() });
      }
    }),
  );
  return {
    writes,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** p99 and slowest of the writes sent in [from, to), and the longest gap between acknowledgements there. */
function latency(writes: Write[], from: number, to: number): { count: number; p99: number; max: number; gap: number } {
  const within = writes.filter((x) => x.sent >= from && x.sent < to);
  const ms = within.map((x) => x.acked - x.sent).sort((a, b) => a - b);
  const acks = writes.map((x) => x.acked).filter((a) => a >= from && a <= to).sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < acks.length; i++) gap = Math.max(gap, acks[i]! - acks[i - 1]!);
  return { count: ms.length, p99: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? NaN, max: ms.at(-1) ?? NaN, gap };
}

async function rows(url: string, name: string, start: number, end: number): Promise<[number, number][]> {
  const res = await fetch(`${url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=${start}&end_ts=${end}`);
  if (res.status !== 200) throw new Error(`reading ${name} answered ${res.status}`);
  return (await res.json()) as [number, number][];
}

/** Samples of the loaded data set missing or different on the restored node. */
async function checkLoad(url: string, d: Dataset): Promise<number> {
  let wrong = 0;
  for (let m = 0; m < d.metrics; m++) {
    const got = new Map((await rows(url, ferriteName(m), d.start, d.start + d.points * d.stepS)).map(([ts, v]) => [ts, v]));
    for (let i = 0; i < d.points; i++) if (got.get((d.start + i * d.stepS) * 1000) !== valueOf(m, i)) wrong++;
  }
  return wrong;
}

/** Steady samples acknowledged before `before` missing or different on the restored node. */
async function checkSteady(url: string, writes: Write[], writers: number, start: number, before: number): Promise<{ expected: number; wrong: number }> {
  let expected = 0;
  let wrong = 0;
  for (let w = 0; w < writers; w++) {
    const seqs = writes.filter((x) => x.writer === w && x.acked < before).map((x) => x.seq);
    if (seqs.length === 0) continue;
    for (let k = 0; k < STEADY_METRICS; k++) {
      const got = new Map((await rows(url, steadyName(w, k), start, start + Math.max(...seqs) + 1)).map(([ts, v]) => [ts, v]));
      for (const seq of seqs) if (got.get((start + seq) * 1000) !== seq) wrong++;
      expected += seqs.length;
    }
  }
  return { expected, wrong };
}

function restore(backup: string, dataDir: string): void {
  const r = spawnSync(process.execPath, [path.resolve('bin/ferrite.js'), 'restore', backup, dataDir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ferrite restore failed (${r.status}): ${r.stderr}`);
}

async function main(): Promise<void> {
  const o = new Command('bench-backup')
    .option('--metrics <n>', 'metrics loaded before the backup', (v) => Number(v), 1000)
    .option('--points <n>', 'points per loaded metric (10 s apart)', (v) => Number(v), 1000)
    .option('--writers <n>', 'writers ingesting while the backup runs', (v) => Number(v), 2)
    .option('--settle-s <n>', 'seconds of steady ingest before and after the backup', (v) => Number(v), 3)
    .parse()
    .opts<Options>();
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-backup-'));
  const now = Math.floor(Date.now() / 1000);
  const d: Dataset = { metrics: o.metrics, points: o.points, stepS: 10, start: now - o.points * 10 - 3600, batch: 5000 };
  const steadyStart = now - 1800;
  let source: Running | null = null;
  let restored: Running | null = null;
  try {
    source = await startFerrite(path.join(root, 'data'), [], 60_000);
    const t0 = performance.now();
    await send(`${source.url}/raw`, ferriteBodiesLazy(d), 4, 'PUT');
    const loaded = o.metrics * o.points;
    console.log(`bench/backup: ${loaded} samples loaded (${o.metrics} metrics × ${o.points} points) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const steady = steadyIngest(source.url, o.writers, steadyStart);
    await new Promise((r) => setTimeout(r, o.settleS * 1000));
    const began = performance.now();
    const res = await fetch(`${source.url}/admin/backup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dest: path.join(root, 'backup') }) });
    const manifest = (await res.json()) as { bytes: number; seconds: number };
    const ended = performance.now();
    if (res.status !== 200) throw new Error(`POST /admin/backup answered ${res.status}: ${JSON.stringify(manifest)}`);
    await new Promise((r) => setTimeout(r, o.settleS * 1000));
    await steady.stop();
    await source.stop();
    source = null;
    const before = latency(steady.writes, began - o.settleS * 1000, began);
    const during = latency(steady.writes, began, ended);
    console.log(`backup: ${((ended - began) / 1000).toFixed(2)} s, ${(manifest.bytes / 2 ** 20).toFixed(1)} MiB of keys and values, ${o.writers} writers × ${STEADY_METRICS}-line bodies ingesting`);
    const show = (label: string, x: ReturnType<typeof latency>) =>
      console.log(`writes ${label}: ${x.count}, p99 ${x.p99.toFixed(1)} ms, slowest ${x.max.toFixed(1)} ms, longest stretch without an acknowledgement ${x.gap.toFixed(1)} ms`);
    show('in the seconds before the backup', before);
    show('while the backup ran', during);
    restore(path.join(root, 'backup'), path.join(root, 'restored'));
    restored = await startFerrite(path.join(root, 'restored'), [], 60_000);
    const wrongLoad = await checkLoad(restored.url, d);
    const steadyCheck = await checkSteady(restored.url, steady.writes, o.writers, steadyStart, began);
    console.log(`restored: ${loaded - wrongLoad} of ${loaded} loaded samples and ${steadyCheck.expected - steadyCheck.wrong} of ${steadyCheck.expected} steady samples acknowledged before the backup began read back exactly`);
    if (wrongLoad > 0 || steadyCheck.wrong > 0) process.exitCode = 1;
  } finally {
    await source?.stop();
    await restored?.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
