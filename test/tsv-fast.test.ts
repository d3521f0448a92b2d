// The TSV fast path (plain decimal M lines straight into columns) must accept and reject
// exactly what the full line parser does, with the same values, timestamps and errors.
import test from 'ava';
import fc from 'fast-check';
import { IngestBatch, PartitionedBatch, type Placed } from '../model/ingest-batch.js';
import type { MetricResolution } from '../model/ingest-record.js';
import { parseTsv, parseTsvInto, type TsvContext } from '../model/tsv.js';
import { RawKeys } from '../actors/ingest/raw-keys.js';
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

/** Metrics by number, as a parse worker keeps them (actors/ingest/worker-series.ts). */
const numbered: Placed[] = [];
const numbers = new Map<Placed, number>();
const numberOf = (m: Placed): number => numbers.get(m) ?? (numbers.set(m, numbered.push(m) - 1), numbered.length - 1);
const numberedCtx: TsvContext<number> = {
  ...ctx,
  resolve: (check, name) => {
    const r = ctx.resolve(check, name);
    return r.ok ? { ok: true, metric: numberOf(r.metric) } : r;
  },
};
class NumberedBatch extends PartitionedBatch<number> {
  protected partitionOf(n: number): number {
    return numbered[n]!.partition;
  }
}

const digits = (max: number) => fc.stringMatching(new RegExp(`^[0-9]{1,${max}}$`));
const value = fc.oneof(
  digits(17),
  fc.tuple(fc.constantFrom('', '-', '+'), digits(10), fc.constantFrom('', '.'), fc.oneof(fc.constant(''), digits(8))).map((p) => p.join('')),
  fc.double().map(String),
  fc.constantFrom('-0', '0', '.5', '5.', '.', '', '1e5', 'NaN', 'inf', '[[null]]', '1\t2', ' 1', '00012', '99999999999999999999', '1\r2', '3\r'),
);
const line = fc
  .tuple(
    fc.constantFrom('M', 'M', 'M', 'H1', 'X'),
    fc.oneof(fc.tuple(digits(12), digits(3)).map(([s, ms]) => `${s}.${ms}`), fc.constantFrom('1.5', '1700000000', '9999999999999.000', 'x.000')),
    fc.constantFrom('chk', 'other', 'ch\rk'),
    fc.constantFrom('a', 'b|ST[x:y]', 'c.d', '', 'has space', 'a\rb'),
    fc.constantFrom('n', 'i', 'I', 'l', 'L', 's', 'q', 'nn'),
    value,
  )
  .map((f) => f.join('\t'));

const summary = (records: Iterable<{ kind: string; metric: Placed; ts: number; value: unknown }>) =>
  [...records].map((r) => `${r.kind} ${r.metric.key} ${r.ts} ${typeof r.value === 'number' && Object.is(r.value, -0) ? '-0' : String(r.value)}`).sort();

/** Line ends as bodies have them, empty lines and stray CRs included. */
const separator = fc.constantFrom('\n', '\n', '\r\n', '\n\n', '\r', '\r\r\n', '\n\r\n');

/**
 * Lines, some cut short after one of their fields (a field's end is then the line's), some the
 * rest of a line from one of its tabs on (so a short line and the next read as one whole line).
 */
const someLine = fc.oneof(
  line,
  fc.tuple(line, fc.constantFrom(1, 2, 3, 4, 4, 4, 5)).map(([l, fields]) => l.split('\t').slice(0, fields).join('\t')),
  fc.tuple(line, fc.constantFrom(1, 2, 3, 4, 4, 4, 5)).map(([l, fields]) => `\t${l.split('\t').slice(fields).join('\t')}`),
);

/** Throws unless both parsers give `body` the same lines, errors and records. */
function agree(body: string): void {
  const full = parseTsv(body, ctx);
  const batch = new IngestBatch<Placed>();
  const fast = parseTsvInto(Buffer.from(body), ctx, batch);
  if (fast.lines !== full.lines) throw new Error('line counts differ');
  if (JSON.stringify(fast.errors) !== JSON.stringify(full.errors)) throw new Error(`errors differ:\n${JSON.stringify(fast.errors)}\n${JSON.stringify(full.errors)}`);
  const a = summary(batch.records());
  const b = summary(full.records);
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`records differ for ${JSON.stringify(body)}:\n${a.join('\n')}\n---\n${b.join('\n')}`);
}

test('fast and full TSV parsing agree on every line', (t) => {
  // A line short of its type and value, then one that is only those: two bad lines, not one good one.
  agree('M\t1700000000.000\tchk\ta\n\tn\t5');
  agree('M\t1700000000.000\tchk\ta\tn\t5\r\n\r\nM\t1700000000.000\tchk\ta\tn\t6\r');
  fc.assert(
    fc.property(fc.array(fc.tuple(someLine, separator), { maxLength: 30 }), fc.constantFrom('', '\n', '\r', '\r\n'), (lines, last) => agree(lines.map(([l, sep]) => l + sep).join('') + last)),
    { numRuns: 3000 },
  );
  t.pass();
});

