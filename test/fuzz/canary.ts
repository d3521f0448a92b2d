// The canary: a small data set of every kind, written before a fuzz file starts and read
// back, exactly, after each of its tests. The fuzzers never name its account or check, so
// whatever they send, these values must not change (issue 17: "never corrupt or lose other data").
import type { ExecutionContext } from 'ava';
import { Histogram, histogramToBase64 } from '../../model/histogram/index.js';

export const CANARY_ACCOUNT = 424_242;
export const CANARY_UUID = 'ca7a2100-0000-4000-8000-00000000c0de';
const CHECK = `canary.example\`fuzz\`c_${CANARY_ACCOUNT}_1::fuzz\`${CANARY_UUID}`;
/** Minute-aligned, so the histogram's base period starts at T0. */
const T0 = 1_699_999_980;

const HIST = histogramToBase64([1, 2, 2, 250, -0.5].reduce((h, v) => h.insert(v), Histogram.empty()));

const LINES = [
  ['M', `${T0}.000`, CHECK, 'canary.n|ST[role:canary]', 'n', '42.5'],
  ['M', `${T0 + 60}.000`, CHECK, 'canary.n|ST[role:canary]', 'n', '-1e300'],
  ['M', `${T0}.000`, CHECK, 'canary.L', 'L', '18446744073709551615'],
  ['M', `${T0 + 60}.000`, CHECK, 'canary.L', 'L', '5'],
  ['M', `${T0}.001`, CHECK, 'canary.l', 'l', '-9007199254740993'],
  ['M', `${T0}.000`, CHECK, 'canary.s', 's', 'canary ✓ text'],
  ['M', `${T0 + 30}.000`, CHECK, 'canary.s', 's', 'second'],
  ['H1', `${T0}.000`, CHECK, 'canary.h', HIST],
].map((f) => f.join('\t'));

const tagged = encodeURIComponent('canary.n|ST[role:canary]');

/** Each read and the exact answer it must give. */
const READS: [string, unknown][] = [
  [`/raw/${CANARY_UUID}/${tagged}?start_ts=0&end_ts=2000000000`, [[T0 * 1000, 42.5], [(T0 + 60) * 1000, -1e300]]],
  [`/raw/${CANARY_UUID}/canary.L?start_ts=0&end_ts=2000000000`, `RAW:[[${T0}000,18446744073709551615],[${T0 + 60}000,5]]`],
  [`/raw/${CANARY_UUID}/canary.l?start_ts=0&end_ts=2000000000`, `RAW:[[${T0}001,-9007199254740993]]`],
  [`/read/0/2000000000/${CANARY_UUID}/canary.s?get_specific_range=true`, [[T0 * 1000, 'canary ✓ text'], [(T0 + 30) * 1000, 'second']]],
  [`/histogram/${T0 - 600}/${T0 + 600}/60/${CANARY_UUID}/canary.h`, [[T0, 60, { '-50e-002': 1, '+10e-001': 1, '+20e-001': 2, '+25e+001': 1 }]]],
  [
    `/find/${CANARY_ACCOUNT}/tags?query=${encodeURIComponent('and(__name:canary*)')}&activity=0`,
    ['canary.h', 'canary.l', 'canary.L', 'canary.n|ST[role:canary]', 'canary.s'].map((metric_name) => ({ metric_name })),
  ],
];

export async function writeCanary(url: string): Promise<void> {
  const res = await fetch(`${url}/raw`, { method: 'PUT', body: LINES.join('\n') });
  const body = await res.text();
  if (res.status !== 200 || JSON.parse(body).updated !== LINES.length) throw new Error(`canary write failed: ${res.status} ${body}`);
}

/** Reads every canary value back; each must be exactly as written. */
export async function checkCanary(t: ExecutionContext, url: string): Promise<void> {
  for (const [path, expected] of READS) {
    const res = await fetch(url + path, { signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    t.is(res.status, 200, `canary read ${path}: ${text.slice(0, 300)}`);
    if (typeof expected === 'string') {
      // 64-bit integers beyond 2^53 come back as exact JSON digits, which JSON.parse would round.
      t.is(text, expected.slice('RAW:'.length), `canary read ${path}`);
      continue;
    }
    let actual = JSON.parse(text) as unknown;
    if (path.startsWith('/find/')) actual = (actual as { metric_name: string }[]).map(({ metric_name }) => ({ metric_name }));
    t.deepEqual(actual, expected, `canary read ${path}`);
  }
}
