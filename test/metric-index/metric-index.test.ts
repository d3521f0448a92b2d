// The metric index against real RocksDB: what stage+apply indexes is found by every query
// form exactly as matching each metric would find it, survives a reload with the same dense
// ids, forgets removed metrics, and upgrades a data dir written before dense ids.
import test from 'ava';
import fc from 'fast-check';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { zstdDecompressSync } from 'node:zlib';
import { canonicalizeMetricName } from '../../model/metric-name.js';
import { placeMetric } from '../../model/metric-key.js';
import { matchTagQuery, parseTagQuery, type MetricView } from '../../model/tag-query/index.js';
import type { MetricKey } from '../../model/types.js';
import { CF, postingKey, TYPE_KEYS, typeKey, V1_POSTINGS } from '../../storage/keys.js';
import { MetricIndex, type IndexableMetric, type IndexKind } from '../../storage/metric-index/metric-index.js';
import { evaluate } from '../../storage/metric-index/query-plan.js';
import { decodeNameRecord, encodeNameRecord } from '../../storage/metric-index/name-record.js';
import { snapshotFile, takeSnapshot, writeSnapshot } from '../../storage/metric-index/snapshot.js';
import { Store } from '../../storage/rocks.js';
import { tempDir } from '../helpers/node.js';

const ACCOUNT = 3;
const NOW = 1_700_000_000;

function metric(uuid: string, raw: string, accountId = ACCOUNT): IndexableMetric {
  const name = canonicalizeMetricName(raw);
  if (!name.ok) throw new Error(name.reason);
  return { id: placeMetric(`${uuid}-${name.value.canonical}` as MetricKey, 1).id, accountId, uuid, checkName: 'c_3_1::t', name: name.value };
}

