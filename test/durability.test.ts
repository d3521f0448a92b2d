// Crash safety: every record acknowledged with 200 before a SIGKILL reads back exactly,
// immediately after a restart: numeric (doubles and 64-bit integers), text and histograms.
// The node runs as a child process (`ferrite serve`) on a real RocksDB.
import { rmSync } from 'node:fs';
import test from 'ava';
import { Histogram, serializeHistogram } from '../model/histogram/index.js';
import { CHECK, getJson, killSpawnedNodes, mLine, spawnNode, tempDir, UUID, type ChildNode } from './helpers/node.js';

const TRIALS = 50;
const LINES = 40;

test.after.always(killSpawnedNodes);

/** Sample types written each request: name → TSV type (`h` = an H1 histogram line). */
const METRICS: Record<string, 'n' | 'L' | 'l' | 's' | 'h'> = {
  'crash.a': 'n',
  'crash.b|ST[k:v]': 'n',
  'crash.big': 'L',
  'crash.neg': 'l',
  'crash.txt': 's',
  'crash.h1': 'h',
  'crash.h2': 'h',
};
const NAMES = Object.keys(METRICS);
const HISTS = NAMES.filter((m) => METRICS[m] === 'h');

interface Request {
  /** (metric, ts ms, value as read back) of every non-histogram sample. */
  samples: [string, number, string][];
  /** Histogram lines per metric; all in this request's own minute, one bin each. */
  hists: Map<string, number>;
  minute: number;
}

interface Ledger {
  acked: Request[];
  /** Sent but not acknowledged when the node died: each may be stored or not, but whole. */
  unsure: Request[];
  nextMinute: number;
}