test('with metrics remembered by their raw bytes (a parse worker), the first and later parses agree with the full parser', (t) => {
  const name = fc.oneof(fc.constantFrom('a', 'b|ST[x:y]', 'c.d', '', 'has space', 'ünï', 'ünï|ST[ö:ä]'), fc.string({ maxLength: 6 }));
  const anyLine = fc
    .tuple(fc.constantFrom('M', 'M', 'H1'), fc.constantFrom('1700000000.000', '1700000001.500', 'x.000'), fc.constantFrom('chk', 'other', 'chk'), name, fc.constantFrom('n', 'i', 's'), value)
    .map((f) => f.join('\t'));
  fc.assert(
    fc.property(fc.array(anyLine, { maxLength: 30 }), (lines) => {
      const body = lines.join('\n');
      const full = parseTsv(body, ctx);
      const known = new RawKeys(numberedCtx.resolve);
      for (const round of ['first', 'again']) {
        const batch = new NumberedBatch();
        const fast = parseTsvInto(Buffer.from(body), numberedCtx, batch, known);
        if (JSON.stringify(fast.errors) !== JSON.stringify(full.errors)) throw new Error(`${round}: errors differ`);
        const a = summary([...batch.records()].map((r) => ({ ...r, metric: numbered[r.metric]! })));
        const b = summary(full.records);
        if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${round}: records differ for ${JSON.stringify(body)}:\n${a.join('\n')}\n---\n${b.join('\n')}`);
      }
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('raw keys: the same name under another check, or bytes that differ anywhere, are other metrics', (t) => {
  const resolved: string[] = [];
  const known = new RawKeys((check, n) => {
    resolved.push(`${check}/${n}`);
    return { ok: true, metric: numberOf(metric(`${check}/${n}`)) };
  });
  const keyOf = (n: number | undefined) => (n === undefined ? undefined : numbered[n]!.key);
  const b = Buffer.from('chk\tcpu|ST[a:b]\nother\tcpu|ST[a:b]\nchk\tcpu|ST[a:c]');
  const fields: [number, number, number][] = [[0, 3, 15], [16, 21, 33], [34, 37, 49]];
  t.is(known.find(b, ...fields[0]), undefined, 'nothing known yet');
  const metrics = fields.map((f) => (known.resolveNew(b, ...f) as { metric: number }).metric);
  t.deepEqual(metrics.map(keyOf), ['chk/cpu|ST[a:b]', 'other/cpu|ST[a:b]', 'chk/cpu|ST[a:c]']);
  fields.forEach((f, i) => t.is(known.find(b, ...f), metrics[i], `fields ${i} are found`));
  // A miss is remembered for the fields that missed only: other fields resolved after it are hashed for themselves.
  const c = Buffer.from('chk\tmem|ST[a:b]\nchk\tdisk|ST[a:b]');
  t.is(known.find(c, 0, 3, 15), undefined);
  const disk = (known.resolveNew(c, 16, 19, 32) as { metric: number }).metric;
  t.is(keyOf(disk) as string | undefined, 'chk/disk|ST[a:b]');
  t.is(known.find(c, 16, 19, 32), disk, 'found by its own bytes');
  t.is(known.find(c, 0, 3, 15), undefined, 'the miss before it is still unknown');
  // A table past its first growth still finds everything.
  const many = Buffer.from(Array.from({ length: 5000 }, (_, i) => `chk\tm${i}`).join('\n'));
  let at = 0;
  const spans: [number, number, number][] = [];
  for (let i = 0; i < 5000; i++) {
    const tab = many.indexOf(9, at);
    const end = many.indexOf(10, tab) === -1 ? many.length : many.indexOf(10, tab);
    spans.push([at, tab, end]);
    at = end + 1;
  }
  for (const s of spans) known.resolveNew(many, ...s);
  t.true(spans.every((s, i) => keyOf(known.find(many, ...s)) === `chk/m${i}`));
  t.is(known.size, 5004);
  // The entry that followed last time is tried first; another order, or bytes that differ where it is expected, still find the right one.
  t.true([...spans].reverse().every((s) => keyOf(known.find(many, ...s)) === `chk/${many.toString('utf8', s[1] + 1, s[2])}`));
  t.true(spans.every((s, i) => keyOf(known.find(many, ...s)) === `chk/m${i}`));
  const swapped = Buffer.from('chk\tm1\nchk\tm3\nchk\tm2\nchk\tm9');
  t.is(String(keyOf(known.find(swapped, 0, 3, 6))), 'chk/m1');
  t.is(String(keyOf(known.find(swapped, 7, 10, 13))), 'chk/m3', 'not m2, which followed m1 before');
  t.is(String(keyOf(known.find(swapped, 14, 17, 20))), 'chk/m2');
  for (const i of [1, 2, 1]) known.find(many, ...spans[i]!);
  t.is(String(keyOf(known.find(Buffer.from('chk\tm7'), 0, 3, 6))), 'chk/m7', 'same length as the expected m2, one byte apart');
  t.is(known.find(Buffer.from('oth\tm2'), 0, 3, 6), undefined, 'the expected name under an unknown check');
});
