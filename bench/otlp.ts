// bench/otlp: OTLP/HTTP metrics ingest. The same exports — what an OpenTelemetry SDK sends
// every interval: one resource, one scope, every series' gauge point at that time — go to
// ferrite's `/v1/metrics` (protobuf) and to VictoriaMetrics. Debian's VictoriaMetrics 1.79.5
// has no OTLP endpoint (added in 1.92): the run checks that, then sends VictoriaMetrics the
// same samples through its Prometheus import, with the labels ferrite stores. The clock
// stops when every sample is queryable through each system's own read path. Prints
// samples/s and the ratio.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { encodeRequest } from '../model/otlp/codec.js';
import { send, type Bodies } from './dataset.js';
import { peakRss, startFerrite, startVictoriaMetrics, victoriaMetricsAvailable, type Running } from './peers.js';

interface Options {
  series: number;
  exports: number;
  concurrency: number;
  vm: boolean;
}

const STEP_S = 10;
const UUID = '2c0ffee0-0000-4000-8000-00000000b07a';
const NAMES = 100;
const RESOURCE = { 'service.name': 'bench', 'service.instance.id': 'i-1' };
const SCOPE = { name: 'bench', version: '1' };

/** Series s: metric `bench.metric.<s mod 100>` with point attributes host and region. */
const seriesOf = (s: number) => ({ name: `bench.metric.${s % NAMES}`, host: `h${Math.floor(s / NAMES)}`, region: `r${s % 5}` });
const valueOf = (s: number, i: number) => Math.round((50 + 40 * Math.sin((s + i) / 17)) * 1000) / 1000;

/** Export i: every series' point at start + i·STEP_S, one gauge metric per name. */
function exportRequest(o: Options, start: number, i: number): Uint8Array {
  const nanos = String(BigInt((start + i * STEP_S) * 1000) * 1_000_000n);
  const byName = new Map<string, object[]>();
  for (let s = 0; s < o.series; s++) {
    const { name, host, region } = seriesOf(s);
    const points = byName.get(name) ?? [];
    byName.set(name, points);
    points.push({ timeUnixNano: nanos, startTimeUnixNano: nanos, asDouble: valueOf(s, i), attributes: [kv('host', host), kv('region', region)] });
  }
  return encodeRequest({
    resourceMetrics: [
      {
        resource: { attributes: Object.entries(RESOURCE).map(([k, v]) => kv(k, v)) },
        scopeMetrics: [{ scope: SCOPE, metrics: [...byName].map(([name, dataPoints]) => ({ name, gauge: { dataPoints } })) }],
      },
    ],
  });
}

const kv = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** The labels ferrite stores for series s (model/otlp/samples.ts), sorted as canonical names sort them. */
function labelsOf(s: number): [string, string][] {
  const { host, region } = seriesOf(s);
  const labels: Record<string, string> = { host, region, ...RESOURCE, otel_scope_name: SCOPE.name, otel_scope_version: SCOPE.version, job: RESOURCE['service.name'], instance: RESOURCE['service.instance.id'] };
  return Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
}

const ferriteName = (s: number) => `${seriesOf(s).name}|ST[${labelsOf(s).map(([k, v]) => `${k}:${v}`).join(',')}]`;

/** The same samples in Prometheus text, names and label names with `_` for `.` (the legacy charset). */
function vmBody(o: Options, start: number, i: number): string {
  const lines: string[] = [];
  const ms = (start + i * STEP_S) * 1000;
  for (let s = 0; s < o.series; s++) {
    const labels = labelsOf(s).map(([k, v]) => `${k.replace(/\./g, '_')}="${v}"`).join(',');
    lines.push(`${seriesOf(s).name.replace(/\./g, '_')}{${labels}} ${valueOf(s, i)} ${ms}`);
  }
  return `${lines.join('\n')}\n`;
}

const FETCH_STREAMS = 1000;

