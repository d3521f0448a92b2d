// model/metric-check.ts: one object per check, shared by its metrics, reading back as given.
import test from 'ava';
import { CheckTable } from '../model/metric-check.js';
import type { AccountId } from '../model/types.js';

test('metrics of one check share one check object; other checks get their own', (t) => {
  const checks = new CheckTable();
  const a = checks.of(1 as AccountId, '0b0b0b0b-0000-4000-8000-000000000001', 'web');
  t.is(checks.of(1 as AccountId, '0b0b0b0b-0000-4000-8000-000000000001', 'web'), a);
  t.not(checks.of(2 as AccountId, '0b0b0b0b-0000-4000-8000-000000000001', 'web'), a, 'another account');
  t.not(checks.of(1 as AccountId, '0b0b0b0b-0000-4000-8000-000000000001', 'db'), a, 'another check name');
  // Asked right after the check before it (the last one is kept aside): each field still tells them apart.
  t.is(checks.of(1 as AccountId, '0b0b0b0b-0000-4000-8000-000000000001', 'web'), a);
  t.not(checks.of(1 as AccountId, '0b0b0b0b-0000-4000-8000-000000000002', 'web'), a, 'another uuid');
  t.is(checks.of(1 as AccountId, '0b0b0b0b-0000-4000-8000-000000000001', 'web'), a);
  t.not(checks.of(3 as AccountId, '0b0b0b0b-0000-4000-8000-000000000001', 'web'), a, 'another account, right after');
  t.deepEqual(a, { accountId: 1, uuid: '0b0b0b0b-0000-4000-8000-000000000001', checkName: 'web' });
});

test('checks are numbered in the order first asked for, and read back by number', (t) => {
  const checks = new CheckTable();
  const uuid = '0b0b0b0b-0000-4000-8000-000000000001';
  t.is(checks.numberOf(1 as AccountId, uuid, 'web'), 0);
  t.is(checks.numberOf(1 as AccountId, uuid, 'db'), 1);
  t.is(checks.numberOf(1 as AccountId, uuid, 'web'), 0, 'asked again, not right after');
  t.is(checks.numberOf(1 as AccountId, uuid, 'web'), 0, 'asked right after');
  t.is(checks.numberOf(2 as AccountId, uuid, 'web'), 2);
  t.deepEqual(checks.at(1), { accountId: 1, uuid, checkName: 'db' });
  t.is(checks.at(0), checks.of(1 as AccountId, uuid, 'web'));
});
