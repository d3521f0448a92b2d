// bench/soak: a long mixed load at a fraction of capacity — TSV, FlatBuffer, H1 histograms and
// Prometheus remote write ingest, tag searches, fetches, CAQL and deletes — printing per slice
// the node's RSS (whole process) and p50/p99 and errors of each request kind; then an overload
// spike (32 writers × 5000-line bodies) and the RSS after it settles. The run fails itself when
// RSS or a p99 grows slice over slice beyond noise, or memory after the spike stays above 1.5×
// its level before.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { encodeWriteRequest } from '../model/prometheus/remote-codec.js';
import { ferriteName, metricListBodiesLazy, UUID, type Dataset } from './dataset.js';
import { startFerrite, type Running } from './peers.js';

const CHECK = `soak.example\`soak\`c_1_1::soak\`${UUID}`;
const METRICS = 2000;

interface Options {
  minutes: number;
  sliceMinutes: number;
  rate: number;
  spike: boolean;
}

type Kind = 'tsv' | 'flatbuffer' | 'histogram' | 'remote_write' | 'find' | 'fetch' | 'caql' | 'delete';

class Slice {
  readonly ms = new Map<Kind, number[]>();
  readonly errors = new Map<Kind, number>();
  note(kind: Kind, ms: number, ok: boolean): void {
    if (!ok) this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
    let list = this.ms.get(kind);
    if (list === undefined) this.ms.set(kind, (list = []));
    list.push(ms);
  }
  pct(kind: Kind, q: number): number {
    const sorted = [...(this.ms.get(kind) ?? [])].sort((a, b) => a - b);
    return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
  }
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowS = () => Math.floor(Date.now() / 1000);

async function timed(slice: () => Slice, kind: Kind, run: () => Promise<Response>): Promise<void> {
  const t0 = performance.now();
  let ok = false;
  try {
    const res = await run();
    await res.arrayBuffer();
    ok = res.status < 300 || (kind === 'delete' && res.status === 404);
  } catch {
    ok = false;
  }
  slice().note(kind, performance.now() - t0, ok);
}

const tsvBody = (ts: number, lines: number, offset: number) =>
  Array.from({ length: lines }, (_, k) => `M\t${ts}.000\t${CHECK}\t${ferriteName((offset + k) % METRICS, 'soak')}\tn\t${(offset + k) % 97}`).join('\n');

/** Samples per second one TSV writer reaches alone, measured for 10 s. */
async function capacity(node: Running): Promise<number> {
  let samples = 0;
  const until = Date.now() + 10_000;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (Date.now() < until) {
        const res = await fetch(`${node.url}/raw`, { method: 'PUT', body: tsvBody(nowS() - 30, 2000, samples) });
        await res.arrayBuffer();
        if (res.ok) samples += 2000;
      }
    }),
  );
  return samples / 10;
}

/** Runs `step` every `everyMs` until `until`, one at a time. */
async function every(everyMs: number, until: () => boolean, step: () => Promise<void>): Promise<void> {
  while (!until()) {
    const t0 = Date.now();
    await step();
    await sleep(Math.max(0, everyMs - (Date.now() - t0)));
  }
}

