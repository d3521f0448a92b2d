// actors/ingest/wire.ts: a body's new metrics travel from a parse worker to their shards as one
// buffer per shard (each check once beside it), and arrive as the worker named them (key and parsed
// name derived again); its samples as one buffer per shard.
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import test from 'ava';
import fc from 'fast-check';
import { declarationTransfers, packDeclarations, packParts, partTransfers, unpackDeclarations, type Declarations, type NewMetric, type SidColumns } from '../actors/ingest/wire.js';
import { metricKey, placeMetric } from '../model/metric-key.js';
import { canonicalizeMetricName } from '../model/metric-name.js';
import type { AccountId } from '../model/types.js';

const UUIDS = ['0a2a3f6c-0000-4000-8000-000000000001', '0A2A3F6C-0000-4000-8000-00000000000B'];
const part = fc.stringMatching(/^[a-z0-9._`:|=-]{0,8}$/);
const tag = fc.oneof(
  fc.tuple(fc.stringMatching(/^[a-z][a-z0-9_]{0,5}$/), fc.option(part, { nil: null })).map(([c, v]) => (v === null ? c : `${c}:${v}`)),
  fc.string({ maxLength: 6 }).map((v) => `enc:b"${Buffer.from(v).toString('base64')}"`),
);
const rawName = fc.tuple(fc.stringMatching(/^[a-z][a-z0-9._]{0,10}$/), fc.array(tag, { maxLength: 4 })).map(([n, tags]) => (tags.length === 0 ? n : `${n}|ST[${tags.join(',')}]`));

function named(sid: number, accountId: number, uuid: string, checkName: string, raw: string): NewMetric | null {
  const parsed = canonicalizeMetricName(raw);
  if (!parsed.ok) return null;
  const key = metricKey(uuid, parsed.value.canonical);
  const { id, partition } = placeMetric(key, 24);
  return { sid, key, accountId: accountId as AccountId, uuid, checkName, name: parsed.value, idHex: id.toString('hex'), partition };
}

/** What the worker hands `packDeclarations` of a metric it names. */
const declared = (m: NewMetric) => ({ sid: m.sid, accountId: m.accountId, uuid: m.uuid, checkName: m.checkName, canonical: m.name.canonical, id: Buffer.from(m.idHex, 'hex'), partition: m.partition });

/** `d` as a shard receives it: through a message port, its buffer transferred. */
function sent(d: Declarations): Declarations {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(d, declarationTransfers([d]));
  const got = receiveMessageOnPort(port2)!.message as Declarations;
  port1.close();
  return got;
}

/** A declared metric read through the interface: it makes its key and name parts when asked. */
const asNew = (m: NewMetric): NewMetric => ({ sid: m.sid, key: m.key, accountId: m.accountId, uuid: m.uuid, checkName: m.checkName, name: m.name, idHex: m.idHex, partition: m.partition });

test('declarations unpack to the metrics the worker named, per shard, whatever their names and checks', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom(1, 7), fc.constantFrom(...UUIDS), fc.constantFrom('c_1_1::http', 'other'), rawName), { maxLength: 40 }), fc.integer({ min: 1, max: 4 }), (specs, shards) => {
      const fresh = specs.flatMap(([account, uuid, check, raw], sid) => named(sid, account, uuid, check, raw) ?? []);
      const packed = packDeclarations(fresh.map(declared), shards);
      const back = packed.flatMap((d) => unpackDeclarations(sent(d)).map((m) => ({ shard: d.shard, m })));
      t.true(back.every(({ shard, m }) => m.partition % shards === shard));
      t.deepEqual(back.map(({ m }) => asNew(m)).sort((a, b) => a.sid - b.sid), fresh);
    }),
    { numRuns: 300 },
  );
});

test('a check named by many metrics is written once in their declarations', (t) => {
  const fresh = Array.from({ length: 100 }, (_, i) => named(i, 1, UUIDS[0]!, 'c_1_1::http', `m${i}|ST[host:h${i}]`)!);
  const [d] = packDeclarations(fresh.map(declared), 1);
  t.deepEqual(d!.checks, [[1, UUIDS[0], 'c_1_1::http']]);
  t.is(d!.count, 100);
});

test('names in any script, and a buffer cloned as a view at any offset, unpack as named', (t) => {
  const fresh = ['température|ST[host:b"aOKYgw=="]', '日本語のメトリック|ST[zone:b"5p2x5Lqs"]', 'plain', 'emoji😀.count'].map((raw, sid) => named(sid, 1, UUIDS[1]!, 'c_1_1::http', raw));
  t.true(fresh.every((m) => m !== null), 'every name canonicalises');
  const [d] = packDeclarations(fresh.map((m) => declared(m!)), 1);
  // Copied (not transferred) as a view three bytes into a larger buffer: the words are not aligned.
  const offset = new Uint8Array(d!.bytes.byteLength + 3);
  offset.set(d!.bytes, 3);
  t.deepEqual(unpackDeclarations({ ...d!, bytes: offset.subarray(3) }).map(asNew), fresh);
  t.deepEqual(unpackDeclarations(sent(d!)).map(asNew), fresh);
});

test('parts are packed into one buffer per shard, each column as the worker filled it', (t) => {
  fc.assert(
    fc.property(fc.array(fc.array(fc.tuple(fc.nat(1000), fc.double(), fc.double()), { maxLength: 40 }), { minLength: 1, maxLength: 9 }), fc.integer({ min: 1, max: 4 }), (lists, shards) => {
      // Columns with room to spare, as a worker's are: only `length` of them is the partition's.
      const columns: [number, SidColumns][] = lists.map((rows, partition) => {
        const ts = new Float64Array(rows.length + 3);
        const values = new Float64Array(rows.length + 3);
        rows.forEach(([, x, v], i) => ((ts[i] = x), (values[i] = v)));
        return [partition, { metrics: rows.map(([sid]) => sid), ts, values, length: rows.length, others: [] }];
      });
      const parts = packParts(columns, (p) => p % shards);
      t.deepEqual(parts.map((p) => p.partition), lists.map((_, p) => p).sort((a, b) => (a % shards) - (b % shards) || a - b));
      for (const part of parts) {
        const rows = lists[part.partition]!;
        t.deepEqual([...part.sids], rows.map(([sid]) => sid));
        t.true(rows.every(([, x, v], i) => Object.is(part.ts[i], x) && Object.is(part.values[i], v)));
        // Every part of a shard shares its buffer, no other shard's does.
        for (const other of parts) t.is(other.ts.buffer === part.ts.buffer, other.partition % shards === part.partition % shards);
      }
      t.is(partTransfers(parts).length, new Set(lists.map((_, p) => p % shards)).size);
    }),
    { numRuns: 200 },
  );
});
