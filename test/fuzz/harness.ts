// The fuzz harness (issue 17, "Proving it"): a real node in its own process, requests sent
// over real HTTP, and one property for every generated request — the answer is a 2xx, or a
// 4xx whose body is a JSON error, never a 5xx, and it comes within FUZZ_TIMEOUT_MS. The node
// runs as a separate process so that a request blocking its event loop shows up here as a
// missing answer (the AbortSignal below fires in this process), not as a frozen test.
import type { ExecutionContext, TestFn } from 'ava';
import fc from 'fast-check';
import { rmSync } from 'node:fs';
import { killSpawnedNodes, spawnNode, tempDir, type ChildNode } from '../helpers/node.js';
import { ERRORS, type ErrorCode } from '../../model/errors.js';
import { Histogram, histogramToBase64 } from '../../model/histogram/index.js';
import { checkCanary, writeCanary } from './canary.js';

/** One generated request. `path` is already URL-encoded (it may hold deliberately bad escapes). */
export interface FuzzRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The request set its own deadline (`_timeout`, x-svc-timeout): a 504 is the answer it asked for. */
  mayTimeOut?: boolean;
}

export interface Answer {
  status: number;
  type: string;
  text: string;
}

/** Which 4xx bodies count as a JSON error: ours `{error, code}`, CAQL's user error, Prometheus'. */
export type ErrorShape = (json: unknown) => boolean;

export const ferriteError: ErrorShape = (j) => isObject(j) && typeof j.error === 'string' && j.error !== '';
export const caqlError: ErrorShape = (j) => isObject(j) && j.success === false && isObject(j.user_error) && typeof j.user_error.message === 'string';
export const promError: ErrorShape = (j) => isObject(j) && j.status === 'error' && typeof j.errorType === 'string' && typeof j.error === 'string';

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `FERRITE_FUZZ_RUNS` multiplies every property's number of runs (`npm run fuzz` sets it). */
export const RUN_SCALE = Math.max(1, Number(process.env.FERRITE_FUZZ_RUNS ?? 1) || 1);
/** How long one request may take before it counts as a hang (a detector, not a timing assert). */
export const FUZZ_TIMEOUT_MS = Number(process.env.FERRITE_FUZZ_TIMEOUT_MS ?? 8000);

/** FERRITE_FUZZ_VERBOSE=1 logs the most frequent error answers, to see what the generators reach. */
const VERBOSE = process.env.FERRITE_FUZZ_VERBOSE === '1';

export function runs(base: number): number {
  return Math.round(base * RUN_SCALE);
}

export interface FuzzNode {
  url: string;
  child: ChildNode;
  /** Error-level log lines of the node, for the report when a property fails. */
  errorLog: string[];
  stop(): Promise<void>;
}

/** Account and check the fuzzers are pointed at; the canary lives elsewhere. */
export const FUZZ_ACCOUNT = 17;
export const FUZZ_UUID = '0f0f0f0f-1717-4017-8017-000000000017';

/** Metrics of the fuzz check that hold data (written before the fuzzers run), so reads find something. */
export const FUZZ_METRICS = { numeric: ['fuzz.m', 'cpu|ST[host:web1]'], text: ['fuzz.a.b.c'], histogram: ['up', 'x|ST[a:1,b:2]'] } as const;
const FUZZ_T0 = 1_699_999_980;

/** A few samples of every kind for FUZZ_METRICS, an hour around FUZZ_T0. */
async function writeFuzzData(url: string): Promise<void> {
  const check = `fuzz\`http\`c_${FUZZ_ACCOUNT}_1::http\`${FUZZ_UUID}`;
  const hist = histogramToBase64(Histogram.empty().insert(1).insert(10).insert(100));
  const lines: string[] = [];
  for (let i = 0; i < 60; i++) {
    const ts = `${FUZZ_T0 + (i - 30) * 60}.000`;
    for (const name of FUZZ_METRICS.numeric) lines.push(['M', ts, check, name, i % 7 === 0 ? 'L' : 'n', i % 7 === 0 ? String(2n ** 64n - 1n - BigInt(i)) : String(i * 1.5)].join('\t'));
    for (const name of FUZZ_METRICS.text) lines.push(['M', ts, check, name, 's', `t${i % 3}`].join('\t'));
    for (const name of FUZZ_METRICS.histogram) lines.push(['H1', ts, check, name, hist].join('\t'));
  }
  const res = await fetch(`${url}/raw`, { method: 'PUT', body: lines.join('\n') });
  if (res.status !== 200) throw new Error(`fuzz data write failed: ${res.status} ${await res.text()}`);
}

