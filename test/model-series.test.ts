import test from 'ava';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { zstdCompressSync } from 'node:zlib';
import { conflictResolver, sampleCombiner } from '../model/conflict.js';
import { decodeJournal, decodeJournalEntry, encodeJournalEntry, encodeRawJournalEntry, JOURNAL_ZSTD_MIN, journalForm, RAW_HEADROOM, type RawContext } from '../model/journal-entry.js';
import { allocWithHeadroom, headroomOf } from '../model/headroom.js';
import { normalizeLastWins, normalizeNumeric, sliceSeries } from '../model/series.js';
import { selectTextRows } from '../model/text-read.js';
import type { IngestRecord } from '../model/ingest-record.js';
import type { AccountId, EpochMs, MetricKey } from '../model/types.js';

test('abs_biggest keeps the largest magnitude, whatever the order', (t) => {
  const r = conflictResolver('abs_biggest');
  t.is(r(3, -7), -7);
  t.is(r(-7, 3), -7);
  t.is(r(5, -5), 5);
  t.is(r(-5, 5), 5);
  t.is(r(null, 2), 2);
  t.is(r(NaN, 2), 2);
  t.is(r(10n ** 19n, 5), 10n ** 19n);
  t.is(conflictResolver('abs_smallest')(3, -7), 3);
  t.is(conflictResolver('biggest')(3, -7), 3);
  t.is(conflictResolver('smallest')(3, -7), -7);
  fc.assert(
    fc.property(fc.double({ noNaN: true }), fc.double({ noNaN: true }), (a, b) => Object.is(r(a, b), r(b, a)) || (a === b)),
  );
});

test('normalising sorts by time and resolves collisions', (t) => {
  const s = normalizeNumeric({ ts: [30, 10, 20, 10], values: [3, 1, 2, -9] }, sampleCombiner('abs_biggest'));
  t.deepEqual(s, { ts: [10, 20, 30], values: [-9, 2, 3] });
  t.deepEqual(normalizeLastWins({ ts: [5, 5, 1], values: ['a', 'b', 'c'] }), { ts: [1, 5], values: ['c', 'b'] });
  t.deepEqual(sliceSeries({ ts: [1, 2, 3, 4], values: [1, 2, 3, 4] }, 2, 4), { ts: [2, 3], values: [2, 3] });
});

test('last_* resolvers: the higher generation wins, equal generations fall back', (t) => {
  const last = sampleCombiner('last_abs_biggest');
  t.deepEqual(last({ value: 1000, gen: 0 }, { value: 5, gen: 2 }), { value: 5, gen: 2 });
  t.deepEqual(last({ value: 5, gen: 2 }, { value: 1000, gen: 0 }), { value: 5, gen: 2 }, 'whatever the order');
  t.deepEqual(last({ value: -7, gen: 1 }, { value: 3, gen: 1 }), { value: -7, gen: 1 });
  t.deepEqual(sampleCombiner('last_smallest')({ value: 1, gen: -1 }, { value: 9, gen: 0 }), { value: 9, gen: 0 }, 'int16 generations may be negative');
  t.deepEqual(sampleCombiner('abs_biggest')({ value: 5, gen: 2 }, { value: 1000, gen: 0 }), { value: 1000, gen: 2 }, 'plain resolvers ignore generations');
  const s = normalizeNumeric({ ts: [20, 10, 10, 20], values: [1, 50, 2, 60], gens: [1, 0, 3, 0] }, last);
  t.deepEqual(s, { ts: [10, 20], values: [2, 1], gens: [3, 1] });
});

test('text reads are front-edge triggered with a lead row', (t) => {
  const s = { ts: [100, 200, 300, 400, 500, 600], values: ['a', 'a', 'b', 'b', 'b', 'c'] };
  const read = (start: number, end: number, specificRange = false, lead = true) => selectTextRows(s, { start, end, specificRange, lead });
  t.deepEqual(read(0, 1000), [[100, 'a'], [300, 'b'], [600, 'c']]);
  // No sample at 450: the lead is the first sample of the run in force (300), and 500 repeats it.
  t.deepEqual(read(450, 1000), [[300, 'b'], [600, 'c']]);
  t.deepEqual(read(400, 1000), [[400, 'b'], [600, 'c']], 'a sample exactly at start: no lead');
  t.deepEqual(read(450, 1000, false, false), [[500, 'b'], [600, 'c']]);
  t.deepEqual(read(200, 500, true), [[200, 'a'], [300, 'b'], [400, 'b']], 'specific range: every sample, end exclusive');
  t.deepEqual(read(0, 50), [], 'nothing before or in range');
});

test('journal entries round-trip every value kind', (t) => {
  const metric = {
    key: 'u-m' as MetricKey,
    accountId: 1 as AccountId,
    uuid: 'u',
    checkName: 'c_1_2::x',
    name: { name: 'm', tags: [], canonical: 'm' },
  };
  const at = (ms: number) => ms as EpochMs;
  const records: IngestRecord[] = [
    { kind: 'numeric', metric, ts: at(1), value: 1.5 },
    { kind: 'numeric', metric, ts: at(2), value: NaN },
    { kind: 'numeric', metric, ts: at(3), value: -Infinity },
    { kind: 'numeric', metric, ts: at(4), value: 18446744073709551615n },
    { kind: 'numeric', metric, ts: at(5), value: null },
    { kind: 'numeric', metric, ts: at(5), value: null, generation: 4 },
    { kind: 'numeric', metric, ts: at(5), value: 2, generation: -3 },
    { kind: 'text', metric, ts: at(6), value: 'tab\there "quoted"' },
    { kind: 'text', metric, ts: at(7), value: null },
    { kind: 'histogram', metric, ts: at(8), value: 'AAFQ/gAB' },
  ];
  const back = decodeJournalEntry(encodeJournalEntry(records));
  t.deepEqual(back.metrics, [{ accountId: 1, uuid: 'u', checkName: 'c_1_2::x', canonical: 'm' }]);
  t.deepEqual(
    back.records.map((r) => [r.kind, r.ts, r.value, r.generation ?? 0]),
    records.map((r) => [r.kind, r.ts, r.value, r.kind === 'numeric' ? (r.generation ?? 0) : 0]),
  );
});

