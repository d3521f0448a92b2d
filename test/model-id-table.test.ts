// model/id-table.ts: storage ids to dense numbers in typed memory.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { IdTable } from '../model/id-table.js';

test('ids get the numbers 0, 1, 2… in order and are found again past many growths; others are not found', (t) => {
  const table = new IdTable();
  const ids = Array.from({ length: 50_000 }, () => randomBytes(16));
  ids.forEach((id, i) => t.is(table.add(id), i));
  t.is(table.size, ids.length);
  t.true(ids.every((id, i) => table.find(id) === i));
  t.true(Array.from({ length: 1000 }, () => randomBytes(16)).every((id) => table.find(id) === -1));
});

test('ids that share their hash bytes, or differ only in their last byte, are told apart; bytes past 16 are ignored', (t) => {
  const table = new IdTable();
  const base = Buffer.alloc(16, 7);
  const variants = Array.from({ length: 300 }, (_, i) => {
    const id = Buffer.from(base);
    id.writeUInt16BE(i, 14);
    return id;
  });
  variants.forEach((id) => table.add(id));
  t.true(variants.every((id, i) => table.find(id) === i));
  const longer = Buffer.concat([variants[5]!, Buffer.from([1, 2, 3])]);
  t.is(table.find(longer), 5);
  const other = Buffer.from(base);
  other[15] = 0xff;
  other[14] = 0xff;
  t.is(table.find(other), -1);
});