async function withStore(run: (store: Store, dir: string) => Promise<void>): Promise<void> {
  const dir = tempDir();
  const store = await Store.open(dir);
  try {
    await run(store, dir);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function index(store: Store, metrics: { m: IndexableMetric; kind: IndexKind }[]): Promise<MetricIndex> {
  const { index } = await MetricIndex.load(store);
  const batch = store.batch();
  const staged = index.stage(
    batch,
    metrics.map(({ m, kind }) => ({ metric: m, kind })),
  );
  await batch.write();
  index.apply(staged);
  return index;
}

function search(ix: MetricIndex, query: string, checkTags = new Map<string, [string, string][]>()): string[] {
  const account = ix.account(ACCOUNT);
  if (account === undefined) return [];
  const ids = evaluate(parseTagQuery(query), {
    categories: account.categories,
    universe: account.all.view(),
    bound: ix.bound,
    typesOf: (id) => ix.typesOf(id),
    activeBetween: (id, from, to) => ix.activity.activeBetween(id, from, to),
    checkTags,
    nowSecs: NOW,
  });
  return [...ids].filter((id) => ix.isAlive(id)).map((id) => ix.canonicalOf(id)).sort();
}

const UUIDS = ['0a2a3f6c-0000-4000-8000-000000000001', '0a2a3f6c-0000-4000-8000-000000000002'];
const NAMES = ['cpu', 'cpu.user', 'mem', 'disk`io', 'n1', 'n10'];
const VALUES = ['a', 'ab', 'b', 'h1', 'h10', 'h2', 'x:y', ''];
const KINDS: IndexKind[] = ['numeric', 'text', 'histogram'];

const arbMetric = fc.record({
  uuid: fc.constantFrom(...UUIDS),
  name: fc.constantFrom(...NAMES),
  tags: fc.array(fc.tuple(fc.constantFrom('host', 'role', 'dc'), fc.option(fc.constantFrom(...VALUES), { nil: null })), { maxLength: 3 }),
  kind: fc.constantFrom(...KINDS),
});

const arbLeaf = fc.oneof(
  fc.constantFrom('__name:cpu', '__name:cpu*', '__name:/^n1/', '__name:[exact]n1', 'host', 'host:h1*', 'host:/h[12]$/', 'role:a', 'role:', 'dc:*', '*:h1', 'ho*:a*', '__type:text', '__type:numeric', '/^(r|d)/:b', `__check_uuid:${UUIDS[0]}`, '__activity:1699990000-1700000100', 'host:[graphite]h?'),
);
const arbQuery: fc.Arbitrary<string> = fc.letrec<{ q: string }>((tie) => ({
  q: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    arbLeaf.map((l) => `and(${l})`),
    fc.array(fc.oneof(arbLeaf, tie('q')), { minLength: 1, maxLength: 3 }).map((a) => `and(${a.join(',')})`),
    fc.array(fc.oneof(arbLeaf, tie('q')), { minLength: 1, maxLength: 3 }).map((a) => `or(${a.join(',')})`),
    fc.oneof(arbLeaf, tie('q')).map((a) => `and(not(${a}))`),
  ),
})).q;

test('every query form finds exactly the metrics matching it one by one', async (t) => {
  await withStore(async (store) => {
    const spec = fc.sample(arbMetric, { numRuns: 120, seed: 42 });
    const entries = spec.map((s) => {
      const tags = s.tags.map(([c, v]) => (v === null ? c : `${c}:${v}`));
      return { m: metric(s.uuid, tags.length ? `${s.name}|ST[${tags.join(',')}]` : s.name), kind: s.kind };
    });
    const ix = await index(store, entries);
    const views = new Map<string, MetricView>();
    const types = new Map<string, Set<string>>();
    const keyOf = (m: IndexableMetric) => `${m.uuid}-${m.name.canonical}`;
    for (const { m, kind } of entries) {
      (types.get(keyOf(m)) ?? types.set(keyOf(m), new Set()).get(keyOf(m))!).add(kind);
      ix.activity.note(ix.lookup(m.id), (NOW - 60) * 1000);
    }
    for (const { m } of entries) {
      const kinds = ['numeric', 'histogram', 'text'].filter((k) => types.get(keyOf(m))!.has(k));
      const tags = m.name.tags.map((tag) => [tag.category, tag.value ?? ''] as [string, string]);
      views.set(keyOf(m), { name: m.name.name, checkUuid: m.uuid, types: kinds, tags, activity: [[1_699_999_800, 1_700_000_100]] });
    }
    const checkTags = new Map<string, [string, string][]>([[UUIDS[1]!, [['dc', 'b']]]]);
    fc.assert(
      fc.property(arbQuery, (q) => {
        t.deepEqual(search(ix, q, checkTags), canonicalsOf(views, parseTagQuery(q), checkTags), q);
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

/** Canonical names of the views a query matches (check tags joined to their check's metrics). */
function canonicalsOf(views: Map<string, MetricView>, query: ReturnType<typeof parseTagQuery>, checkTags: Map<string, [string, string][]>): string[] {
  return [...views.entries()]
    .filter(([, v]) => matchTagQuery(query, { ...v, tags: [...v.tags, ...(checkTags.get(v.checkUuid) ?? [])] }, NOW))
    .map(([key]) => key.slice(37))
    .sort();
}

test('dense ids, names and types survive a reload; removed metrics are gone for good', async (t) => {
  await withStore(async (store) => {
    const a = metric(UUIDS[0]!, 'cpu|ST[host:a]');
    const b = metric(UUIDS[0]!, 'mem|ST[host:b]');
    const c = metric(UUIDS[1]!, 'cpu|ST[host:b64,role:b"Zm9vIGJhcg=="]');
    const first = await index(store, [
      { m: a, kind: 'numeric' },
      { m: b, kind: 'text' },
      { m: b, kind: 'numeric' },
      { m: c, kind: 'histogram' },
    ]);
    const ids = [a, b, c].map((m) => first.lookup(m.id));
    t.deepEqual(ids, [0, 1, 2]);
    const batch = store.batch();
    first.stageRemove(batch, a.id);
    await batch.write();
    first.removed(a.id);
    t.false(first.has(a.id));
    t.deepEqual(search(first, 'and(__name:cpu)'), [c.name.canonical]);

    const { index: again, report } = await MetricIndex.load(store);
    t.is(report.metrics, 2);
    t.deepEqual([b, c].map((m) => again.lookup(m.id)), [1, 2]);
    t.false(again.has(a.id));
    t.deepEqual(again.typesOf(1), ['numeric', 'text']);
    t.is(again.canonicalOf(2), c.name.canonical);
    t.is(again.uuidOf(2), UUIDS[1]);
    t.deepEqual(search(again, 'and(role:foo bar)'), [c.name.canonical], 'encoded values are searched decoded');
    // A new metric continues after the highest id on disk.
    const d = metric(UUIDS[1]!, 'disk');
    const batch2 = store.batch();
    again.apply(again.stage(batch2, [{ metric: d, kind: 'numeric' }]));
    await batch2.write();
    t.is(again.lookup(d.id), 3);
  });
});

test('a metric staged in a batch that was never written is not searchable, and a later batch names it again', async (t) => {
  await withStore(async (store) => {
    const { index: ix } = await MetricIndex.load(store);
    const m = metric(UUIDS[0]!, 'cpu');
    const lost = store.batch();
    ix.stage(lost, [{ metric: m, kind: 'numeric' }]);
    lost.discard();
    t.false(ix.has(m.id));
    t.deepEqual(search(ix, 'and(__name:cpu)'), []);
    const batch = store.batch();
    const staged = ix.stage(batch, [{ metric: m, kind: 'numeric' }]);
    t.is(staged.fresh.length, 1);
    await batch.write();
    ix.apply(staged);
    t.deepEqual(search(ix, 'and(__name:cpu)'), ['cpu']);
    t.is((await MetricIndex.load(store)).report.metrics, 1);
  });
});

test('a data dir from before dense ids (JSON name records, posting and type keys) is upgraded on load', async (t) => {
  await withStore(async (store) => {
    const old = [metric(UUIDS[0]!, 'cpu|ST[host:a]'), metric(UUIDS[1]!, 'mem')];
    const batch = store.batch();
    for (const m of old) {
      batch.put(CF.metrics, m.id, Buffer.from(JSON.stringify({ account_id: ACCOUNT, uuid: m.uuid, check_name: m.checkName, metric_name: m.name.canonical })));
      batch.put(CF.index, postingKey(ACCOUNT, '__name', m.name.name, m.id), Buffer.alloc(0));
      batch.put(CF.index, typeKey(m.id, 'numeric'), Buffer.alloc(0));
    }
    await batch.write();
    const { index: ix, report } = await MetricIndex.load(store);
    t.is(report.migrated, 2);
    t.deepEqual(search(ix, 'and(__name:*)'), ['cpu|ST[host:a]', 'mem']);
    t.deepEqual(ix.typesOf(ix.lookup(old[0]!.id)), ['numeric']);
    let postings = 0;
    for await (const _ of store.scan(CF.index, V1_POSTINGS)) postings++;
    t.is(postings, 0, 'v1 posting keys are dropped');
    const { index: again, report: second } = await MetricIndex.load(store);
    t.is(second.migrated, 0);
    t.deepEqual(old.map((m) => again.lookup(m.id)), old.map((m) => ix.lookup(m.id)));
  });
});

test('series are counted per account and check from staging, through a reload, until removed', async (t) => {
  await withStore(async (store) => {
    const [u1, u2] = UUIDS as [string, string];
    const ix = await index(store, [
      { m: metric(u1, 'a'), kind: 'numeric' },
      { m: metric(u1, 'a'), kind: 'text' },
      { m: metric(u1, 'b'), kind: 'numeric' },
      { m: metric(u2, 'c'), kind: 'numeric' },
      { m: metric(u2, 'd', 4), kind: 'numeric' },
    ]);
    t.is(ix.seriesOfAccount(ACCOUNT), 3);
    t.is(ix.seriesOfAccount(4), 1);
    t.is(ix.seriesOfCheck(u1), 2);
    t.is(ix.seriesOfCheck(u2), 2, 'a check uuid counts under every account it appears in');
    // Staged, its batch not yet written: already counted, so a limit sees it.
    const pending = store.batch();
    ix.stage(pending, [{ metric: metric(u1, 'e'), kind: 'numeric' }]);
    t.is(ix.seriesOfCheck(u1), 3);
    await pending.write();
    const removed = store.batch();
    ix.stageRemove(removed, metric(u1, 'a').id);
    await removed.write();
    ix.removed(metric(u1, 'a').id);
    t.is(ix.seriesOfAccount(ACCOUNT), 3);
    t.deepEqual(ix.seriesReport(1), { accounts: [[ACCOUNT, 3], [4, 1]], checks: [{ uuid: u1, account: ACCOUNT, checkName: 'c_3_1::t', series: 2 }] });
    const { index: reloaded } = await MetricIndex.load(store);
    t.is(reloaded.seriesOfCheck(u1), 2);
    t.is(reloaded.seriesOfAccount(ACCOUNT), 3);
    t.is(reloaded.seriesOfCheck(u2), 2);
    t.is(reloaded.seriesOfAccount(4), 1);
  });
});

test('an index snapshot reads back the index a rebuild gives; its token is good for one open only', async (t) => {
  await withStore(async (store, dir) => {
    const spec = fc.sample(arbMetric, { numRuns: 150, seed: 11 });
    const entries = spec.map((s) => {
      const tags = s.tags.map(([c, v]) => (v === null ? c : `${c}:${v}`));
      return { m: metric(s.uuid, tags.length ? `${s.name}|ST[${tags.join(',')}]` : s.name), kind: s.kind };
    });
    entries.push({ m: metric(UUIDS[1]!, 'spelled|ST[role:b"Zm9vIGJhcg=="]'), kind: 'numeric' }, { m: metric(UUIDS[0]!, 'other', 7), kind: 'text' });
    const live = await index(store, entries);
    // Activity as the shard keeps it (a window per metric; one metric with two), and a removed metric.
    for (const { m } of entries) live.setActivity(m.id, [[1_699_999_800, 1_700_000_100]]);
    live.setActivity(entries[0]!.m.id, [[1_600_000_000, 1_600_000_300], [1_699_999_800, 1_700_000_100]]);
    const gone = entries[1]!.m;
    const batch = store.batch();
    live.stageRemove(batch, gone.id);
    await batch.write();
    live.removed(gone.id);

    const file = snapshotFile(dir);
    await writeSnapshot(store, file, live.image()!);
    const image = await takeSnapshot(store, file);
    t.not(image, null);
    const restored = MetricIndex.fromImage(store, image!);
    const rebuilt = (await MetricIndex.load(store)).index;
    t.is(restored.report().loaded_from_snapshot, 1);
    for (const ix of [restored, rebuilt]) t.is(ix.lookup(gone.id), -1);
    for (const { m } of entries.filter((e) => e.m !== gone)) {
      const id = rebuilt.lookup(m.id);
      t.is(restored.lookup(m.id), id);
      t.is(restored.canonicalOf(id), rebuilt.canonicalOf(id));
      t.deepEqual(restored.typesOf(id), rebuilt.typesOf(id));
      t.deepEqual(restored.activity.windows(id), live.activity.windows(id));
    }
    t.deepEqual(restored.seriesReport(10), rebuilt.seriesReport(10));
    // Activity lives in the shard's partitions, not in this store: compare searches with the index written.
    for (const q of fc.sample(arbQuery, { numRuns: 200, seed: 3 })) t.deepEqual(search(restored, q), search(live, q), q);

    // The restored index goes on working: a new metric gets the next dense id and is found.
    const fresh = metric(UUIDS[0]!, 'fresh|ST[host:h1]');
    const more = store.batch();
    const staged = restored.stage(more, [{ metric: fresh, kind: 'numeric' }]);
    await more.write();
    restored.apply(staged);
    t.deepEqual(search(restored, 'and(__name:fresh)'), ['fresh|ST[host:h1]']);

    // The token was taken: the same file again is not the index.
    await writeSnapshot(store, file, live.image()!);
    t.not(await takeSnapshot(store, file), null);
    t.is(await takeSnapshot(store, file), null, 'taken once');
  });
});

/** Rewrites a snapshot file as version `version` with its sections uncompressed (as version 1 stored them). */
function asPlainVersion(file: string, version: number): void {
  const bytes = readFileSync(file);
  const parts: Buffer[] = [Buffer.from(bytes.subarray(0, 24))];
  parts[0]!.writeUInt32LE(version, 4);
  for (let at = 24; at < bytes.length; ) {
    // Version 4 sections: frame length, uncompressed length, frame.
    const len = bytes.readUInt32LE(at);
    const raw = zstdDecompressSync(bytes.subarray(at + 8, at + 8 + len));
    const head = Buffer.alloc(4);
    head.writeUInt32LE(raw.length);
    parts.push(head, raw);
    at += 8 + len;
  }
  writeFileSync(file, Buffer.concat(parts));
}

test('an index snapshot is compressed; one of an earlier version is not read, and the index is rebuilt from its records', async (t) => {
  await withStore(async (store, dir) => {
    const entries = Array.from({ length: 2000 }, (_, i) => ({ m: metric(UUIDS[i % 2]!, `cpu.usage_user|ST[datacenter:eu-${i % 3}a,hostname:host_${i},region:eu-${i % 3}]`), kind: 'numeric' as IndexKind }));
    const live = await index(store, entries);
    const file = snapshotFile(dir);
    await writeSnapshot(store, file, live.image()!);
    const compressed = statSync(file).size;
    asPlainVersion(file, 1);
    const plain = statSync(file).size;
    t.true(compressed * 3 < plain, `compressed ${compressed} B, plain ${plain} B`);
    t.is(await takeSnapshot(store, file), null, 'version 1 (term text lengths in UTF-16 units) is not read');
    const rebuilt = (await MetricIndex.load(store)).index;
    for (const { m } of entries) t.is(rebuilt.canonicalOf(rebuilt.lookup(m.id)), live.canonicalOf(live.lookup(m.id)));
    t.deepEqual(search(rebuilt, 'and(hostname:host_7)'), search(live, 'and(hostname:host_7)'));
  });
});

async function typeKeys(store: Store): Promise<string[]> {
  const out: string[] = [];
  for await (const { key } of store.scan(CF.index, TYPE_KEYS)) out.push(key.toString('hex'));
  return out.sort();
}

test('a new metric\'s first kind is in its name record (no type key); a later kind is a type key; both survive a reload', async (t) => {
  await withStore(async (store) => {
    const a = metric(UUIDS[0]!, 'cpu|ST[host:a]');
    const first = await index(store, [{ m: a, kind: 'numeric' }]);
    t.deepEqual(await typeKeys(store), []);
    t.deepEqual(first.typesOf(first.lookup(a.id)), ['numeric']);
    const batch = store.batch();
    first.apply(first.stage(batch, [{ metric: a, kind: 'text' }]));
    await batch.write();
    t.deepEqual(await typeKeys(store), [typeKey(a.id, 'text').toString('hex')]);
    const { index: again } = await MetricIndex.load(store);
    t.deepEqual(again.typesOf(again.lookup(a.id)), ['numeric', 'text']);
  });
});

test('one stage names each new metric once and stages each later kind once, however its records interleave', async (t) => {
  await withStore(async (store) => {
    const { index: ix } = await MetricIndex.load(store);
    const [a, b] = [metric(UUIDS[0]!, 'cpu'), metric(UUIDS[0]!, 'mem')];
    const batch = store.batch();
    const kinds = ['numeric', 'numeric', 'text', 'numeric', 'text', 'histogram'] as const;
    const staged = ix.stage(batch, kinds.map((kind, i) => ({ metric: i % 2 === 0 ? a : b, kind })));
    t.deepEqual(staged.fresh, [a, b], 'one name record each');
    const [ia, ib] = [staged.freshIds[0]!, staged.freshIds[1]!];
    t.deepEqual(staged.types, [ia, 1, ib, 1, ia, 4, ib, 2], 'the first kind in the record, each later kind once');
    await batch.write();
    ix.apply(staged);
    t.deepEqual(await typeKeys(store), [typeKey(a.id, 'text'), typeKey(b.id, 'histogram')].map((k) => k.toString('hex')).sort());
    const again = store.batch();
    t.deepEqual(ix.stage(again, [{ metric: a, kind: 'text' }, { metric: b, kind: 'text' }]).types, [ib, 4], 'the next call starts clean: only what is new');
    again.discard();
  });
});

test('a metric named again by a second batch before the first is applied keeps the first batch\'s kinds in its record', async (t) => {
  await withStore(async (store) => {
    const { index: ix } = await MetricIndex.load(store);
    const m = metric(UUIDS[0]!, 'cpu');
    const one = store.batch();
    const stagedOne = ix.stage(one, [{ metric: m, kind: 'numeric' }]);
    const two = store.batch();
    const stagedTwo = ix.stage(two, [{ metric: m, kind: 'histogram' }]);
    await one.write();
    await two.write();
    ix.apply(stagedOne);
    ix.apply(stagedTwo);
    t.deepEqual(ix.typesOf(ix.lookup(m.id)), ['numeric', 'histogram']);
    const { index: again } = await MetricIndex.load(store);
    t.deepEqual(again.typesOf(again.lookup(m.id)), ['numeric', 'histogram'], 'the second record replaced the first and kept its kind');
  });
});

test('name records read back whatever their checks, record after record (a check\'s bytes are reused while it repeats)', (t) => {
  const check = fc.record({ accountId: fc.constantFrom(0, 7, 2 ** 32 - 1), uuid: fc.constantFrom(UUIDS[0]!, UUIDS[1]!, UUIDS[0]!.toUpperCase(), 'not-a-uuid', '', 'é'), checkName: fc.constantFrom('c_7_1::http', '', 'ü`x', 'c'.repeat(300)) });
  fc.assert(
    fc.property(fc.array(fc.tuple(check, fc.string({ maxLength: 40 }), fc.nat({ max: 2 ** 32 - 1 }), fc.nat({ max: 255 })), { maxLength: 30 }), (records) => {
      for (const [c, canonical, denseId, typeBits] of records) {
        const record = encodeNameRecord(denseId, typeBits, { ...c, canonical });
        t.deepEqual(decodeNameRecord(record), { denseId, typeBits, ...c, canonical });
        // The name given as its UTF-8 bytes (the index's copy) makes the same record.
        t.deepEqual(encodeNameRecord(denseId, typeBits, { ...c, canonical: Buffer.from(canonical, 'utf8') }), record);
      }
    }),
  );
});

test('name records: v3 keeps a lowercase UUID in 16 bytes and any other check id as text; v2 records still read', (t) => {
  const fields = { accountId: 7, uuid: UUIDS[0]!, checkName: 'c_7_1::http', canonical: 'cpu|ST[host:a]' };
  const v3 = encodeNameRecord(12, 5, fields);
  t.deepEqual(decodeNameRecord(v3), { denseId: 12, typeBits: 5, ...fields });
  t.is(v3.length, 1 + 4 + 1 + 4 + 1 + 16 + 2 + fields.checkName.length + fields.canonical.length);
  for (const uuid of [UUIDS[0]!.toUpperCase(), 'not-a-uuid', '']) t.deepEqual(decodeNameRecord(encodeNameRecord(1, 1, { ...fields, uuid })), { denseId: 1, typeBits: 1, ...fields, uuid });
  // v2, as the release before wrote it: 0x02 | dense id | account | uuid length | uuid | check length | check | name.
  const uuid = Buffer.from(fields.uuid);
  const check = Buffer.from(fields.checkName);
  const head = Buffer.alloc(10);
  head.writeUInt8(2, 0);
  head.writeUInt32BE(3, 1);
  head.writeUInt32BE(7, 5);
  head.writeUInt8(uuid.length, 9);
  const checkLength = Buffer.alloc(2);
  checkLength.writeUInt16BE(check.length);
  const v2 = Buffer.concat([head, uuid, checkLength, check, Buffer.from(fields.canonical)]);
  t.deepEqual(decodeNameRecord(v2), { denseId: 3, typeBits: 0, ...fields });
});
