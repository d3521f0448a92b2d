// actors/node/admission.ts: the write latency budget — over it, new writes are refused while
// others are in flight; a write always gets through when none is, and old figures expire.
import test from 'ava';
import { IngestAdmission } from '../../actors/node/admission.js';

function admission(budget: number, floor?: number) {
  const clock = { now: 1_000_000 };
  const a = new IngestAdmission({ maxBytes: 1 << 30, maxPendingRecords: 1 << 30, latencyBudgetMs: budget, latencyFloorWrites: floor }, () => clock.now);
  return { a, clock };
}

test('writes are refused while the recent p99 is over the budget and another write is in flight', (t) => {
  const { a, clock } = admission(1_000);
  for (let i = 0; i < 100; i++) a.acknowledged(i < 98 ? 50 : 5_000);
  t.is(a.recentP99(), 5_000, 'two slow writes in a hundred: the p99 is theirs');
  t.is(a.admit(100), null, 'nothing in flight: admitted');
  t.regex(a.admit(100) ?? '', /5000 ms at p99, over the write latency budget of 1000 ms/);
  t.is(a.refused, 1);
  a.release(100);
  clock.now += 5_001;
  t.is(a.admit(100), null, 'the slow writes left the window');
  t.is(a.admit(100), null);
});

test('over the budget, writes below the floor of writes in flight are still admitted; past it they are refused', (t) => {
  const { a } = admission(1_000, 3);
  for (let i = 0; i < 100; i++) a.acknowledged(5_000);
  for (let i = 0; i < 3; i++) t.is(a.admit(100), null, `write ${i + 1} of the floor's 3`);
  t.regex(a.admit(100) ?? '', /over the write latency budget/);
  a.release(100);
  t.is(a.admit(100), null, 'one finished: room for one more');
});

test('within the budget, or with the budget off, nothing is refused for latency', (t) => {
  const within = admission(1_000);
  for (let i = 0; i < 100; i++) within.a.acknowledged(900);
  const off = admission(0);
  for (let i = 0; i < 100; i++) off.a.acknowledged(60_000);
  for (const { a } of [within, off]) {
    t.is(a.admit(1), null);
    t.is(a.admit(1), null);
  }
  t.deepEqual(off.a.report().write_latency_budget_ms, 0);
});

function backlog(maxQueueMs: number) {
  return new IngestAdmission({ maxBytes: 1 << 30, maxPendingRecords: 100, latencyBudgetMs: 0, maxQueueMs });
}

test('behind the shards\' backlog a write waits for room, then is admitted', async (t) => {
  const a = backlog(10_000);
  t.true(await a.roomToApply(), 'no backlog: room at once');
  a.dispatched(150);
  const waiting = a.roomToApply();
  t.is(a.queued, 1);
  a.applied(40);
  t.is(a.queued, 1, '110 still wait: no room yet');
  a.applied(20);
  t.true(await waiting);
  t.is(a.queued, 0);
  t.is(a.admit(10), null);
  t.is(a.refused, 0);
});

test('a write that waits past maxQueueMs, or with waiting off, is refused naming the backlog', async (t) => {
  const a = backlog(20);
  a.dispatched(100);
  t.false(await a.roomToApply(), 'no room within 20 ms');
  t.is(a.queued, 0);
  t.regex(a.admit(10) ?? '', /100 records wait to be applied/);
  const off = backlog(0);
  off.dispatched(100);
  t.false(await off.roomToApply(), 'waiting off: at once');
  t.regex(off.admit(10) ?? '', /records wait to be applied/);
});

test('at most 256 writes wait at once; the next is answered at once', async (t) => {
  const a = backlog(60_000);
  a.dispatched(100);
  const waiting = Array.from({ length: 256 }, () => a.roomToApply());
  t.is(a.queued, 256);
  t.false(await a.roomToApply());
  a.applied(100);
  t.deepEqual(new Set(await Promise.all(waiting)), new Set([true]));
  t.is(a.queued, 0);
});

test('near a heap\'s pressure share the shards may hold only a short backlog: writes wait for it to drain', async (t) => {
  const a = new IngestAdmission({ maxBytes: 1 << 30, maxPendingRecords: 1_000_000, latencyBudgetMs: 0, maxQueueMs: 10_000, memoryPressureShare: 0.5 });
  a.dispatched(20_000);
  t.true(await a.roomToApply(), 'heaps far from the share: 20 000 records are a small backlog');
  a.heapOf('shard 0', 0.4);
  const waiting = a.roomToApply();
  t.is(a.queued, 1, '0.4 is three quarters of the way to 0.5: 20 000 waiting records are too many');
  a.applied(12_000);
  t.true(await waiting, 'under 10 000 left: room');
  t.is(a.admit(1), null, 'and no refusal: 0.4 is not yet pressure');
});

test('the process\'s resident memory over its share of memoryLimitBytes refuses writes, naming both figures; below it, writes pass', (t) => {
  const rss = process.memoryUsage.rss();
  const tight = new IngestAdmission({ maxBytes: 1 << 30, maxPendingRecords: 1_000_000, latencyBudgetMs: 0, memoryPressureShare: 0.85, memoryLimitBytes: rss });
  const why = tight.admit(1);
  t.regex(why ?? '', /^memory pressure: the node's resident memory is \d+ MiB, \d+ % of its \d+ MiB \(memoryLimitMb\), over 85 % \(memoryPressureShare\)/);
  t.is(tight.report().memory_limit_mb, Math.round(rss / 2 ** 20));
  t.is(tight.report().memory_pressure, why);
  const roomy = new IngestAdmission({ maxBytes: 1 << 30, maxPendingRecords: 1_000_000, latencyBudgetMs: 0, memoryPressureShare: 0.85, memoryLimitBytes: rss * 100 });
  t.is(roomy.admit(1), null);
  const off = new IngestAdmission({ maxBytes: 1 << 30, maxPendingRecords: 1_000_000, latencyBudgetMs: 0, memoryPressureShare: 0, memoryLimitBytes: rss });
  t.is(off.admit(1), null, 'memoryPressureShare 0 turns the resident check off too');
});