export async function startFuzzNode(extraArgs: string[] = []): Promise<FuzzNode> {
  const dataDir = tempDir('ferrite-fuzz-');
  const args = ['--partitions', '4', '--default-account', String(FUZZ_ACCOUNT), '--default-check-uuid', FUZZ_UUID, ...extraArgs];
  const child = await spawnNode(dataDir, args);
  const errorLog: string[] = [];
  let partial = '';
  child.child.stdout!.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (/"level":(50|60)/.test(line)) errorLog.push(line.slice(0, 1500));
  });
  return {
    url: child.url,
    child,
    errorLog,
    async stop() {
      if (child.child.exitCode === null) {
        child.child.kill('SIGTERM');
        await child.exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Sends one request; a missing answer after FUZZ_TIMEOUT_MS is reported as a hang. */
export async function send(url: string, r: FuzzRequest): Promise<Answer> {
  const started = Date.now();
  try {
    const res = await fetch(url + r.path, {
      method: r.method,
      headers: r.headers ?? {},
      ...(r.body === undefined || r.method === 'GET' ? {} : { body: r.body }),
      signal: AbortSignal.timeout(FUZZ_TIMEOUT_MS),
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type') ?? '', text };
  } catch (error) {
    const e = error as Error;
    if (e.name === 'TimeoutError') throw new Error(`HANG: no answer within ${FUZZ_TIMEOUT_MS} ms (${Date.now() - started} ms)`);
    throw new Error(`no answer: ${e.message}${e.cause === undefined ? '' : ` (${String(e.cause)})`}`);
  }
}

/** Why the answer breaks the property, or null when it keeps it. */
export function problemWith(answer: Answer, r: FuzzRequest, shape: ErrorShape): string | null {
  const { status, text } = answer;
  let json: unknown;
  let parsed = false;
  try {
    json = JSON.parse(text);
    parsed = true;
  } catch {
    // judged below
  }
  if (status >= 200 && status < 300) {
    if (answer.type.includes('json') && text !== '' && !parsed) return `${status} says JSON but the body does not parse: ${text.slice(0, 300)}`;
    return null;
  }
  const errorBody = parsed && shape(json);
  // Our error codes each have one status (model/errors.ts, docs/errors.md): the answer must use it.
  const code = isObject(json) && typeof json.code === 'string' && json.code in ERRORS ? (json.code as ErrorCode) : null;
  if (code !== null && ERRORS[code].status !== status) return `${status} with ${code}, whose status is ${ERRORS[code].status}: ${text.slice(0, 300)}`;
  if (status >= 400 && status < 500) return errorBody ? null : `${status} without a JSON error body: ${text.slice(0, 300)}`;
  if (status === 504 && r.mayTimeOut === true && errorBody) return null;
  return `${status}: ${text.slice(0, 500)}`;
}

export interface FuzzOptions {
  /** Runs in CI; FERRITE_FUZZ_RUNS multiplies them. */
  runs: number;
  /** Regression inputs, always run first (counterexamples the fuzzers found). */
  examples?: FuzzRequest[];
  shape?: ErrorShape;
}

/**
 * Runs the property over `arb`: every request answered, 2xx or 4xx with a JSON error. A
 * failure names the request, the answer, the node's error log and fast-check's seed
 * (rerun with FERRITE_FUZZ_SEED=<seed> to replay it).
 */
export async function fuzz(t: ExecutionContext, node: FuzzNode, arb: fc.Arbitrary<FuzzRequest>, options: FuzzOptions): Promise<void> {
  const shape = options.shape ?? ferriteError;
  const seed = process.env.FERRITE_FUZZ_SEED === undefined ? undefined : Number(process.env.FERRITE_FUZZ_SEED);
  const statuses = new Map<number, number>();
  const reasons = new Map<string, number>();
  // The node keeps state between requests: a failure may be an earlier request's doing.
  const recent: string[] = [];
  const report = (problem: string, r: FuzzRequest) =>
    new Error(`${problem}\nrequest: ${describe(r)}\nrequests before it:\n${recent.join('\n') || 'none'}\nnode errors: ${node.errorLog.slice(-1).join('\n') || 'none'}`);
  const property = fc.asyncProperty(arb, async (r) => {
    let answer: Answer;
    try {
      answer = await send(node.url, r);
    } catch (error) {
      throw report((error as Error).message, r);
    }
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    if (VERBOSE && answer.status >= 400) reasons.set(answer.text.slice(0, 90), (reasons.get(answer.text.slice(0, 90)) ?? 0) + 1);
    const problem = problemWith(answer, r, shape);
    if (problem !== null) throw report(problem, r);
    recent.push(`${new Date().toISOString()} ${describe(r).slice(0, 3000)}`);
    if (recent.length > 3) recent.shift();
  });
  await fc.assert(property, {
    numRuns: runs(options.runs),
    includeErrorInReport: true,
    examples: (options.examples ?? []).map((e) => [e] as [FuzzRequest]),
    ...(seed === undefined ? {} : { seed }),
  });
  // What the answers were, so a run that never got past validation is visible.
  if (VERBOSE) t.log([...reasons].sort(([, a], [, b]) => b - a).slice(0, 12).map(([r, n]) => `${n} × ${r}`).join('\n'));
  t.log([...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(', '));
  t.pass();
}

/** A request, printable: the body as text when it is text, else hex. */
export function describe(r: FuzzRequest): string {
  const body = r.body === undefined ? '' : typeof r.body === 'string' ? JSON.stringify(r.body.slice(0, 2000)) : `hex ${Buffer.from(r.body).toString('hex').slice(0, 2000)}`;
  return `${r.method} ${r.path.slice(0, 1000)} headers=${JSON.stringify(r.headers ?? {})} body=${body}`;
}

/**
 * Registers a fuzz file's node: started (and the canary written) before its tests, the
 * canary checked after each test, the node stopped at the end. Returns the node's getter.
 */
export function useFuzzNode(test: TestFn, extraArgs: string[] = []): () => FuzzNode {
  let node: FuzzNode | undefined;
  test.before(async () => {
    node = await startFuzzNode(extraArgs);
    await writeCanary(node.url);
    await writeFuzzData(node.url);
  });
  test.afterEach.always('the canary reads back unchanged', (t) => checkCanary(t, node!.url));
  test.after.always(async () => {
    await node?.stop();
    killSpawnedNodes();
  });
  return () => node!;
}