const stamp = (ms: number) => `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;

function h1Line(ms: number, name: string, value: number): string {
  return ['H1', stamp(ms), CHECK, name, Buffer.from(serializeHistogram(Histogram.empty().insert(value))).toString('base64')].join('\t');
}

function valueFor(type: string, i: number, minute: number): string {
  if (type === 'L') return i % 2 === 0 ? String(18446744073709551615n - BigInt(minute)) : String(i);
  if (type === 'l') return i % 2 === 0 ? String(-9007199254740991n - BigInt(minute)) : String(i);
  if (type === 's') return `t${minute}-${i}`;
  return String(minute + i / 8);
}

/** One request: every metric of `METRICS`, all stamped in a minute no other request uses. */
function buildRequest(ledger: Ledger): { body: string; request: Request } {
  const minute = ledger.nextMinute++;
  const request: Request = { samples: [], hists: new Map(), minute };
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) {
    const name = NAMES[i % NAMES.length]!;
    const type = METRICS[name]!;
    const ms = minute * 60_000 + i * 100;
    if (type === 'h') {
      // Values 10 apart land in distinct bins, so a doubled merge shows as a count of 2.
      lines.push(h1Line(ms, name, 10 * (i + 1)));
      request.hists.set(name, (request.hists.get(name) ?? 0) + 1);
      continue;
    }
    const value = valueFor(type, i, minute);
    lines.push(mLine(stamp(ms), name, type, value));
    request.samples.push([name, ms, type === 's' ? value : value]);
  }
  return { body: lines.join('\n'), request };
}

async function writeUntilKilled(node: ChildNode, ledger: Ledger, killAfterMs: number, idleBeforeKillMs: number): Promise<void> {
  let writing = true;
  const stopWriting = setTimeout(() => (writing = false), killAfterMs);
  const writer = async () => {
    while (writing) {
      const { body, request } = buildRequest(ledger);
      ledger.unsure.push(request);
      try {
        const res = await fetch(`${node.url}/raw`, { method: 'PUT', body });
        await res.arrayBuffer();
        if (res.status !== 200) continue;
        ledger.unsure.splice(ledger.unsure.indexOf(request), 1);
        ledger.acked.push(request);
      } catch {
        return; // the node is gone
      }
    }
  };
  await Promise.all([writer(), writer(), writer()]);
  clearTimeout(stopWriting);
  // A pause lets checkpoints seal some buffers (histograms) but not others before the kill.
  await new Promise((r) => setTimeout(r, idleBeforeKillMs));
  node.child.kill('SIGKILL');
  await node.exited;
}

/** Every sample of a metric as `ts → JSON text of the value`. */
async function readSamples(url: string, metric: string): Promise<Map<number, string>> {
  const name = encodeURIComponent(metric);
  const path = METRICS[metric] === 's' ? `/read/0/999999999/${UUID}/${name}?get_specific_range=true` : `/raw/${UUID}/${name}?start_ts=0.000&end_ts=999999999.000`;
  const r = await getJson(url + path);
  if (r.status !== 200 && r.status !== 404) throw new Error(`${metric}: ${r.status} ${r.text}`);
  const out = new Map<number, string>();
  if (r.status === 404) return out;
  for (const m of r.text.matchAll(/\[(\d+),((?:"(?:[^"\\]|\\.)*")|[^\]]+)\]/g)) out.set(Number(m[1]), m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!);
  return out;
}

/** Per minute, the bin counts of a histogram metric. */
async function readHistograms(url: string, metric: string): Promise<Map<number, number[]>> {
  const r = await getJson(`${url}/histogram/0/999999999/60/${UUID}/${encodeURIComponent(metric)}`);
  if (r.status !== 200 && r.status !== 404) throw new Error(`${metric}: ${r.status} ${r.text}`);
  const out = new Map<number, number[]>();
  if (r.status === 404) return out; // nothing of this metric acknowledged yet
  for (const [ts, , bins] of r.json as [number, number, Record<string, number>][]) out.set(ts / 60, Object.values(bins));
  return out;
}

/** Problems found: acknowledged records missing or changed, or any record stored twice or in part. */
async function verify(url: string, ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];
  const stored = new Map<string, Map<number, string>>();
  for (const m of NAMES) if (METRICS[m] !== 'h') stored.set(m, await readSamples(url, m));
  const hists = new Map<string, Map<number, number[]>>();
  for (const m of HISTS) hists.set(m, await readHistograms(url, m));
  const check = (request: Request, acked: boolean) => {
    const present = request.samples.filter(([m, ts]) => stored.get(m)!.has(ts)).length;
    if (!acked && present === 0 && HISTS.every((m) => !hists.get(m)!.has(request.minute))) return;
    for (const [m, ts, v] of request.samples) {
      const got = stored.get(m)!.get(ts);
      if (got !== v) problems.push(`${acked ? '' : 'partly stored '}${m}@${ts}=${v} read ${got}`);
    }
    for (const [m, n] of request.hists) {
      const bins = hists.get(m)!.get(request.minute) ?? [];
      const total = bins.reduce((s, c) => s + c, 0);
      if (bins.length !== n || total !== n) problems.push(`${m} minute ${request.minute}: ${n} submissions read as ${bins.length} bins, ${total} counts`);
    }
  };
  for (const r of ledger.acked) check(r, true);
  for (const r of ledger.unsure) check(r, false);
  return problems;
}

test(`acknowledged records of every type survive SIGKILL, counted once (${TRIALS} trials)`, async (t) => {
  t.timeout(900_000);
  const dir = tempDir('ferrite-crash-');
  const ledger: Ledger = { acked: [], unsure: [], nextMinute: 1_000 };
  // Checkpoints seal histograms at once, while numeric buffers stay open until they hold
  // 64 samples: kills then land between a histogram's seal and its journal entry's
  // truncation (which replay then re-applies), and in every other phase of the write path.
  // Verification reads before the first checkpoint after the restart.
  const args = ['--partitions', '4'];
  const env = { FERRITE_CHECKPOINT_INTERVAL_MS: '400', FERRITE_MAX_BLOCK_SAMPLES: '64', FERRITE_BLOCK_SPAN_MS: '600000' };
  Object.assign(process.env, env);
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      const node = await spawnNode(dir, args);
      const problems = await verify(node.url, ledger);
      t.deepEqual(problems.slice(0, 5), [], `trial ${trial}: ${problems.length} problems right after restart`);
      if (problems.length > 0) return;
      // Requests that were in flight are now settled one way or the other.
      ledger.unsure.length = 0;
      await writeUntilKilled(node, ledger, 30 + Math.floor(Math.random() * 300), trial % 3 === 0 ? 0 : 400 + Math.floor(Math.random() * 800));
    }
    const final = await spawnNode(dir, args);
    t.deepEqual((await verify(final.url, ledger)).slice(0, 5), []);
    t.true(ledger.acked.length > 100, `only ${ledger.acked.length} requests were acknowledged; the test exercised too little`);
    final.child.kill('SIGKILL');
    await final.exited;
  } finally {
    for (const key of Object.keys(env)) delete process.env[key];
    rmSync(dir, { recursive: true, force: true });
  }
});

const zstdName = (m: number) => `zstd.m${m}|ST[host:h${m % 9}]`;

test('a body journaled compressed replays after SIGKILL: every sample reads back once', async (t) => {
  const dir = tempDir('ferrite-kill-zstd-');
  const lines = 20_000;
  try {
    const first = await spawnNode(dir);
    // ≈ 1.4 MB of TSV, kept in the journal as a zstd frame a twentieth of that (model/journal-entry.ts).
    const body = Array.from({ length: lines }, (_, i) => mLine(`${1000 + (i % 50)}.000`, zstdName(Math.floor(i / 50)), 'n', String(i / 4))).join('\n');
    t.is((await fetch(`${first.url}/raw`, { method: 'PUT', body })).status, 200);
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await spawnNode(dir);
    const stats = (await getJson(`${second.url}/stats.json`)).json;
    t.true(stats.ingest.journal_replayed._value >= 1, 'the body came back from the journal');
    for (const m of [0, 1, 199, 399]) {
      const back = (await getJson(`${second.url}/raw/${UUID}/${encodeURIComponent(zstdName(m))}?start_ts=0.000&end_ts=5000.000`)).json;
      t.deepEqual(back, Array.from({ length: 50 }, (_, k) => [(1000 + k) * 1000, (m * 50 + k) / 4]), zstdName(m));
    }
    second.child.kill('SIGTERM');
    t.is(await second.exited, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a stop seals tens of thousands of open buffers of one partition, and all of them read back', async (t) => {
  const dir = tempDir('ferrite-term-many-');
  // One partition: its seal at the stop is one batch of every buffer.
  const flags = ['--shards', '1', '--partitions', '1'];
  const series = 45_000;
  try {
    const first = await spawnNode(dir, flags);
    for (let from = 0; from < series; from += 15_000) {
      const body = Array.from({ length: 15_000 }, (_, i) => mLine(`${1000 + ((from + i) % 7)}.000`, `many.m${from + i}`, 'n', String(from + i))).join('\n');
      t.is((await fetch(`${first.url}/raw`, { method: 'PUT', body })).status, 200);
    }
    first.child.kill('SIGTERM');
    t.is(await first.exited, 0);
    const second = await spawnNode(dir, flags);
    const stats = (await getJson(`${second.url}/stats.json`)).json;
    t.is(stats.ingest.journal_replayed._value, 0, 'every buffer was sealed: the journal is empty');
    for (const m of [0, 19_999, 20_000, 39_999, 40_000, series - 1]) {
      const back = (await getJson(`${second.url}/raw/${UUID}/many.m${m}?start_ts=0.000&end_ts=5000.000`)).json;
      t.deepEqual(back, [[(1000 + (m % 7)) * 1000, m]], `many.m${m}`);
    }
    second.child.kill('SIGTERM');
    t.is(await second.exited, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SIGTERM drains, seals and exits 0; nothing is left to replay', async (t) => {
  const dir = tempDir('ferrite-term-');
  try {
    const first = await spawnNode(dir);
    const body = Array.from({ length: 100 }, (_, i) => mLine(`${1000 + i}.000`, 'term.metric', 'n', String(i))).join('\n');
    t.is((await fetch(`${first.url}/raw`, { method: 'PUT', body })).status, 200);
    first.child.kill('SIGTERM');
    t.is(await first.exited, 0);
    const second = await spawnNode(dir);
    const stats = (await getJson(`${second.url}/stats.json`)).json;
    t.is(stats.ingest.journal_replayed._value, 0, 'a graceful stop seals everything, so the journal is empty');
    const back = (await getJson(`${second.url}/raw/${UUID}/term.metric?start_ts=0.000&end_ts=5000.000`)).json;
    t.is(back.length, 100);
    second.child.kill('SIGTERM');
    t.is(await second.exited, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
