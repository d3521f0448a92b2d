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

test('numberOf finds a known id and numbers a new one, as find and add do, ids sharing hash bytes included', (t) => {
  const table = new IdTable();
  const clashing = (i: number) => {
    const id = Buffer.alloc(16, 9);
    id.writeUInt16BE(i, 12);
    return id;
  };
  // Random ids and ids with one hash (long probe runs), asked in a shuffled order with repeats, past growths.
  const ids = [...Array.from({ length: 20_000 }, () => randomBytes(16)), ...Array.from({ length: 400 }, (_, i) => clashing(i))];
  const asked = Array.from({ length: 60_000 }, (_, k) => ids[(k * 7919) % ids.length]!);
  const numbered = new Map<string, number>();
  for (const id of asked) {
    const key = id.toString('hex');
    const n = table.numberOf(id);
    if (!numbered.has(key)) {
      t.is(n, numbered.size, 'a new id gets the next number');
      numbered.set(key, n);
    } else t.is(n, numbered.get(key)!);
  }
  t.is(table.size, numbered.size);
  t.true([...numbered].every(([hex, n]) => table.find(Buffer.from(hex, 'hex')) === n));
  t.is(table.add(randomBytes(16)), numbered.size, 'add still numbers after numberOf');
});
