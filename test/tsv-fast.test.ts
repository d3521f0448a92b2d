// The TSV fast path (plain decimal M lines straight into columns) must accept and reject
// exactly what the full line parser does, with the same values, timestamps and errors.
import test from 'ava';
import fc from 'fast-check';
import { IngestBatch, type Placed } from '../model/ingest-batch.js';
import type { MetricResolution } from '../model/ingest-record.js';
import { parseTsv, parseTsvInto, type TsvContext } from '../model/tsv.js';
import type { AccountId, EpochMs, MetricKey } from '../model/types.js';

const metric = (name: string): Placed => ({ key: name as MetricKey, accountId: 1 as AccountId, uuid: 'u', checkName: 'c', name: { canonical: name } as never, partition: name.length % 3 });
const metrics = new Map<string, Placed>();
const ctx: TsvContext<Placed> = {
  resolve: (check, name): MetricResolution<Placed> => {
    if (check !== 'chk' || name.length === 0 || name.includes(' ')) return { ok: false, reason: `bad metric ${check}/${name}` };
    let m = metrics.get(name);
    if (m === undefined) metrics.set(name, (m = metric(name)));
    return { ok: true, metric: m };
  },
  latestAllowed: 2_000_000_000_000 as EpochMs,
  textSizeLimit: 512,
};

const digits = (max: number) => fc.stringMatching(new RegExp(`^[0-9]{1,${max}}$`));
const value = fc.oneof(
  digits(17),
  fc.tuple(fc.constantFrom('', '-', '+'), digits(10), fc.constantFrom('', '.'), fc.oneof(fc.constant(''), digits(8))).map((p) => p.join('')),
  fc.double().map(String),
  fc.constantFrom('-0', '0', '.5', '5.', '.', '', '1e5', 'NaN', 'inf', '[[null]]', '1\t2', ' 1', '00012', '99999999999999999999'),
);
const line = fc
  .tuple(
    fc.constantFrom('M', 'M', 'M', 'H1', 'X'),
    fc.oneof(fc.tuple(digits(12), digits(3)).map(([s, ms]) => `${s}.${ms}`), fc.constantFrom('1.5', '1700000000', '9999999999999.000', 'x.000')),
    fc.constantFrom('chk', 'other'),
    fc.constantFrom('a', 'b|ST[x:y]', 'c.d', '', 'has space'),
    fc.constantFrom('n', 'i', 'I', 'l', 'L', 's', 'q', 'nn'),
    value,
  )
  .map((f) => f.join('\t'));

const summary = (records: Iterable<{ kind: string; metric: Placed; ts: number; value: unknown }>) =>
  [...records].map((r) => `${r.kind} ${r.metric.key} ${r.ts} ${typeof r.value === 'number' && Object.is(r.value, -0) ? '-0' : String(r.value)}`).sort();

test('fast and full TSV parsing agree on every line', (t) => {
  fc.assert(
    fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
      const body = lines.join('\n');
      const full = parseTsv(body, ctx);
      const batch = new IngestBatch<Placed>();
      const fast = parseTsvInto(body, ctx, batch);
      if (fast.lines !== full.lines) throw new Error('line counts differ');
      if (JSON.stringify(fast.errors) !== JSON.stringify(full.errors)) throw new Error(`errors differ:\n${JSON.stringify(fast.errors)}\n${JSON.stringify(full.errors)}`);
      const a = summary(batch.records());
      const b = summary(full.records);
      if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`records differ for ${JSON.stringify(body)}:\n${a.join('\n')}\n---\n${b.join('\n')}`);
    }),
    { numRuns: 3000 },
  );
  t.pass();
});
