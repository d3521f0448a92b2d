// model/metric-key.ts: a metric's storage id and partition are fixed by its key for the life of
// every data dir (they are in every storage key), so placement must never change bits.
import test from 'ava';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { metricKey, placeMetric } from '../model/metric-key.js';

/** Placement as defined: the first 16 bytes of SHA-256(key), and the next four (big-endian) modulo the partitions. */
function reference(key: string, partitions: number): { idHex: string; partition: number } {
  const digest = createHash('sha256').update(key, 'utf8').digest();
  return { idHex: digest.subarray(0, 16).toString('hex'), partition: digest.readUInt32BE(16) % partitions };
}

test('a known key places where it always has', (t) => {
  const p = placeMetric(metricKey('1B988FD7-D1E1-48EC-848E-55709511D43F', 'scale.metric7|ST[host:h7]'), 16);
  const r = reference('1b988fd7-d1e1-48ec-848e-55709511d43f-scale.metric7|ST[host:h7]', 16);
  t.is(p.idHex, r.idHex);
  t.is(p.partition, r.partition);
  t.deepEqual(p.id, Buffer.from(r.idHex, 'hex'));
});

test('id, hex id and partition agree with the definition for any key and partition count', (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: 1, max: 4096 }), (key, partitions) => {
      const p = placeMetric(key as never, partitions);
      const r = reference(key, partitions);
      return p.idHex === r.idHex && p.id.toString('hex') === r.idHex && p.id.length === 16 && p.partition === r.partition;
    }),
    { numRuns: 2000, seed: 31 },
  );
  t.pass();
});
