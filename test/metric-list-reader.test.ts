import test from 'ava';
import fc from 'fast-check';
import { decodeMetricList } from '../model/metric-list/decode.js';
import { SafeReader } from '../model/metric-list/reader.js';
import { buildV2 } from './helpers/metric-list.js';

test('u64Number is Number(u64) for every 64-bit value, without a BigInt', (t) => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.nat(7), (value, pad) => {
      const bytes = new Uint8Array(pad + 8);
      new DataView(bytes.buffer).setBigUint64(pad, value, true);
      const r = new SafeReader(bytes);
      t.is(r.u64Number(pad), Number(r.u64(pad)));
    }),
  );
});

test('u64Number is bounds-checked like u64', (t) => {
  t.throws(() => new SafeReader(new Uint8Array(7)).u64Number(0), { message: /ulong \(8 bytes\) runs past the end/ });
});

test('names come back exactly as written however often their bytes repeat across bodies (the name memo)', (t) => {
  const part = fc.constantFrom('a', 'b', 'ab', 'a:b', 'b:a', 'é', 'x:é');
  const point = fc.record({ name: part, tags: fc.option(fc.array(part.filter((p) => p.includes(':')), { maxLength: 3 }), { nil: undefined }) });
  fc.assert(
    fc.property(fc.array(point, { minLength: 1, maxLength: 8 }), (points) => {
      const list = decodeMetricList(buildV2(points.map((p) => ({ ...p, value: { t: 'int', v: 1 } }))));
      const expected = points.map((p) => (p.tags === undefined || p.tags.length === 0 ? p.name : `${p.name}|ST[${p.tags.join(',')}]`));
      t.deepEqual(list.samples.map((s) => s.name), expected);
    }),
    { numRuns: 300 },
  );
});

test('bytes that match a remembered name except for invalid UTF-8 are still refused', (t) => {
  const name = 'memo.check.name';
  t.is(decodeMetricList(buildV2([{ name, value: { t: 'int', v: 1 } }])).samples[0]!.name, name);
  const body = Buffer.from(buildV2([{ name, value: { t: 'int', v: 1 } }]));
  const at = body.indexOf(name);
  body[at + 4] = 0xff;
  t.throws(() => decodeMetricList(body), { message: /not valid UTF-8/ });
});