async function ferriteCount(url: string, o: Options, start: number): Promise<number> {
  let total = 0;
  for (let first = 0; first < o.series; first += FETCH_STREAMS) {
    const streams = Array.from({ length: Math.min(FETCH_STREAMS, o.series - first) }, (_, k) => ({ uuid: UUID, name: ferriteName(first + k), kind: 'numeric', transform: 'count' }));
    const body = { start, period: o.exports * STEP_S, count: 1, streams, reduce: [{ label: 'sum', method: 'sum' }] };
    const res = await fetch(`${url}/fetch`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-svc-account-id': '1' } });
    const doc = (await res.json()) as { data?: (number | null)[][] };
    total += res.ok ? (doc.data?.[0]?.[0] ?? 0) : 0;
  }
  return total;
}

async function vmCount(url: string, o: Options, start: number): Promise<number> {
  const q = encodeURIComponent(`sum(count_over_time({__name__=~"bench_metric_.*"}[${o.exports * STEP_S + 1}s]))`);
  const res = await fetch(`${url}/api/v1/query?query=${q}&time=${start + o.exports * STEP_S}`);
  const doc = (await res.json()) as { data?: { result: { value: [number, string] }[] } };
  return Number(doc.data?.result[0]?.value[1] ?? 0);
}

/** Whether this VictoriaMetrics takes OTLP: 1.92+ answers its OTLP paths, 1.79 does not know them. */
async function vmTakesOtlp(url: string, body: Uint8Array): Promise<string | null> {
  for (const p of ['/opentelemetry/v1/metrics', '/opentelemetry/api/v1/push']) {
    const res = await fetch(`${url}${p}`, { method: 'POST', body, headers: { 'content-type': 'application/x-protobuf' } });
    const text = await res.text();
    if (res.ok) return p;
    console.log(`VictoriaMetrics ${p}: ${res.status} ${text.trim().slice(0, 120)}`);
  }
  return null;
}

interface Result {
  name: string;
  seconds: number;
  samplesPerSec: number;
  peakRssMb: number;
}

async function measure(peer: Running, label: string, url: string, bodies: Bodies, headers: Record<string, string>, o: Options, count: () => Promise<number>): Promise<Result> {
  const total = o.series * o.exports;
  const t0 = performance.now();
  await send(url, bodies, o.concurrency, 'POST', headers);
  const acked = (performance.now() - t0) / 1000;
  for (;;) {
    const n = await count();
    if (n >= total) break;
    if (performance.now() - t0 > 600_000) throw new Error(`${label}: only ${n}/${total} samples queryable after 10 min`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - t0) / 1000;
  const rss = peakRss(peer.child.pid!);
  await peer.stop();
  console.log(`${label}: ${seconds.toFixed(2)} s (all acknowledged at ${acked.toFixed(2)} s), peak RSS ${(rss / 2 ** 20).toFixed(0)} MiB`);
  return { name: label, seconds, samplesPerSec: total / seconds, peakRssMb: rss / 2 ** 20 };
}

async function main(): Promise<void> {
  const o = new Command('bench-otlp')
    .option('--series <n>', 'series (gauge points per export)', (v) => Number(v), 10_000)
    .option('--exports <n>', 'exports (one request each, 10 s apart)', (v) => Number(v), 100)
    .option('--concurrency <n>', 'requests in flight', (v) => Number(v), 4)
    .option('--no-vm', 'skip VictoriaMetrics')
    .parse()
    .opts<Options>();
  const total = o.series * o.exports;
  const start = Math.floor(Date.now() / 1000) - o.exports * STEP_S - 60;
  const root = mkdtempSync(path.join(tmpdir(), 'ferrite-bench-otlp-'));
  console.log(`bench/otlp: ${total} samples (${o.series} series × ${o.exports} exports, ${STEP_S} s apart), one export per request, ${o.concurrency} in flight`);
  // Bodies are made before the clock starts: the client shares the two cores with the server.
  const made = (make: (i: number) => string | Uint8Array): Bodies => {
    const list = Array.from({ length: o.exports }, (_, i) => make(i));
    return { length: list.length, at: (i) => list[i]! };
  };
  const otlpBodies = made((i) => exportRequest(o, start, i));
  const results: Result[] = [];
  try {
    const ferrite = await startFerrite(path.join(root, 'ferrite'));
    const headers = { 'content-type': 'application/x-protobuf', 'x-svc-account-id': '1', 'x-svc-check-uuid': UUID };
    console.log(`one export: ${otlpBodies.at(0).length} bytes of protobuf`);
    results.push(await measure(ferrite, 'ferrite OTLP protobuf', `${ferrite.url}/v1/metrics`, otlpBodies, headers, o, () => ferriteCount(ferrite.url, o, start)));
    if (!o.vm) console.log('VictoriaMetrics skipped (--no-vm)');
    else if (!victoriaMetricsAvailable()) console.log('VictoriaMetrics not installed (apt-get install victoria-metrics): skipping that side');
    else {
      const vm = await startVictoriaMetrics(path.join(root, 'vm'), ['-search.maxUniqueTimeseries=100000000', '-search.maxSamplesPerQuery=10000000000']);
      const otlpPath = await vmTakesOtlp(vm.url, encodeRequest({ resourceMetrics: [] }));
      if (otlpPath !== null) {
        results.push(await measure(vm, `victoria-metrics OTLP ${otlpPath}`, `${vm.url}${otlpPath}`, otlpBodies, { 'content-type': 'application/x-protobuf' }, o, () => vmCount(vm.url, o, start)));
      } else {
        console.log('this VictoriaMetrics takes no OTLP: comparing with its Prometheus import of the same samples');
        const text = made((i) => vmBody(o, start, i));
        results.push(await measure(vm, 'victoria-metrics Prometheus import', `${vm.url}/api/v1/import/prometheus`, text, {}, o, () => vmCount(vm.url, o, start)));
      }
    }
  } finally {
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  console.log('\n| system | seconds | samples/s | peak RSS MiB |');
  console.log('|---|---|---|---|');
  for (const r of results) console.log(`| ${r.name} | ${r.seconds.toFixed(2)} | ${Math.round(r.samplesPerSec)} | ${r.peakRssMb.toFixed(0)} |`);
  const [ours, peer] = results;
  if (ours !== undefined && peer !== undefined) console.log(`\nratio ferrite / ${peer.name} (samples/s): ${(ours.samplesPerSec / peer.samplesPerSec).toFixed(3)}`);
}

await main();
