// storage/metric-index/term-dictionary.ts: whatever values and ids are added (one at a time or
// as a bulk load, merged into order or still in the unsorted tail, compacted or not), lookups,
// pattern searches and the image (values in byte order) answer what a plain map of sets answers.
import test from 'ava';
import fc from 'fast-check';
import { globTest, type Matcher } from '../../model/tag-query/index.js';
import { TermColumnsBuilder, TermCursor } from '../../storage/metric-index/term-columns.js';
import { NO_VALUE, TermDictionary } from '../../storage/metric-index/term-dictionary.js';

type Model = Map<string, Set<number>>;

/** Values sharing prefixes (so prefix ranges hold several), with some non-ASCII and astral ones. */
const value = fc.oneof(
  fc.constantFrom('a', 'ab', 'abc', 'b', 'cpu', 'cpu.user', 'cpu.system', 'é', 'éa', '\u{1F600}', '\uE000', 'z', NO_VALUE),
  fc.tuple(fc.constantFrom('host', 'cpu.', 'h\u00e9', 'x'), fc.nat(300)).map(([p, n]) => `${p}${n}`),
);
const op = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('add' as const), value, id: fc.nat(60) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), dead: fc.nat(60) }) },
);

function glob(pattern: string): Matcher {
  return { kind: 'glob', pattern, test: globTest(pattern) };
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function check(d: TermDictionary, model: Model): boolean {
  const want = (keys: string[]) => keys.map((k) => `${k}=${[...model.get(k)!].sort((a, b) => a - b).join(',')}`).sort();
  const got = (terms: { text: string; ids: { view(): Uint32Array } }[]) => terms.map((t) => `${t.text}=${[...t.ids.view()].join(',')}`).sort();
  const keys = [...model.keys()];
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (d.size !== model.size) return false;
  if (d.postings !== [...model.values()].reduce((n, s) => n + s.size, 0)) return false;
  for (const k of keys) if (!same(got([d.get(k)!]), want([k]))) return false;
  if (d.get('never') !== undefined) return false;
  if (!same(got(d.matching(null)), want(keys))) return false;
  for (const p of ['a*', 'cpu.*', 'host1*', 'h\u00e9*', '*1', '\u{1F600}*', 'é*']) {
    const test = globTest(p);
    if (!same(got(d.matching(glob(p))), want(keys.filter((k) => test(k === NO_VALUE ? '' : k))))) return false;
  }
  return same(imageTexts(d), [...keys].sort(byteOrder));
}

/** The values' texts in the order an index image holds them. */
function imageTexts(d: TermDictionary): string[] {
  const out = new TermColumnsBuilder({ terms: 0, textBytes: 0, postings: 0 });
  const count = d.writeTo(out, null);
  const columns = out.finish();
  const cursor = new TermCursor(columns);
  return Array.from({ length: count }, () => {
    cursor.next();
    return Buffer.from(columns.texts.subarray(cursor.textAt, cursor.textAt + cursor.textLength)).toString('utf8');
  });
}

test('lookups, searches and the sorted image agree with a map of sets, added one at a time', (t) => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
      const d = new TermDictionary();
      const model: Model = new Map();
      for (const o of ops) {
        if (o.kind === 'add') {
          d.add(o.value, o.id);
          let s = model.get(o.value);
          if (s === undefined) model.set(o.value, (s = new Set()));
          s.add(o.id);
        } else {
          // Ids below `dead` die, as compaction of an index whose metrics were deleted.
          d.compact((id) => id >= o.dead);
          for (const [k, s] of model) {
            for (const id of s) if (id < o.dead) s.delete(id);
            if (s.size === 0) model.delete(k);
          }
        }
      }
      return check(d, model);
    }),
    { numRuns: 200 },
  );
  t.pass();
});

test('a bulk load (lists appended unsorted, with repeats) answers the same once ended, and an image round-trips', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(value, fc.nat(80)), { maxLength: 600 }), (adds) => {
      const d = new TermDictionary();
      const model: Model = new Map();
      for (const [v, id] of adds) {
        d.add(v, id, null, true);
        let s = model.get(v);
        if (s === undefined) model.set(v, (s = new Set()));
        s.add(id);
      }
      d.endBulk();
      if (!check(d, model)) return false;
      // Written twice into one image, the second time with odd ids only: read back in turn from one cursor.
      const out = new TermColumnsBuilder({ terms: 1, textBytes: 1, postings: 1 });
      const all = d.writeTo(out, null);
      const odd = d.writeTo(out, (id) => id % 2 === 1);
      const cursor = new TermCursor(out.finish());
      const again = TermDictionary.fromColumns(cursor, all, null);
      const oddAgain = TermDictionary.fromColumns(cursor, odd, null);
      const oddModel: Model = new Map();
      for (const [k, ids] of model) {
        const kept = new Set([...ids].filter((id) => id % 2 === 1));
        if (kept.size > 0) oddModel.set(k, kept);
      }
      return all === model.size && check(again, model) && check(oddAgain, oddModel);
    }),
    { numRuns: 100 },
  );
  t.pass();
});

test('a value spelled otherwise in canonical names keeps its spelling, with one id or several', (t) => {
  const d = new TermDictionary();
  d.add('web', 1, 'b"d2Vi"');
  t.is(d.get('web')!.spelling, 'b"d2Vi"');
  d.add('web', 2);
  t.is(d.get('web')!.spelling, 'b"d2Vi"', 'kept when the value gets a second metric');
  t.deepEqual([...d.get('web')!.ids.view()], [1, 2]);
  d.add('db', 3);
  t.is(d.get('db')!.spelling, null);
  d.add('api', 4, 'b"YXBp"');
  const out = new TermColumnsBuilder({ terms: 0, textBytes: 0, postings: 0 });
  const written = d.writeTo(out, null);
  const again = TermDictionary.fromColumns(new TermCursor(out.finish()), written, null);
  t.is(again.get('web')!.spelling, 'b"d2Vi"', 'a listed value spelled otherwise, through an image');
  t.is(again.get('api')!.spelling, 'b"YXBp"', 'a one-metric value spelled otherwise, through an image');
  t.is(again.get('db')!.spelling, null);
});

test('two hundred thousand one-metric values are found by their text and in order', (t) => {
  const d = new TermDictionary();
  const n = 200_000;
  for (let id = 0; id < n; id++) d.add(`bench.metric.${(id * 7919) % n}`, id);
  t.is(d.size, n);
  t.deepEqual([...d.get('bench.metric.12345')!.ids.view()], [(12345 * Math.round(inverse(7919, n))) % n]);
  t.deepEqual(
    d.matching(glob('bench.metric.19999*')).map((x) => x.text),
    ['bench.metric.19999', 'bench.metric.199990', 'bench.metric.199991', 'bench.metric.199992', 'bench.metric.199993', 'bench.metric.199994', 'bench.metric.199995', 'bench.metric.199996', 'bench.metric.199997', 'bench.metric.199998', 'bench.metric.199999'],
  );
});

/** x with (a × x) mod n = 1. */
function inverse(a: number, n: number): number {
  for (let x = 1; x < n; x++) if ((a * x) % n === 1) return x;
  throw new Error('no inverse');
}
