// The data every CAQL catalogue test reads: a real node, written through /raw, queried over
// real HTTP. Series hold one sample per minute from T0 (a UTC midnight, so windows of minutes
// and hours align with it); `at(i)` is minute i. Expected values in the tests are worked out
// by hand from these tables.
import type { TestFn } from 'ava';
import { Histogram, histogramToBase64 } from '../../model/histogram/index.js';
import { CHECK, mLine, put, startNode, type TestNode } from '../helpers/node.js';

/** 2023-11-14T00:00:00Z (19:00 the day before in US/Eastern). */
export const T0 = 1_699_920_000;
export const ACCOUNT = '123';
export const at = (minute: number) => T0 + minute * 60;

/** Numeric series: name → values at minutes from `from` (default 0); null is no sample. */
export const SERIES: Record<string, { from?: number; values: (number | null)[] }> = {
  'cpu|ST[host:a,dc:east]': { values: [1, 2, 3, 4, 5, 6] },
  'cpu|ST[host:b,dc:east]': { values: [10, 20, null, 40, 50, 60] },
  'cpu|ST[host:c,dc:west]': { values: [5, 5, 5, 5, 5, 5] },
  'requests|ST[host:a]': { values: [100, 160, 220, 10, 70, 130] },
  'errors|ST[host:a]': { values: [1, 2, 3, 4, 5, 6] },
  'errors|ST[host:b]': { values: [5, 5, 5, 5, 5, 5] },
  'reqs|ST[host:a]': { values: [10, 10, 10, 10, 10, 10] },
  'reqs|ST[host:b]': { values: [20, 20, 20, 20, 20, 20] },
  'reqs|ST[host:c]': { values: [40, 40, 40, 40, 40, 40] },
  'flag|ST[host:a]': { values: [0, 1, 1, 1, 0, 1] },
  'phase|ST[host:a]': { values: [1, 1, 2, 2, 2, 3] },
  'prod.nodea.cpu.idle': { values: [1, 1, 1, 1, 1, 1] },
  'prod.nodeb.cpu.idle': { values: [2, 2, 2, 2, 2, 2] },
  'prod.nodea.mem.free.bytes': { values: [3, 3, 3, 3, 3, 3] },
  /** y = 2·minute + 1, from minute −10 to 29. */
  trend: { from: -10, values: Array.from({ length: 40 }, (_, k) => 2 * (k - 10) + 1) },
  /** A season of three minutes (1, 5, 3) from minute −3 to 29. */
  season: { from: -3, values: Array.from({ length: 33 }, (_, k) => [1, 5, 3][k % 3]!) },
  /** 10 every minute from an hour before T0 to minute 39, but 50 in minutes 15–19. */
  steady: { from: -60, values: Array.from({ length: 100 }, (_, k) => (k - 60 >= 15 && k - 60 < 20 ? 50 : 10)) },
};

/** Histogram series: samples per minute from T0. */
export const HISTOGRAMS: Record<string, number[][]> = {
  latency: [[1, 2], [3], [], [4, 4], [5], [6]],
  'lat2|ST[host:b]': [[1], [1], [1], [4], [1], [1]],
};

async function load(url: string): Promise<void> {
  const lines: string[] = [];
  for (const [name, { from = 0, values }] of Object.entries(SERIES)) {
    values.forEach((v, k) => v !== null && lines.push(mLine(`${at(from + k)}.000`, name, 'n', String(v))));
  }
  for (const [name, minutes] of Object.entries(HISTOGRAMS)) {
    minutes.forEach((samples, i) => {
      if (samples.length > 0) lines.push(['H1', `${at(i)}.000`, CHECK, name, histogramToBase64(samples.reduce((h, v) => h.insert(v), new Histogram()))].join('\t'));
    });
  }
  const r = await put(url, lines.join('\n'));
  if (r.status !== 200) throw new Error(`loading the CAQL fixture: ${r.status} ${JSON.stringify(r.json)}`);
}

export interface Df4 {
  head: { start: number; period: number; count: number; warning?: string[]; explain?: any };
  meta: { kind: string; label: string; tags: string[] }[];
  data: unknown[][];
}

export interface CaqlClient {
  node(): TestNode;
  /** POSTs a query (DF4 over minutes 0–5 at 60 s unless `params` say otherwise): the status and body. */
  post(query: string, params?: Record<string, unknown>): Promise<{ status: number; json: any }>;
  /** The DF4 answer of a query that must succeed. */
  df4(query: string, params?: Record<string, unknown>): Promise<Df4>;
  /** Each output stream's values. */
  values(query: string, params?: Record<string, unknown>): Promise<unknown[][]>;
  labels(query: string, params?: Record<string, unknown>): Promise<string[]>;
  /** The user-error message of a query that must fail with a 400. */
  error(query: string, params?: Record<string, unknown>): Promise<string>;
}

/** Starts a node holding the fixture for the test file, stopped after it. */
export function useCaqlNode(test: TestFn): CaqlClient {
  let n: TestNode | undefined;
  test.before(async () => {
    n = await startNode();
    await load(n.url);
  });
  test.after.always(() => n?.stop());
  const post = async (query: string, params: Record<string, unknown> = {}) => {
    const body = { q: query, start: T0, end: at(6), period: 60, format: 'DF4', ...params };
    const r = await fetch(`${n!.url}/extension/lua/caql_v1`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-svc-account-id': ACCOUNT } });
    return { status: r.status, json: (await r.json()) as any };
  };
  const df4 = async (query: string, params?: Record<string, unknown>) => {
    const r = await post(query, params);
    if (r.status !== 200) throw new Error(`${query} answered ${r.status}: ${JSON.stringify(r.json)}`);
    return r.json as Df4;
  };
  return {
    node: () => n!,
    post,
    df4,
    values: async (query, params) => (await df4(query, params)).data,
    labels: async (query, params) => (await df4(query, params)).meta.map((m) => m.label),
    async error(query, params) {
      const r = await post(query, params);
      if (r.status !== 400) throw new Error(`${query} answered ${r.status}, not 400: ${JSON.stringify(r.json)}`);
      return r.json.user_error.message as string;
    },
  };
}

/** Values rounded to 9 decimals, so hand-worked fractions compare exactly. */
export function rounded(rows: unknown[][]): unknown[][] {
  return rows.map((row) => row.map((v) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v)));
}