async function main(): Promise<void> {
  const o = new Command('bench-soak')
    .option('--minutes <n>', 'length of the mixed load', (v) => Number(v), 30)
    .option('--slice-minutes <n>', 'minutes per reported slice', (v) => Number(v), 5)
    .option('--rate <fraction>', 'ingest as a fraction of the measured capacity', (v) => Number(v), 0.7)
    .option('--no-spike', 'skip the overload spike at the end')
    .parse()
    .opts<Options>();
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-soak-'));
  const node = await startFerrite(path.join(root, 'data'), [], 60_000);
  const pid = node.child.pid!;
  let failed = false;
  try {
    const cap = await capacity(node);
    const target = cap * o.rate;
    console.log(`bench/soak: ${o.minutes} min at ${Math.round(target)} samples/s (${o.rate} of ${Math.round(cap)} measured), slices of ${o.sliceMinutes} min`);
    const slices: Slice[] = [new Slice()];
    const current = () => slices[slices.length - 1]!;
    const end = Date.now() + o.minutes * 60_000;
    const done = () => Date.now() >= end;
    const fb: Dataset = { metrics: METRICS, points: 1, stepS: 10, start: nowS() - 60, batch: 1000, family: 'soakfb' };
    const fbBody = metricListBodiesLazy(fb).at(0);
    const rssBySlice: number[] = [];
    const sliceTimer = setInterval(() => {
      rssBySlice.push(rssMiB(pid));
      slices.push(new Slice());
    }, o.sliceMinutes * 60_000);
    // Ingest: TSV writers at the target rate (2000 lines a body), the other formats alongside.
    const tsvEveryMs = (2000 / target) * 1000 * 2;
    await Promise.all([
      ...[0, 1].map((w) => every(tsvEveryMs, done, () => timed(current, 'tsv', () => fetch(`${node.url}/raw`, { method: 'PUT', body: tsvBody(nowS() - 5, 2000, w * 1000) })))),
      every(1000, done, () => timed(current, 'flatbuffer', () => fetch(`${node.url}/raw`, { method: 'POST', body: fbBody, headers: { 'content-type': 'application/x-svc-metric-list-flatbuffer', 'x-svc-datapoints': '1000' } }))),
      every(1000, done, () => timed(current, 'histogram', () => fetch(`${node.url}/raw`, { method: 'PUT', body: Array.from({ length: 100 }, (_, k) => `H1\t${nowS() - 5}.000\t${CHECK}\tsoak.latency.${k}\tAAEMAAAD`).join('\n') }))),
      every(1000, done, () => {
        const series = Array.from({ length: 100 }, (_, k) => ({ labels: { __name__: 'soak_remote', instance: `i${k}` }, samples: [{ value: k, timestamp: Date.now() - 5000 }] }));
        return timed(current, 'remote_write', () => fetch(`${node.url}/module/prometheus/write/1/${UUID}`, { method: 'POST', body: encodeWriteRequest(series), headers: { 'content-encoding': 'snappy', 'content-type': 'application/x-protobuf' } }));
      }),
      // Reads.
      every(200, done, () => timed(current, 'find', () => fetch(`${node.url}/find/1/tags?query=${encodeURIComponent('and(__name:soak.metric.1*,host:h1)')}`))),
      every(500, done, () =>
        timed(current, 'fetch', () =>
          fetch(`${node.url}/fetch`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ start: nowS() - 600, period: 60, count: 10, streams: Array.from({ length: 20 }, (_, m) => ({ uuid: UUID, name: ferriteName(m, 'soak'), kind: 'numeric', transform: 'average' })), reduce: [{ label: 's', method: 'sum' }] }),
          }),
        ),
      ),
      every(2000, done, () => timed(current, 'caql', () => fetch(`${node.url}/extension/lua/caql_v1?query=${encodeURIComponent(`find("soak.metric.1*") | stats:sum()`)}&start=${nowS() - 600}&end=${nowS()}&period=60`, { headers: { 'x-svc-account-id': '1' } }))),
      every(5000, done, () => timed(current, 'delete', () => fetch(`${node.url}/full/canonical/${UUID}/${encodeURIComponent(ferriteName(METRICS - 1, 'soak'))}`, { method: 'DELETE', headers: { 'x-svc-confirm-delete': '1', 'x-svc-account-id': '1' } }))),
    ]);
    clearInterval(sliceTimer);
    rssBySlice.push(rssMiB(pid));
    failed = report(slices.filter((s) => s.ms.size > 0), rssBySlice);
    if (o.spike) failed = (await spike(node, pid)) || failed;
  } finally {
    await node.stop();
    rmSync(root, { recursive: true, force: true });
  }
  console.log(failed ? 'SOAK FAILED: growth beyond noise (see above)' : 'soak flat: no growth beyond noise');
  if (failed) process.exitCode = 1;
}

const KINDS: Kind[] = ['tsv', 'flatbuffer', 'histogram', 'remote_write', 'find', 'fetch', 'caql', 'delete'];

/** Prints the slices; true when RSS or a p99 grew from the first full slice to the last beyond noise. */
function report(slices: Slice[], rss: number[]): boolean {
  console.log(`\n| slice | RSS MiB | ${KINDS.map((k) => `${k} p50/p99 ms (errors)`).join(' | ')} |`);
  console.log(`|---|---|${KINDS.map(() => '---').join('|')}|`);
  slices.forEach((s, i) => {
    const cells = KINDS.map((k) => `${s.pct(k, 0.5).toFixed(1)}/${s.pct(k, 0.99).toFixed(1)} (${s.errors.get(k) ?? 0})`);
    console.log(`| ${i + 1} | ${rss[i]?.toFixed(0) ?? '–'} | ${cells.join(' | ')} |`);
  });
  if (slices.length < 3) return false;
  // The first slice warms up (JIT, caches, the first rollups): growth is judged from the second on.
  const [first, last] = [slices[1]!, slices[slices.length - 1]!];
  const grown: string[] = [];
  if (rss[rss.length - 1]! > 1.3 * rss[1]!) grown.push(`RSS ${rss[1]!.toFixed(0)} → ${rss[rss.length - 1]!.toFixed(0)} MiB`);
  for (const k of KINDS) if (last.pct(k, 0.99) > 3 * Math.max(first.pct(k, 0.99), 20)) grown.push(`${k} p99 ${first.pct(k, 0.99).toFixed(0)} → ${last.pct(k, 0.99).toFixed(0)} ms`);
  if (grown.length > 0) console.log(`growth: ${grown.join('; ')}`);
  return grown.length > 0;
}

/** 32 writers × 5000-line bodies for 20 s, then 30 s quiet: memory must come back within 1.5×. */
async function spike(node: Running, pid: number): Promise<boolean> {
  const before = rssMiB(pid);
  const statuses = new Map<number, number>();
  const until = Date.now() + 20_000;
  let peak = before;
  const watch = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 250);
  await Promise.all(
    Array.from({ length: 32 }, async (_, w) => {
      while (Date.now() < until) {
        const res = await fetch(`${node.url}/raw`, { method: 'PUT', body: tsvBody(nowS() - 5, 5000, w * 5000) }).catch(() => null);
        await res?.arrayBuffer();
        statuses.set(res?.status ?? 0, (statuses.get(res?.status ?? 0) ?? 0) + 1);
      }
    }),
  );
  clearInterval(watch);
  await sleep(30_000);
  const after = rssMiB(pid);
  console.log(`\nspike: 32 writers × 5000 lines for 20 s: answers ${JSON.stringify(Object.fromEntries(statuses))}; RSS before ${before.toFixed(0)}, peak ${peak.toFixed(0)}, 30 s after ${after.toFixed(0)} MiB (${(after / before).toFixed(2)}×)`);
  return after > 1.5 * before;
}

await main();
