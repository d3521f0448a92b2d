// Fuzz: the PromQL engine in-process, over data with what breaks evaluation code — counters and
// resets, gaps, NaN and ±Inf values, ferrite histograms next to floats, series that collide once
// their name is dropped — for instant and range grids, including queries from the grammar with
// every matching modifier. Every query either gives a value or a PromQLError / MatcherError (a
// 400 on the API); anything else thrown is a defect.
import test from 'ava';
import fc from 'fast-check';
import { Histogram } from '../../model/histogram/index.js';
import { compileMatcher, matchesAll, MatcherError } from '../../model/prometheus/matchers.js';
import type { SeriesData } from '../../model/prometheus/types.js';
import { PromQLError } from '../../model/promql/ast.js';
import { evaluate } from '../../model/promql/evaluate.js';
import { parsePromQL } from '../../model/promql/parse.js';
import type { PromSource } from '../../model/promql/source.js';
import { runs } from './harness.js';
import { promql } from './promql-arbitraries.js';

const T = 1_700_000_000_000;
const at = (k: number): number => T - 3600_000 + k * 15_000;
const points = (f: (k: number) => SeriesData['samples']['values'][number]): SeriesData['samples'] => ({ ts: Array.from({ length: 240 }, (_, k) => at(k)), values: Array.from({ length: 240 }, (_, k) => f(k)) });

const DATA: SeriesData[] = [
  { labels: { __name__: 'up', job: 'api', instance: 'a' }, samples: points((k) => (k % 50 === 7 ? null : 1)) },
  { labels: { __name__: 'up', job: 'web', instance: 'a' }, samples: points((k) => (k > 100 ? 0 : 1)) },
  { labels: { __name__: 'http_requests_total', job: 'api', le: '0.5' }, samples: points((k) => (k % 90) * 3) },
  { labels: { __name__: 'http_requests_total', job: 'api', le: '+Inf' }, samples: points((k) => (k % 90) * 5) },
  { labels: { __name__: 'fuzz_m', job: 'api' }, samples: points((k) => [NaN, Infinity, -Infinity, 0, -1, 1e308][k % 6]!) },
  { labels: { __name__: 'fuzz_m', job: 'api', instance: 'x' }, samples: points((k) => (k % 3 === 0 ? Histogram.empty().insert(k).insert(-k) : k)) },
  { labels: { __name__: 'x:y', job: 'api' }, samples: points((k) => k / 7) }, // collides with fuzz_m{job="api"} once names drop
];

const source: PromSource = {
  async select(matchers, startMs, endMs) {
    const compiled = matchers.map(compileMatcher);
    return DATA.filter((d) => matchesAll(compiled, d.labels)).map((d) => {
      const keep = d.samples.ts.flatMap((t, i) => (t >= startMs && t <= endMs ? [i] : []));
      return { labels: d.labels, samples: { ts: keep.map((i) => d.samples.ts[i]!), values: keep.map((i) => d.samples.values[i]!) } };
    });
  },
};

const grid = fc.oneof(
  fc.constant({ startMs: T, stepMs: 1, count: 1 }),
  fc.record({ startMs: fc.integer({ min: T - 3600_000, max: T }), stepMs: fc.constantFrom(1000, 15_000, 60_000, 7_777), count: fc.integer({ min: 1, max: 40 }) }),
);

test('the engine evaluates every query or refuses it with a PromQLError', async (t) => {
  await fc.assert(
    fc.asyncProperty(promql, grid, async (query, g) => {
      try {
        const expr = parsePromQL(query, { stepMs: g.stepMs, rangeMs: (g.count - 1) * g.stepMs });
        await evaluate(expr, g, { source, lookbackMs: 300_000, queryStartMs: g.startMs, queryEndMs: g.startMs + (g.count - 1) * g.stepMs });
      } catch (error) {
        if (!(error instanceof PromQLError || error instanceof MatcherError)) throw new Error(`${query} @ ${JSON.stringify(g)}: ${(error as Error).stack}`);
      }
    }),
    { numRuns: runs(1500) },
  );
  t.pass();
});

test('label names that are Object.prototype properties are labels like any other', async (t) => {
  const grid1 = { startMs: T, stepMs: 1, count: 1 };
  const run = async (query: string) => evaluate(parsePromQL(query, { stepMs: 1, rangeMs: 0 }), grid1, { source, lookbackMs: 300_000, queryStartMs: T, queryEndMs: T });
  // A counterexample fast-check found: `toString` was read from the prototype (a function).
  t.truthy(await run('sum(up{toString!~""})'));
  t.truthy(await run('sum(up{constructor=""})'));
  const replaced = await run('label_replace(up{job="api"}, "__proto__", "$1", "job", "(.*)")');
  if (replaced.kind !== 'vector') return t.fail(replaced.kind);
  const labels = replaced.series[0]!.labels;
  t.is(Object.getPrototypeOf(labels), Object.prototype, 'the prototype is untouched');
  t.true(Object.hasOwn(labels, '__proto__'));
  t.is(labels['__proto__'], 'api');
});
