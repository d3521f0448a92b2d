// ferrite against real clients from Debian's `prometheus` package: a Prometheus scraping
// itself every second and remote-writing to ferrite; a second Prometheus remote-reading
// from ferrite; promtool querying ferrite's query API. Answers are compared with what the
// first Prometheus holds locally. `npm test` installs the package first (test/setup-tools.mjs);
// without it these fail, naming it.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { freePort, waitHttp } from '../../transport/ports.js';
import { startNode, tempDir, type TestNode } from '../helpers/node.js';

const ACCOUNT = 3;
const UUID = '9a7b0000-0000-4000-8000-00000000c0de';
const have = (bin: string): boolean => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0;
const t_ = test.serial;

let ferrite: TestNode;
const children: ChildProcess[] = [];
const dirs: string[] = [];
let scraper = '';
let reader = '';

async function startPrometheus(config: string): Promise<string> {
  const dir = tempDir('ferrite-prom-');
  dirs.push(dir);
  const port = await freePort();
  const file = path.join(dir, 'prometheus.yml');
  writeFileSync(file, config.replaceAll('PORT', String(port)));
  const child = spawn('prometheus', [`--config.file=${file}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: 'ignore' });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/-/ready`);
  return url;
}

interface PromResponse {
  status: string;
  data: { resultType: string; result: { metric: Record<string, string>; value?: [number, string]; values?: [number, string][] }[] };
}

async function query(base: string, q: string, timeS: number, headers: Record<string, string> = {}): Promise<PromResponse> {
  const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(q)}&time=${timeS}`, { headers });
  return (await res.json()) as PromResponse;
}

const byLabels = (r: PromResponse) => Object.fromEntries(r.data.result.map((s) => [JSON.stringify(Object.entries(s.metric).sort()), s.value ?? s.values]));

/**
 * Waits (bounded) until ferrite holds 15 s of `up` and returns the time of its 4th newest
 * sample: every series then has history well before any window the tests use (at a series'
 * first samples Prometheus 2.x and 3.x extrapolate rates differently; ferrite follows 3.x).
 */
async function settledSample(): Promise<number> {
  for (let i = 0; i < 300; i++) {
    const window = await query(ferrite.url, 'up[1m]', Date.now() / 1000);
    const ts = window.data?.result[0]?.values?.map((v) => v[0]) ?? [];
    if (ts.length >= 15) return ts[ts.length - 4]!;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('ferrite never received enough remote-written samples');
}

test.before(async () => {
  for (const bin of ['prometheus', 'promtool']) if (!have(bin)) throw new Error(`${bin} is not installed: apt-get install prometheus (npm test does it as root)`);
  ferrite = await startNode({ defaultAccount: ACCOUNT });
  scraper = await startPrometheus(`
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: prometheus
    static_configs: [{ targets: ['127.0.0.1:PORT'] }]
remote_write:
  - url: ${ferrite.url}/module/prometheus/write/${ACCOUNT}/${UUID}
    queue_config: { batch_send_deadline: 500ms, min_backoff: 100ms, max_backoff: 1s }
`);
  reader = await startPrometheus(`
global: { scrape_interval: 1h }
remote_read:
  - url: ${ferrite.url}/module/prometheus/read/${ACCOUNT}/${UUID}
    read_recent: true
`);
});

test.after.always(async () => {
  for (const c of children) c.kill('SIGKILL');
  await ferrite?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An evaluation time between two scrapes, a few samples back from the newest, so both stores hold everything before it. */
async function settledTime(): Promise<number> {
  return (await settledSample()) - 0.5;
}

t_('remote write: the raw samples ferrite holds equal what Prometheus holds', async (t) => {
  const at = await settledTime();
  for (const q of ['up[10s]', 'scrape_samples_scraped[10s]', 'prometheus_tsdb_head_series[10s]', 'prometheus_http_requests_total{handler="/metrics"}[10s]']) {
    const local = await query(scraper, q, at);
    const ours = await query(ferrite.url, q, at);
    t.is(ours.status, 'success', q);
    t.true(local.data.result.length > 0, q);
    t.deepEqual(byLabels(ours), byLabels(local), q);
  }
});

t_('query API: PromQL answers equal Prometheus', async (t) => {
  const at = await settledTime();
  const queries = [
    'sum(up)',
    'count by (job) (up)',
    'rate(prometheus_http_requests_total{handler="/metrics"}[5s])',
    'sum by (code) (increase(prometheus_http_requests_total[5s]))',
    'max_over_time(scrape_duration_seconds[10s]) > 0',
    'avg_over_time(prometheus_tsdb_head_series[10s])',
    'histogram_quantile(0.9, sum by (le) (rate(prometheus_http_request_duration_seconds_bucket{handler="/metrics"}[10s])))',
    'topk(3, prometheus_tsdb_head_chunks)',
    'up * 2 + on(instance, job) scrape_samples_scraped',
    'deriv(process_resident_memory_bytes[10s])',
  ];
  for (const q of queries) {
    const local = byLabels(await query(scraper, q, at));
    const ours = byLabels(await query(ferrite.url, q, at));
    t.deepEqual(Object.keys(ours).sort(), Object.keys(local).sort(), q);
    for (const [k, v] of Object.entries(local)) {
      const a = Number((v as [number, string])[1]);
      const b = Number((ours[k] as [number, string])[1]);
      t.true(a === b || (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a)), `${q} ${k}: prometheus ${a}, ferrite ${b}`);
    }
  }
});

t_('remote read: a second Prometheus reads back through ferrite what the first holds', async (t) => {
  const at = await settledTime();
  for (const q of ['up[10s]', 'scrape_samples_scraped[10s]']) {
    const local = await query(scraper, q, at);
    const remote = await query(reader, q, at);
    t.is(remote.status, 'success', q);
    t.true(remote.data.result.length > 0, q);
    t.deepEqual(byLabels(remote), byLabels(local), q);
  }
});

t_('promtool query instant and range against ferrite', async (t) => {
  const at = await settledTime();
  const run = promisify(execFile);
  const instant = await run('promtool', ['query', 'instant', `--time=${new Date(at * 1000).toISOString()}`, ferrite.url, 'up']);
  t.regex(instant.stdout, /up\{instance="127\.0\.0\.1:\d+", job="prometheus"\} => 1 @\[/);
  const range = await run('promtool', ['query', 'range', `--start=${new Date((at - 5) * 1000).toISOString()}`, `--end=${new Date(at * 1000).toISOString()}`, '--step=1s', ferrite.url, 'sum(up)']);
  t.regex(range.stdout, /\{\} =>/);
  t.is((range.stdout.match(/1 @\[/g) ?? []).length, 6);
  const bad = await run('promtool', ['query', 'instant', ferrite.url, 'info(up)']).catch((e: { stderr: string }) => e);
  t.regex((bad as { stderr: string }).stderr, /info/);
});