test('raw journal entries keep their parse context, and the keys of refused series when there are any', (t) => {
  const body = Buffer.from('M\t1.000\tx\tm\tn\t1');
  const ctx: RawContext = { latestAllowed: 5000 as EpochMs, textSizeLimit: 512, headerAccount: 7 as AccountId };
  const plain = encodeRawJournalEntry('tsv', ctx, body);
  t.is(plain[0], 0x01);
  t.deepEqual(decodeJournal(plain), { raw: true, format: 'tsv', ctx, body });
  const limited = encodeRawJournalEntry('metriclist', { ...ctx, headerAccount: null, limited: ['u-a', 'u-b|ST[c:d]'] }, body);
  t.is(limited[0], 0x02);
  t.deepEqual(decodeJournal(limited), { raw: true, format: 'metriclist', ctx: { ...ctx, headerAccount: null, limited: ['u-a', 'u-b|ST[c:d]'] }, body });
  // An empty list is written as no list.
  t.is(encodeRawJournalEntry('tsv', { ...ctx, limited: [] }, body)[0], 0x01);
});

test('journal entries of a kilobyte or more are kept as zstd when smaller, and decode as they were', async (t) => {
  const ctx: RawContext = { latestAllowed: 5000 as EpochMs, textSizeLimit: 512, headerAccount: 7 as AccountId };
  const lines = Array.from({ length: 400 }, (_, i) => `M\t${1000 + i}.000\tbench\`c_1::bench\`1b988fd7-d1e1-48ec-848e-55709511d43f\tbench.metric.${i}|ST[host:h${i % 7}]\tn\t${i / 8}`);
  const body = Buffer.from(lines.join('\n'));
  for (const entry of [encodeRawJournalEntry('tsv', ctx, body), encodeRawJournalEntry('tsv', { ...ctx, limited: ['u-a'] }, body), Buffer.from(encodeJournalEntry(jsonRecords(300)))]) {
    const kept = await journalForm(entry);
    t.is(kept[0], 0x05);
    t.true(kept.length * 5 < entry.length, `${entry.length} bytes kept in ${kept.length}`);
    t.deepEqual(decodeJournal(kept), decodeJournal(entry));
  }
  // Small entries, and ones zstd cannot shrink, stay as they are.
  const small = encodeRawJournalEntry('tsv', ctx, body.subarray(0, JOURNAL_ZSTD_MIN - 100));
  t.is(await journalForm(small), small);
  const noise = encodeRawJournalEntry('tsv', ctx, randomBytes(4096));
  t.is(await journalForm(noise), noise);
  // A frame inside a frame is not an entry this release writes.
  const twice = Buffer.concat([Buffer.from([0x05]), zstdCompressSync(await journalForm(encodeRawJournalEntry('tsv', ctx, body)))]);
  t.throws(() => decodeJournal(twice), { message: /compressed twice/ });
});

function jsonRecords(n: number): IngestRecord[] {
  const metric = { key: 'u-json' as MetricKey, accountId: 1 as AccountId, uuid: '1b988fd7-d1e1-48ec-848e-55709511d43f', checkName: 'c', name: { name: 'json.metric', tags: [], canonical: 'json.metric' } };
  return Array.from({ length: n }, (_, i): IngestRecord => ({ kind: 'numeric', metric, ts: (1000 + i) as EpochMs, value: i / 4 }));
}

test('a body read with headroom becomes its journal entry where it lies; one without is copied', (t) => {
  const text = Buffer.from('M\t1.000\tx\tm\tn\t1');
  const ctx: RawContext = { latestAllowed: 5000 as EpochMs, textSizeLimit: 512, headerAccount: null };
  const roomy = allocWithHeadroom(RAW_HEADROOM, text.length);
  text.copy(roomy);
  const entry = encodeRawJournalEntry('tsv', ctx, roomy);
  t.is(entry.buffer, roomy.buffer, 'the header went into the room in front');
  t.is(entry.byteOffset + RAW_HEADROOM, roomy.byteOffset);
  t.deepEqual(decodeJournal(entry), { raw: true, format: 'tsv', ctx, body: text });
  t.deepEqual(roomy, text, 'the body itself is untouched');
  // A limited context's header is longer than the room: copied, the body untouched.
  const limited = encodeRawJournalEntry('tsv', { ...ctx, limited: ['u-a'] }, roomy);
  t.deepEqual(decodeJournal(limited), { raw: true, format: 'tsv', ctx: { ...ctx, limited: ['u-a'] }, body: text });
  t.deepEqual(decodeJournal(entry), { raw: true, format: 'tsv', ctx, body: text }, 'the in-place entry is left as it was');
  // A slice of some other buffer has no room, whatever its offset.
  const pooled = Buffer.concat([Buffer.alloc(RAW_HEADROOM, 0x55), text]).subarray(RAW_HEADROOM);
  t.is(headroomOf(pooled), 0);
  t.deepEqual(decodeJournal(encodeRawJournalEntry('tsv', ctx, pooled)), { raw: true, format: 'tsv', ctx, body: text });
  t.true(Buffer.from(pooled.buffer, pooled.byteOffset - RAW_HEADROOM, RAW_HEADROOM).every((b) => b === 0x55), 'the bytes before a slice are never written');
});
