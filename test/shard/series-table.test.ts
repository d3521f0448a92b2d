// actors/shard/series-table.ts: one MetricInfo per metric a shard takes samples of, with its
// repeated texts shared between metrics; reads of other metrics are described, not kept.
import test from 'ava';
import { createHash } from 'node:crypto';
import { SeriesTable, type ShardMetric } from '../../actors/shard/series-table.js';
import type { WireMetric } from '../../model/metric-info.js';
import { canonicalizeMetricName } from '../../model/metric-name.js';
import type { AccountId } from '../../model/types.js';
import { metricKey } from '../../model/metric-key.js';

/** As a metric arrives by structured clone: every text a fresh copy. */
function wire(n: number): WireMetric {
  const name = canonicalizeMetricName(`cpu|ST[host:h${n % 2},dc:east]`);
  if (!name.ok) throw new Error(name.reason);
  const fresh = (s: string) => s.split('').join('');
  const uuid = fresh('0b0b0b0b-0000-4000-8000-000000000001');
  return structuredClone({
    key: metricKey(uuid, name.value.canonical),
    accountId: 1 as AccountId,
    uuid,
    checkName: fresh('check'),
    name: name.value,
    idHex: n.toString(16).padStart(32, '0'),
    partition: n % 4,
  }) as WireMetric;
}

test('a metric is adopted once; later samples get views of the same row', (t) => {
  const table = new SeriesTable(() => null);
  const a = table.adopt(wire(1));
  t.is(table.adopt(wire(1)).row, a.row);
  t.is(table.size, 1);
  t.not(table.adopt(wire(2)).row, a.row);
  t.deepEqual(a.id, Buffer.from(wire(1).idHex, 'hex'));
  t.is(a.indexId, -1);
});

test('metrics whose texts are kept once read back exactly as they arrived, before and after the index holds their names', (t) => {
  // (Whether two equal strings are one copy is not observable from JS; the heap figures in the README are.)
  // The index's part: the names it holds, by storage id.
  const indexed = new Map<string, string>();
  const table = new SeriesTable((id) => indexed.get(id.toString('hex')) ?? null);
  const [a, b] = [table.adopt(wire(1)), table.adopt(wire(2))];
  const same = (info: typeof a, n: number, when: string) => {
    const w = wire(n);
    t.deepEqual(
      { uuid: info.uuid, checkName: info.checkName, name: info.name, key: info.key, id: info.id, idHex: info.idHex },
      { uuid: w.uuid, checkName: w.checkName, name: w.name, key: w.key, id: Buffer.from(w.idHex, 'hex'), idHex: w.idHex },
      when,
    );
  };
  same(a, 1, 'as adopted');
  same(b, 2, 'as adopted');
  indexed.set(a.idHex, wire(1).name.canonical);
  a.indexed();
  same(a, 1, 'once indexed, the name is the index\'s, parsed again when asked');
  t.is(a.name.canonical, wire(1).name.canonical);
  table.forget(a.idHex);
  indexed.delete(a.idHex);
  same(a, 1, 'a forgotten metric keeps its name after the index lets go of it');
  indexed.delete(b.idHex);
  b.indexed();
  t.throws(() => b.name, { message: /index does not hold it/ }, 'a name the index was said to hold and does not is a bug, not a wrong name');
});

test('resolve describes an unknown metric without keeping it; forget drops a known one', (t) => {
  const table = new SeriesTable(() => null);
  const seen = table.resolve(wire(5));
  t.is(seen.key, wire(5).key);
  t.is(table.size, 0);
  const a = table.adopt(wire(5));
  t.is((table.resolve(wire(5)) as typeof a).row, a.row);
  table.forget(a.idHex);
  t.not(table.adopt(wire(5)).row, a.row, 'data written after a full delete starts a fresh metric');
});

test('metrics are found by their hex storage id past many growths of the table; ids read before a growth still read the same', (t) => {
  const table = new SeriesTable(() => null);
  const hex = (n: number) => createHash('sha256').update(String(n)).digest('hex').slice(0, 32);
  const early = table.adopt({ ...wire(0), idHex: hex(0) });
  const earlyId = early.id;
  const all = Array.from({ length: 5000 }, (_, n) => table.adopt({ ...wire(n), idHex: hex(n) }));
  t.is(all[0]!.row, early.row);
  t.is(table.size, 5000);
  t.true(all.every((m, n) => table.find(hex(n))?.row === m.row && m.id.toString('hex') === hex(n)));
  t.is(earlyId.toString('hex'), hex(0));
  t.is(table.find(hex(5001)), undefined);
  table.forget(hex(7));
  t.is(table.size, 4999);
  t.is(table.find(hex(7)), undefined);
  t.throws(() => table.find('xyz'), { message: /not 16 bytes of hex/ });
});

test('each metric keeps its own state (index id, open buffer, slice, sealed, newest sealed window) past the columns\' growth; one forgotten keeps its state apart from the fresh one', (t) => {
  const table = new SeriesTable(() => null);
  const hex = (n: number) => createHash('sha256').update(`s${n}`).digest('hex').slice(0, 32);
  const all = Array.from({ length: 3000 }, (_, n) => table.adopt({ ...wire(n), idHex: hex(n) }));
  const empty = (m: ShardMetric) => m.indexId === -1 && m.openHead === -1 && m.lastSlice === -1 && !m.unsealed && m.newestSealedS === 0;
  t.true(all.every(empty), 'fresh metrics start empty');
  all.forEach((m, n) => {
    m.indexId = n * 3;
    m.openHead = n * 5;
    m.lastSlice = n + 7;
    m.unsealed = n % 2 === 0;
    m.newestSealedS = 1_800_000_000 + n * 3600;
  });
  const more = Array.from({ length: 3000 }, (_, n) => table.adopt({ ...wire(n), idHex: hex(n + 3000) }));
  t.true(more.every(empty), 'rows made after a growth start empty too');
  t.true(all.every((m, n) => m.indexId === n * 3 && m.openHead === n * 5 && m.lastSlice === n + 7 && m.unsealed === (n % 2 === 0) && m.newestSealedS === 1_800_000_000 + n * 3600 && m.partition === n % 4));
  const old = all[10]!;
  table.forget(old.idHex);
  const fresh = table.adopt({ ...wire(10), idHex: hex(10) });
  t.is(fresh.indexId, -1);
  fresh.openHead = 99;
  t.is(old.openHead, 50, 'the forgotten metric reads its own state');
  t.is(old.indexId, 30);
  t.deepEqual(fresh.id, old.id);
});
